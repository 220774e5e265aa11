import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { runScript } from '../registry/scripts';

/**
 * Every cap of the service that is not a plain per-request counter is one call of `takeSlot`: the count is checked
 * and charged in one Lua script, so requests that arrive together cannot all read "room for one more" and then all
 * charge (issue 25: 171 of 200 concurrent wrong sign-ins got past a cap of 20; 40 parallel creations made 36 API keys
 * against a cap of 20). A slot is taken before the work it guards and given back (`giveBackSlot`) when the work
 * turned out not to count: a sign-in that succeeded, a record whose write failed. docs/reliability.md lists the caps.
 */
export type Cap =
  /** At most `max` slots taken in any `windowMs` (a sliding window: each slot is a hold that expires on its own). */
  | { kind: 'window'; key: string; max: number; windowMs: number }
  /** At most `max` members in the Redis set at `key`: the set is itself what is counted (an owner's index). */
  | { kind: 'set'; key: string; max: number }
  /** At most `max` fields in the Redis hash at `key`: the hash is itself the store of what is counted. */
  | { kind: 'hash'; key: string; max: number };

export interface Slot {
  cap: Cap;
  member: string;
}

export type Taken = { taken: true; slot: Slot } | { taken: false; retryAfterMs: number };

/**
 * KEYS: the capped collection. ARGV: kind, max, member, then the window (ms) or the hash field's value. Returns
 * {1, 0} when the member holds a slot (it already did, or took one now), else {0, ms until a window slot frees}
 * ({0, 0} for a count cap: a slot frees only when something is removed). The window's clock is Redis's, so ingresses
 * with skewed clocks share one window.
 */
const TAKE_SLOT = `
local kind, max, member = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if kind == 'window' then
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= max then
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {0, math.max(tonumber(first[2]) - now, 1)}
  end
  local window = tonumber(ARGV[4])
  redis.call('ZADD', KEYS[1], now + window, member)
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0}
end
local has, size = 'SISMEMBER', 'SCARD'
if kind == 'hash' then has, size = 'HEXISTS', 'HLEN' end
if redis.call(has, KEYS[1], member) == 0 and redis.call(size, KEYS[1]) >= max then return {0, 0} end
if kind == 'hash' then redis.call('HSET', KEYS[1], member, ARGV[4]) else redis.call('SADD', KEYS[1], member) end
return {1, 0}`;

/**
 * Takes one slot of `cap` for `member` (a window cap's slots need no name: one is made), or says the cap is full.
 * For a hash cap, `value` is the field's value, written in the same step. Throws when Redis cannot answer: the caller
 * fails closed.
 */
export async function takeSlot(redis: Redis, cap: Cap, member = randomBytes(9).toString('base64url'), value = ''): Promise<Taken> {
  const extra = cap.kind === 'window' ? String(cap.windowMs) : value;
  const [taken, retryAfterMs] = (await runScript(redis, TAKE_SLOT, [cap.key], [cap.kind, cap.max, member, extra])) as [number, number];
  return taken === 1 ? { taken: true, slot: { cap, member } } : { taken: false, retryAfterMs };
}

/** Gives a slot back: a window slot as if never taken, a count cap's member removed. Giving one back twice is harmless. */
export async function giveBackSlot(redis: Redis, slot: Slot): Promise<void> {
  const { cap, member } = slot;
  if (cap.kind === 'window') await redis.zrem(cap.key, member);
  else if (cap.kind === 'set') await redis.srem(cap.key, member);
  else await redis.hdel(cap.key, member);
}
