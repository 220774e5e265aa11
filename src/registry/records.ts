import type { Redis } from 'ioredis';
import { accountSchema, type Account, type MadeByOwner } from '../domain/account';
import { registryKeys } from '../redis-keys';

/** How the registry's records are laid out in Redis: the keys, and an account as a hash of JSON texts. */

export const key = {
  account: registryKeys.account,
  accounts: registryKeys.accounts,
  secret: registryKeys.secret,
  token: registryKeys.token,
  bridge: registryKeys.bridgeToken,
  accountBridge: registryKeys.accountBridgeToken,
  /** A bridge token replaced by a new one, kept a week so a bridge still calling with it is told apart from a stranger. */
  retiredBridge: registryKeys.retiredBridgeToken,
  /** The operator's cap on the accounts an owner may have when adding one (absent: the configured default). */
  accountCap: registryKeys.ownerAccountCap,
  /** What the owner's page says of the bridge's calls (src/bridge/bridge-state.ts); cleared when the owner changes. */
  bridgeState: registryKeys.bridgeState,
  /** When the account's bridge was last seen (src/bridge/presence.ts); cleared when the owner changes. */
  bridgeSeen: registryKeys.bridgeSeen,
  /** What the bridge announced in hello; cleared when the owner changes (another terminal may then connect). */
  bridgeAnnounced: registryKeys.bridgeAnnounced,
  instruments: registryKeys.instruments,
};

/** An account as hash fields: each top-level field's JSON text. */
export function accountFields(fields: Partial<Account>): string[] {
  return Object.entries(fields).flatMap(([name, value]) => (value === undefined ? [] : [name, JSON.stringify(value)]));
}

export function accountFromFields(fields: Record<string, string>): Account {
  return accountSchema.parse(Object.fromEntries(Object.entries(fields).map(([name, text]) => [name, JSON.parse(text) as unknown])));
}

/** A bridge token's record (`es:bridge:<hash>`); how the owner made it, when the owner did (older records: never). */
export interface BridgeTokenRecord extends Partial<MadeByOwner> {
  accountId: string;
  hash: string;
}

export const bridgeRecord = (accountId: string, hash: string, made?: MadeByOwner): string =>
  JSON.stringify({ accountId, hash, ...made } satisfies BridgeTokenRecord);

export const isWrongType = (err: unknown): boolean => err instanceof Error && err.message.startsWith('WRONGTYPE');

/** Every key matching `pattern`, by SCAN (never KEYS: a large registry must not stall Redis). */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    for (const k of batch) keys.add(k);
    cursor = next;
  } while (cursor !== '0');
  return [...keys];
}
