import type { Redis } from 'ioredis';
import type { Account, MadeByOwner } from '../domain/account';
import { key } from './records';
import { RegistryRefusal } from './registry';
import { createAccountsUnderCap } from './capped-create';

/**
 * Accounts owners add themselves (docs/owners.md), counted against a cap per owner: the operator's for that owner,
 * else the configured default. The count and the write are one Lua script, so parallel adds never pass the cap.
 */
export class OwnedAccounts {
  constructor(private readonly redis: Redis) {}

  /** The new account with its bridge token, only while the owner is under the cap; 'at_cap' writes nothing. */
  async add(
    account: Account,
    bridgeTokenHash: string,
    defaultCap: number,
    madeByOwner: MadeByOwner,
  ): Promise<{ result: 'added' | 'at_cap'; count: number; cap: number }> {
    const r = await createAccountsUnderCap(this.redis, account.owner, defaultCap, [{ account, bridgeTokenHash, madeByOwner }]);
    if (r.created) return { result: 'added', count: r.count, cap: r.cap };
    if (r.reason === 'exists') throw new RegistryRefusal('exists', `account ${account.id} already exists`);
    return { result: 'at_cap', count: r.count, cap: r.cap };
  }

  /** The operator's cap on an owner's accounts; null puts the owner back on the default. */
  async setCap(owner: string, cap: number | null): Promise<void> {
    if (cap === null) await this.redis.del(key.accountCap(owner));
    else await this.redis.set(key.accountCap(owner), String(cap));
  }

  /** The operator's cap for this owner; null when the owner is on the default. */
  async cap(owner: string): Promise<number | null> {
    const raw = await this.redis.get(key.accountCap(owner));
    return raw === null ? null : Number(raw);
  }
}
