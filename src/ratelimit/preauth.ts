import type { Redis } from 'ioredis';
import { FIXED_WINDOW_HIT } from './fairness';

/**
 * The webhook's pre-auth cap: per client address, the requests that did not authenticate (no secret, a secret that
 * does not exist, an account it does not link, a body too broken to hold one). Checked first, before the body is even
 * read, and charged only when a request fails to authenticate: a shared sender address (TradingView's servers carry
 * every trader's alerts) is never capped for its good traffic, while a flood of guesses is stopped before it reaches
 * the registry. Only the address names a key here; nothing a caller writes in a body or a URL does.
 */
export class PreAuthCap {
  constructor(
    private readonly redis: Redis,
    readonly limit: { max: number; windowMs: number },
    private readonly keyPrefix: string,
  ) {}

  /** Whether this address may still try; when not, how long until its window ends. Reads only. */
  async check(address: string): Promise<{ allowed: true } | { allowed: false; retryAfterMs: number }> {
    const [count, ttl] = ((await this.redis.multi().get(this.key(address)).pttl(this.key(address)).exec()) ?? []).map(([err, value]) => {
      if (err) throw err;
      return value;
    });
    if (Number(count ?? 0) < this.limit.max) return { allowed: true };
    return { allowed: false, retryAfterMs: Math.max(Number(ttl), 0) };
  }

  /** Counts one request from this address that did not authenticate. */
  async charge(address: string): Promise<void> {
    await this.redis.eval(FIXED_WINDOW_HIT, 1, this.key(address), this.limit.windowMs);
  }

  private key(address: string): string {
    return `${this.keyPrefix}preauth:{${address}}`;
  }
}
