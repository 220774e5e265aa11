import type { SecretGrant, TokenGrant } from '../domain/account';
import type { RedisRegistry } from '../registry/registry';
import type { OptionSpec, ParsedArgs } from './args';
import type { FiguresStore } from '../bridge/figures';
import type { Redis } from 'ioredis';
import type { Config } from '../config';
import { credentialId } from '../registry/credentials';
import type { OwnerCallbacks } from '../callbacks/owner-callbacks';
import type { OwnerChangeWithdrawal } from '../bridge/owner-change';

/** What every admin verb is, and the ways verbs show what they did. */

/** What a verb needs at run time. The registry connects on first use, so a usage error never touches Redis. */
export interface VerbContext {
  registry(): Promise<RedisRegistry>;
  /** The account figures bridges sent (same Redis as the registry). */
  figures(): Promise<FiguresStore>;
  /** The owners' callback endpoints and attempts (same Redis; the CALLBACK_* settings of the environment). */
  callbacks(): Promise<OwnerCallbacks>;
  /** Reads standard input to the end (for `--secret -` and `--token -`). */
  readStdin(): Promise<string>;
  now(): number;
  /** The registry's Redis itself (owners, sessions: the same Redis). */
  redis(): Promise<Redis>;
  /**
   * After an account changed owner: withdraws its commands no bridge has taken, and tells their workflows (Temporal of
   * the environment's TEMPORAL_* settings, reached only when there is one to tell).
   */
  withdrawForOwnerChange(accountId: string, region: string): Promise<OwnerChangeWithdrawal>;
  /** The service's address for the links a verb prints (src/owners/public-url.ts), without a trailing slash. */
  publicUrl(): Promise<string>;
  config: Config;
}

/** A verb's result: human text for a terminal, a value for `--json`. */
interface VerbResult {
  human: string;
  json: unknown;
}

export interface Verb {
  /** The verb words, e.g. ['secret', 'create']. */
  words: string[];
  usage: string;
  summary: string;
  options: OptionSpec;
  run(args: ParsedArgs, ctx: VerbContext): Promise<VerbResult>;
}

export const idOf = credentialId;

export const ONCE = 'This is the only time it is shown: store it now.';

export const secretView = (g: SecretGrant) => ({ id: idOf(g.hash), owner: g.owner, accounts: g.accounts });
export const tokenView = (g: TokenGrant) => ({ id: idOf(g.hash), owner: g.owner ?? null, accounts: g.accounts, suspendedUntil: g.suspendedUntil });

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}
