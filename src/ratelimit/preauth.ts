import type { Redis } from 'ioredis';
import { giveBackSlot, takeSlot, type Cap, type Slot, type Taken } from './caps';

/**
 * A cap per client address on the requests that did not authenticate: the webhook's (no secret, a secret that does
 * not exist, an account it does not link, a body too broken to hold one) and the owners' sign-in (a wrong owner,
 * password or code, a bad setup link). Only failures count, in one atomic step with the check, so requests that
 * arrive together cannot slip past it (issue 25). Only the address names a key here; nothing a caller writes in a
 * body or a URL does. Two ways to use it:
 * - the webhook (`take` on a failure): a failure is charged once it has failed, and one past the cap is a 429. A request
 *   that authenticates is never charged nor refused by this cap, so a shared sender address (TradingView's servers
 *   carry every trader's alerts from a handful of addresses) keeps its good traffic however many traders' stale
 *   secrets fail from it. Guessing gains nothing from that: a secret is at least 16 random characters.
 * - the sign-in (`take`, then `giveBack`): a slot taken before the body and the password hash, given back when the
 *   attempt succeeds, so concurrent guesses are bounded before the costly work.
 */
export class PreAuthCap {
  constructor(
    private readonly redis: Redis,
    readonly limit: { max: number; windowMs: number },
    private readonly keyPrefix: string,
  ) {}

  private cap(address: string): Extract<Cap, { kind: 'window' }> {
    return { kind: 'window', key: `${this.keyPrefix}preauth-slots:{${address}}`, ...this.limit };
  }

  /**
   * One slot of this address, checked and charged in one step, or how long until one frees: the webhook's failure,
   * the sign-in's attempt. Throws when Redis cannot answer.
   */
  take(address: string): Promise<Taken> {
    return takeSlot(this.redis, this.cap(address));
  }

  /** The attempt authenticated: it does not count. */
  async giveBack(slot: Slot): Promise<void> {
    await giveBackSlot(this.redis, slot);
  }
}
