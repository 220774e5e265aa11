import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RATE_LIMIT_KEY_PREFIX } from '../redis-keys';

/**
 * The fairness throttle (spec §8): always on, per target account on the per-account URL (scope account_write) and per
 * account owner on the broadcast URL (scope broadcast). One atomic fixed-window counter in Redis per key. The same
 * counter serves the poll's per-account read cap.
 */
export type ThrottleScope = 'account_write' | 'broadcast' | 'account_read';

export interface ThrottleHit {
  allowed: boolean;
  limit: number;
  windowMs: number;
}

export interface Throttle {
  /** Counts one request; tells whether it is within the limit. Throws when the store cannot answer. */
  hit(scope: ThrottleScope, key: string): Promise<ThrottleHit>;
  /**
   * Counts one request against each key, each exactly as `hit` does; the hits in the keys' order. One round trip per
   * 500 keys on one Redis (one per key on a Redis Cluster).
   */
  hitEach(scope: ThrottleScope, keys: readonly string[]): Promise<ThrottleHit[]>;
}

/** One hit on a fixed-window counter: the count so far; the window starts with the first hit. */
const FIXED_WINDOW_HIT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** FIXED_WINDOW_HIT on each key in turn, in one command; the counts in the keys' order. */
export const FIXED_WINDOW_HIT_EACH = `
local counts = {}
for i, key in ipairs(KEYS) do
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
  counts[i] = n
end
return counts`;
const FIXED_WINDOW_HIT_EACH_SHA = createHash('sha1').update(FIXED_WINDOW_HIT_EACH).digest('hex');
/** Keys per script run: a token granting thousands of accounts holds Redis for a batch at a time, never for all. */
const FIXED_WINDOW_BATCH = 500;

export class RedisThrottle implements Throttle {
  constructor(
    private readonly redis: Redis,
    private readonly limits: Record<ThrottleScope, { max: number; windowMs: number }>,
    private readonly keyPrefix = RATE_LIMIT_KEY_PREFIX,
  ) {}

  async hit(scope: ThrottleScope, key: string): Promise<ThrottleHit> {
    const { max, windowMs } = this.limits[scope];
    const count = Number(await this.redis.eval(FIXED_WINDOW_HIT, 1, this.key(scope, key), windowMs));
    return { allowed: count <= max, limit: max, windowMs };
  }

  /**
   * The poll counts every account its token grants (up to hundreds): as separate commands, one socket write and the
   * script's text each were a quarter of the ingress's CPU under load; as a pipeline of one EVALSHA per account, the
   * 200 commands' objects and their 22 KB of protocol per poll were still the ingress's largest cost. Now one EVALSHA
   * counts a batch of keys (each exactly as `hit` does), so a poll is one command; the script is loaded once when Redis
   * does not know it (a restart). A Redis Cluster spreads the keys over nodes, which one script cannot span: there
   * each key is its own command.
   */
  async hitEach(scope: ThrottleScope, keys: readonly string[]): Promise<ThrottleHit[]> {
    if (keys.length === 0) return [];
    if ((this.redis as { isCluster?: boolean }).isCluster) return Promise.all(keys.map((key) => this.hit(scope, key)));
    const { max, windowMs } = this.limits[scope];
    const counts: number[] = [];
    for (let at = 0; at < keys.length; at += FIXED_WINDOW_BATCH) {
      const batch = keys.slice(at, at + FIXED_WINDOW_BATCH).map((key) => this.key(scope, key));
      counts.push(...(await this.hitBatch(batch, windowMs)));
    }
    return counts.map((count) => ({ allowed: count <= max, limit: max, windowMs }));
  }

  private async hitBatch(keys: readonly string[], windowMs: number): Promise<number[]> {
    const run = async () => (await this.redis.evalsha(FIXED_WINDOW_HIT_EACH_SHA, keys.length, ...keys, windowMs)) as number[];
    try {
      return await run();
    } catch (err) {
      // NOSCRIPT is answered before the script runs: nothing was counted, so running it again counts each key once.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      await this.redis.script('LOAD', FIXED_WINDOW_HIT_EACH);
      return run();
    }
  }

  private key(scope: ThrottleScope, key: string): string {
    return `${this.keyPrefix}${scope}:{${key}}`;
  }
}
