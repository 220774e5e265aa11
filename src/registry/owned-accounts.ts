import type { Redis } from 'ioredis';
import type { Account } from '../domain/account';
import { accountFields, key } from './records';
import { ADD_OWNED_ACCOUNT, ALREADY_EXISTS, AT_CAP, runScript } from './scripts';
import { RegistryRefusal } from './registry';
import { OwnerIndex } from './owner-index';

/**
 * Accounts owners add themselves (docs/owners.md), counted against a cap per owner: the operator's for that owner,
 * else the configured default. The count and the write are one Lua script, so parallel adds never pass the cap.
 */
export class OwnedAccounts {
  private readonly index: OwnerIndex;

  constructor(private readonly redis: Redis) {
    this.index = new OwnerIndex(redis);
  }

  /** The new account with its bridge token, only while the owner is under the cap; 'at_cap' writes nothing. */
  async add(account: Account, bridgeTokenHash: string, defaultCap: number): Promise<{ result: 'added' | 'at_cap'; count: number; cap: number }> {
    const owner = account.owner;
    const keys = [
      key.account(account.id),
      key.accounts,
      key.accountBridge(account.id),
      this.index.keyOf(owner, 'accounts'),
      key.accountCap(owner),
      key.bridge(bridgeTokenHash),
    ];
    const record = JSON.stringify({ accountId: account.id, hash: bridgeTokenHash });
    const args = [JSON.stringify(owner), defaultCap, account.id, bridgeTokenHash, record, ...accountFields(account)];
    const [code, count, cap] = (await runScript(this.redis, ADD_OWNED_ACCOUNT, keys, args)) as number[];
    if (code === ALREADY_EXISTS) throw new RegistryRefusal('exists', `account ${account.id} already exists`);
    return { result: code === AT_CAP ? 'at_cap' : 'added', count: count ?? 0, cap: cap ?? 0 };
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
