import type { Redis } from 'ioredis';
import { accountSchema, type Account } from '../domain/account';

/** How the registry's records are laid out in Redis: the keys, and an account as a hash of JSON texts. */

export const key = {
  account: (id: string) => `es:account:${id}`,
  accounts: 'es:accounts',
  secret: (hash: string) => `es:secret:${hash}`,
  token: (hash: string) => `es:token:${hash}`,
  bridge: (hash: string) => `es:bridge:${hash}`,
  accountBridge: (id: string) => `es:account-bridge:${id}`,
  /** A bridge token replaced by a new one, kept a week so a bridge still calling with it is told apart from a stranger. */
  retiredBridge: (hash: string) => `es:bridge-retired:${hash}`,
  /** The operator's cap on the accounts an owner may have when adding one (absent: the configured default). */
  accountCap: (owner: string) => `es:owner-account-cap:${owner}`,
  /** What the owner's page says of the bridge's calls (src/bridge/bridge-state.ts); cleared when the owner changes. */
  bridgeState: (id: string) => `es:bridge-state:{${id}}`,
  /** When the account's bridge was last seen (src/bridge/presence.ts); cleared when the owner changes. */
  bridgeSeen: (id: string) => `es:bridge-seen:{${id}}`,
  instruments: (id: string) => `es:instruments:{${id}}`,
};

/** An account as hash fields: each top-level field's JSON text. */
export function accountFields(fields: Partial<Account>): string[] {
  return Object.entries(fields).flatMap(([name, value]) => (value === undefined ? [] : [name, JSON.stringify(value)]));
}

export function accountFromFields(fields: Record<string, string>): Account {
  return accountSchema.parse(Object.fromEntries(Object.entries(fields).map(([name, text]) => [name, JSON.parse(text) as unknown])));
}

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
