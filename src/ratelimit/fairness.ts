import type { Redis } from 'ioredis';

/**
 * The fairness throttle (spec §8): always on, per target account on the per-account URL (scope account_write) and per
 * account owner on the broadcast URL (scope broadcast). One atomic fixed-window counter in Redis per key. The same
 * counter serves the poll's per-account read cap.
 */
export type ThrottleScope = 'account_write' | 'broadcast' | 'account_read';

export interface Throttle {
  /** Counts one request; tells whether it is within the limit. Throws when the store cannot answer. */
  hit(scope: ThrottleScope, key: string): Promise<{ allowed: boolean; limit: number; windowMs: number }>;
}

/** One hit on a fixed-window counter: the count so far; the window starts with the first hit. */
export const FIXED_WINDOW_HIT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

export class RedisThrottle implements Throttle {
  constructor(
    private readonly redis: Redis,
    private readonly limits: Record<ThrottleScope, { max: number; windowMs: number }>,
    private readonly keyPrefix = 'es:rl:',
  ) {}

  async hit(scope: ThrottleScope, key: string): Promise<{ allowed: boolean; limit: number; windowMs: number }> {
    const { max, windowMs } = this.limits[scope];
    const count = Number(await this.redis.eval(FIXED_WINDOW_HIT, 1, `${this.keyPrefix}${scope}:{${key}}`, windowMs));
    return { allowed: count <= max, limit: max, windowMs };
  }
}
