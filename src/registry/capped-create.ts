import type { Redis } from 'ioredis';
import type { Account, MadeByOwner } from '../domain/account';
import { accountFields, bridgeRecord, key } from './records';
import { ownerIndexKey } from './owner-index';
import { runScript } from './scripts';

/**
 * The most accounts an owner may have when adding them on the dashboard, unless the operator set another cap for that
 * owner (`admin owner account-cap`, 0 to 1000): a trader runs a few accounts; 10 stops a runaway script, not a trader.
 */
export const DEFAULT_OWNER_ACCOUNT_CAP = 10;

/**
 * Creates accounts of one owner, one or several at once (an owner's "Add an account", a "Connect with cTrader" batch),
 * all or none, counted against the owner's account cap in the same atomic step (one Lua script): parallel adds, or two
 * tabs linking at the same moment, cannot pass the cap between them, and an id that exists already refuses the whole
 * batch. The cap is the operator's for this owner (`admin owner account-cap`), else DEFAULT_OWNER_ACCOUNT_CAP. The count is the
 * owner's accounts as the owner index lists them, each checked against the account's own owner (an index entry left
 * behind counts for nothing); a record of the old one-string format counts too (its owner cannot be read cheaply:
 * counting it fails closed).
 *
 * KEYS: the owner's index of accounts, the set of all account ids, the operator's cap for the owner, then per account
 * its hash and its bridge-token key.
 * ARGV: default cap, owner JSON, bridge key prefix, account key prefix, then per account: id, bridge token hash, its
 * record, the number of field/value items, the items.
 * Returns {1, count after, cap}, {-1, current count, cap} at the cap, {-2, index} when an account exists.
 */
const CREATE_CAPPED = `
local cap = tonumber(redis.call('GET', KEYS[3]) or ARGV[1])
local owner = ARGV[2]
local count = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local k = ARGV[4] .. id
  local t = redis.call('TYPE', k).ok
  if t == 'string' or (t == 'hash' and redis.call('HGET', k, 'owner') == owner) then count = count + 1 end
end
local n = (#KEYS - 3) / 2
if count + n > cap then return {-1, count, cap} end
for i = 1, n do
  if redis.call('EXISTS', KEYS[2 + 2 * i]) == 1 then return {-2, i} end
end
local a = 5
for i = 1, n do
  local id, hash, record, items = ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3])
  redis.call('HSET', KEYS[2 + 2 * i], unpack(ARGV, a + 4, a + 3 + items))
  redis.call('SADD', KEYS[2], id)
  redis.call('SADD', KEYS[1], id)
  redis.call('SET', ARGV[3] .. hash, record)
  redis.call('SET', KEYS[3 + 2 * i], hash)
  a = a + 4 + items
end
return {1, count + n, cap}`;

export type CappedCreateResult =
  | { created: true; count: number; cap: number }
  | { created: false; reason: 'at_cap'; count: number; cap: number }
  | { created: false; reason: 'exists'; accountId: string };

/** Each account with the SHA-256 of its new bridge token; `defaultCap` for an owner the operator set no cap for. */
export async function createAccountsUnderCap(
  redis: Redis,
  owner: string,
  defaultCap: number,
  accounts: readonly { account: Account; bridgeTokenHash: string; madeByOwner?: MadeByOwner }[],
): Promise<CappedCreateResult> {
  const keys = [
    ownerIndexKey(owner, 'accounts'),
    key.accounts,
    key.accountCap(owner),
    ...accounts.flatMap(({ account }) => [key.account(account.id), key.accountBridge(account.id)]),
  ];
  const args: (string | number)[] = [defaultCap, JSON.stringify(owner), key.bridge(''), key.account('')];
  for (const { account, bridgeTokenHash, madeByOwner } of accounts) {
    if (account.owner !== owner) throw new Error('every account of a capped create belongs to its owner');
    const fields = accountFields(account);
    args.push(account.id, bridgeTokenHash, bridgeRecord(account.id, bridgeTokenHash, madeByOwner), fields.length, ...fields);
  }
  const [code, a = 0, b = 0] = (await runScript(redis, CREATE_CAPPED, keys, args)) as number[];
  if (code === 1) return { created: true, count: a, cap: b };
  if (code === -1) return { created: false, reason: 'at_cap', count: a, cap: b };
  return { created: false, reason: 'exists', accountId: accounts[a - 1]!.account.id };
}

/** Takes back accounts a capped create just made (a later step of the same request failed): nothing half-made stays. */
export async function undoCreatedAccounts(redis: Redis, owner: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const hash = await redis.get(key.accountBridge(id));
    const tx = redis
      .multi()
      .del(key.account(id))
      .srem(key.accounts, id)
      .srem(ownerIndexKey(owner, 'accounts'), id)
      .del(key.accountBridge(id))
      .del(key.bridgeAnnounced(id));
    if (hash) tx.del(key.bridge(hash));
    await tx.exec();
  }
}
