import type { Redis } from 'ioredis';
import type { Account, SecretGrant, TokenGrant } from '../domain/account';
import type { OwnerIndex } from './owner-index';
import { key, scanKeys } from './records';
import { convertLegacyAccount } from './writes';

/**
 * Bringing a registry written by an older version up to date (`admin migrate`, `admin index-owners`): what the
 * registry reads and writes for it, named here so that this module needs nothing of registry.ts.
 */
interface MigratedRegistry {
  readonly ownerIndex: OwnerIndex;
  getAccounts(ids: readonly string[]): Promise<(Account | null)[]>;
  listAccountIds(): Promise<string[]>;
  findSecretsByHashPrefix(prefix: string): Promise<SecretGrant[]>;
  findTokensByHashPrefix(prefix: string): Promise<TokenGrant[]>;
  modifyToken(hash: string, change: (grant: TokenGrant) => TokenGrant | null): Promise<TokenGrant | null>;
}

/** The one owner of these accounts; undefined when they have several, or none exists. */
export function soleOwner(accounts: readonly (Account | null)[]): string | undefined {
  const owners = new Set(accounts.map((a) => a?.owner));
  const [owner] = owners;
  return owners.size === 1 ? owner : undefined;
}

/**
 * Brings a registry written before field-level updates and token owners up to date (idempotent): accounts stored
 * as one JSON string become hashes; a token without an owner gets the one owner of its accounts, and one that
 * spans several owners (or none) is revoked, as it would show one owner's outcomes to another.
 */
export async function migrateRegistry(
  redis: Redis,
  registry: MigratedRegistry,
): Promise<{ accountsConverted: number; tokensOwned: number; tokensRevoked: string[] }> {
  let accountsConverted = 0;
  for (const k of await scanKeys(redis, key.account('*'))) {
    if ((await redis.type(k)) === 'string' && (await convertLegacyAccount(redis, k.slice(key.account('').length)))) accountsConverted++;
  }
  let tokensOwned = 0;
  const tokensRevoked: string[] = [];
  for (const grant of await registry.findTokensByHashPrefix('')) {
    if (grant.owner) continue;
    const owner = soleOwner(await registry.getAccounts(grant.accounts));
    const after = await registry.modifyToken(grant.hash, (g) => (g.owner ? g : owner === undefined ? null : { ...g, owner }));
    if (after) tokensOwned++;
    else tokensRevoked.push(grant.hash);
  }
  await indexOwners(registry);
  return { accountsConverted, tokensOwned, tokensRevoked };
}

/** Lists every account, secret and token under its owner (a registry written before the owner index). Idempotent. */
export async function indexOwners(registry: MigratedRegistry): Promise<void> {
  const accounts = await registry.getAccounts(await registry.listAccountIds());
  for (const a of accounts) if (a) await registry.ownerIndex.add(a.owner, 'accounts', a.id);
  for (const g of await registry.findSecretsByHashPrefix('')) await registry.ownerIndex.add(g.owner, 'secrets', g.hash);
  for (const g of await registry.findTokensByHashPrefix('')) if (g.owner) await registry.ownerIndex.add(g.owner, 'tokens', g.hash);
}
