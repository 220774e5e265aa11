import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

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
  /** Counts one request against each key, in one round trip; the hits in the keys' order. */
  hitEach(scope: ThrottleScope, keys: readonly string[]): Promise<ThrottleHit[]>;
}

/** One hit on a fixed-window counter: the count so far; the window starts with the first hit. */
export const FIXED_WINDOW_HIT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;
const FIXED_WINDOW_HIT_SHA = createHash('sha1').update(FIXED_WINDOW_HIT).digest('hex');

export class RedisThrottle implements Throttle {
  constructor(
    private readonly redis: Redis,
    private readonly limits: Record<ThrottleScope, { max: number; windowMs: number }>,
    private readonly keyPrefix = 'es:rl:',
  ) {}

  async hit(scope: ThrottleScope, key: string): Promise<ThrottleHit> {
    const { max, windowMs } = this.limits[scope];
    const count = Number(await this.redis.eval(FIXED_WINDOW_HIT, 1, this.key(scope, key), windowMs));
    return { allowed: count <= max, limit: max, windowMs };
  }

  /**
   * The poll counts every account its token grants (up to hundreds): as separate commands, one socket write and the
   * script's text each were a quarter of the ingress's CPU under load. One pipeline of EVALSHA instead; the script is
   * loaded once when Redis does not know it (a restart). A Redis Cluster spreads the keys over nodes, which one
   * pipeline cannot span: there each key is its own command.
   */
  async hitEach(scope: ThrottleScope, keys: readonly string[]): Promise<ThrottleHit[]> {
    if ((this.redis as { isCluster?: boolean }).isCluster) return Promise.all(keys.map((key) => this.hit(scope, key)));
    const { max, windowMs } = this.limits[scope];
    const counts = async (of: readonly string[]): Promise<[Error | null, unknown][]> => {
      const pipeline = this.redis.pipeline();
      for (const key of of) pipeline.evalsha(FIXED_WINDOW_HIT_SHA, 1, this.key(scope, key), windowMs);
      return (await pipeline.exec()) ?? [];
    };
    const results = await counts(keys);
    const unknownScript = results.flatMap(([err], i) => (err?.message.startsWith('NOSCRIPT') ? [i] : []));
    if (unknownScript.length > 0) {
      // Only the keys the script did not run for are counted again.
      await this.redis.script('LOAD', FIXED_WINDOW_HIT);
      const again = await counts(unknownScript.map((i) => keys[i]!));
      unknownScript.forEach((at, j) => (results[at] = again[j]!));
    }
    return results.map(([err, count]) => {
      if (err) throw err;
      return { allowed: Number(count) <= max, limit: max, windowMs };
    });
  }

  private key(scope: ThrottleScope, key: string): string {
    return `${this.keyPrefix}${scope}:{${key}}`;
  }
}
