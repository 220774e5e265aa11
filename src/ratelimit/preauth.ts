import type { Redis } from 'ioredis';
import { giveBackSlot, takeSlot, type Slot, type Taken } from './caps';

/**
 * A cap per client address on the requests that did not authenticate: the webhook's (no secret, a secret that does
 * not exist, an account it does not link, a body too broken to hold one) and the owners' sign-in (a wrong owner,
 * password or code, a bad setup link). A slot is taken first, before the body is read and before any lookup or
 * password hash, in one atomic step with the check; a request that then authenticates gives its slot back. So the
 * cap counts failures only (a shared sender address, like TradingView's servers carrying every trader's alerts, is
 * never capped for its good traffic), and requests that arrive together cannot slip past it (issue 25). Only the
 * address names a key here; nothing a caller writes in a body or a URL does.
 */
export class PreAuthCap {
  constructor(
    private readonly redis: Redis,
    readonly limit: { max: number; windowMs: number },
    private readonly keyPrefix: string,
  ) {}

  /** A slot for one attempt from this address, or how long until one frees. Throws when Redis cannot answer. */
  take(address: string): Promise<Taken> {
    return takeSlot(this.redis, { kind: 'window', key: `${this.keyPrefix}preauth-slots:{${address}}`, ...this.limit });
  }

  /** The attempt authenticated: it does not count. */
  async giveBack(slot: Slot): Promise<void> {
    await giveBackSlot(this.redis, slot);
  }
}
