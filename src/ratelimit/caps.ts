import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { runScript } from '../registry/scripts';

/**
 * Every cap of the service that is not a plain per-request counter is one call of `takeSlot`: the count is checked
 * and charged in one Lua script, so requests that arrive together cannot all read "room for one more" and then all
 * charge (issue 25: 171 of 200 concurrent wrong sign-ins got past a cap of 20; 40 parallel creations made 36 API keys
 * against a cap of 20). A slot is taken before the work it guards and given back (`giveBackSlot`) when the work
 * turned out not to count: a sign-in that succeeded, a record whose write failed; or, where only failures count and
 * good work must never wait on the cap (the webhook's pre-auth cap), taken only once the work has failed.
 * docs/reliability.md lists the caps.
 */
export type Cap =
  /**
   * At most `max` slots in a fixed window of `windowMs` that starts with its first slot. One small hash per key
   * (the count and the window's id), whatever `max` is: an attacker's many addresses cost a few bytes each. `weight`
   * (default 1) slots are taken at once, or none: a call of 100 trade events charges 100.
   */
  | { kind: 'window'; key: string; max: number; windowMs: number; weight?: number }
  /** At most `max` members in the Redis set at `key`: the set is itself what is counted (an owner's index). */
  | { kind: 'set'; key: string; max: number }
  /** At most `max` fields in the Redis hash at `key`: the hash is itself the store of what is counted. */
  | { kind: 'hash'; key: string; max: number };

/** A slot taken: for a count cap, the member that holds it; for a window cap, the window it was taken in. */
export interface Slot {
  cap: Cap;
  member: string;
}

export type Taken = { taken: true; slot: Slot } | { taken: false; retryAfterMs: number };

/**
 * KEYS: the capped collection. ARGV: kind, max, member (a window cap: the id a new window gets), then the window's
 * length (ms) or the hash field's value, then (a window cap) how many slots to take at once. Returns {1, member or the window's id} when a slot is held (the member held
 * one already, or took one now), else {0, ms until the window ends} ({0, 0} for a count cap: a slot frees only when
 * something is removed).
 */
const TAKE_SLOT = `
local kind, max, member = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if kind == 'window' then
  local weight = tonumber(ARGV[5] or '1')
  local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
  if n + weight > max then return {0, math.max(redis.call('PTTL', KEYS[1]), 1)} end
  if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('HSET', KEYS[1], 'n', weight, 'window', member)
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    return {1, member}
  end
  redis.call('HINCRBY', KEYS[1], 'n', weight)
  return {1, redis.call('HGET', KEYS[1], 'window')}
end
local has, size = 'SISMEMBER', 'SCARD'
if kind == 'hash' then has, size = 'HEXISTS', 'HLEN' end
if redis.call(has, KEYS[1], member) == 0 and redis.call(size, KEYS[1]) >= max then return {0, 0} end
if kind == 'hash' then redis.call('HSET', KEYS[1], member, ARGV[4]) else redis.call('SADD', KEYS[1], member) end
return {1, member}`;

/**
 * KEYS: the capped collection. ARGV: kind, member (a window cap: the slot's window). A window slot is given back only
 * to its own window: one taken in a window that has ended since must not make room in the next.
 */
const GIVE_BACK_SLOT = `
local kind, member = ARGV[1], ARGV[2]
if kind == 'window' then
  if redis.call('HGET', KEYS[1], 'window') == member and tonumber(redis.call('HGET', KEYS[1], 'n') or '0') > 0 then
    redis.call('HINCRBY', KEYS[1], 'n', -1)
  end
elseif kind == 'set' then
  redis.call('SREM', KEYS[1], member)
else
  redis.call('HDEL', KEYS[1], member)
end
return 1`;

/**
 * Takes one slot of `cap` for `member` (a window cap's slots need no name), or says the cap is full. For a hash cap,
 * `value` is the field's value, written in the same step. Throws when Redis cannot answer: the caller fails closed.
 */
export async function takeSlot(redis: Redis, cap: Cap, member = randomBytes(9).toString('base64url'), value = ''): Promise<Taken> {
  const extra = cap.kind === 'window' ? [String(cap.windowMs), String(cap.weight ?? 1)] : [value];
  const [taken, held] = (await runScript(redis, TAKE_SLOT, [cap.key], [cap.kind, cap.max, member, ...extra])) as [number, number | string];
  return taken === 1 ? { taken: true, slot: { cap, member: String(held) } } : { taken: false, retryAfterMs: Number(held) };
}

/**
 * Gives a slot back: a window slot as if never taken (give each back once), a count cap's member removed. Throws
 * when Redis cannot answer: the slot then stays taken, which errs towards the cap.
 */
export async function giveBackSlot(redis: Redis, slot: Slot): Promise<void> {
  await runScript(redis, GIVE_BACK_SLOT, [slot.cap.key], [slot.cap.kind, slot.member]);
}
