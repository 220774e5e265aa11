import { OpenApiError } from './connection';
import { ErrorCode, PayloadType, type Envelope } from './messages';

/**
 * The spot prices of one account's session (ProtoOASpotEvent): which symbols it subscribed to, the latest bid and ask
 * of each and when they came, and who waits for them. Subscriptions belong to a session: a new one subscribes again.
 */
export class SpotQuotes {
  /** Latest spot per symbolId, while subscribed in the current session, and when it came. */
  private quotes = new Map<number, { bid?: number; ask?: number; receivedAt: number }>();
  private subscribed = new Set<number>();
  private waiters: (() => void)[] = [];
  private readonly listeners: ((symbolId: number) => void)[] = [];

  constructor(
    private readonly ctid: number,
    /** A request on behalf of the account (authorized first). */
    private readonly call: (payloadType: number, payload: Record<string, unknown>) => Promise<Envelope>,
  ) {}

  /** The session ended: its subscriptions and prices with it. */
  endSession(): void {
    this.subscribed.clear();
    this.quotes.clear();
  }

  /** Takes a spot event of this account; false for any other event. */
  take(env: Envelope): boolean {
    const p = (env.payload ?? {}) as { ctidTraderAccountId?: number };
    if (env.payloadType !== PayloadType.PROTO_OA_SPOT_EVENT || p.ctidTraderAccountId !== this.ctid) return false;
    const spot = env.payload as { symbolId: number; bid?: number; ask?: number };
    const prev: { bid?: number; ask?: number } = this.quotes.get(spot.symbolId) ?? {};
    // bid and ask are "in 1/100000 of unit of a price"; an event may carry only one of them.
    this.quotes.set(spot.symbolId, {
      bid: spot.bid !== undefined ? spot.bid / 100_000 : prev.bid,
      ask: spot.ask !== undefined ? spot.ask / 100_000 : prev.ask,
      // Open API's spot events carry no time of their own: the price is as old as its arrival here.
      receivedAt: Date.now(),
    });
    for (const w of this.waiters.splice(0)) w();
    for (const l of this.listeners) l(spot.symbolId);
    return true;
  }

  /**
   * The current bid and ask of a symbol: subscribes to its spots once per session (ProtoOASubscribeSpotsReq; the
   * first ProtoOASpotEvent after it carries the latest prices) and keeps the latest.
   */
  async quote(symbolId: number, timeoutMs = 5_000): Promise<{ bid: number; ask: number }> {
    if (!this.subscribed.has(symbolId)) {
      try {
        await this.call(PayloadType.PROTO_OA_SUBSCRIBE_SPOTS_REQ, { symbolId: [symbolId] });
      } catch (err) {
        if (!(err instanceof OpenApiError && err.errorCode === ErrorCode.ALREADY_SUBSCRIBED)) throw err;
      }
      this.subscribed.add(symbolId);
    }
    const until = Date.now() + timeoutMs;
    for (;;) {
      const latest = this.last(symbolId);
      if (latest) return latest;
      const left = until - Date.now();
      if (left <= 0) throw new OpenApiError('NO_QUOTES', `no spot price for symbol ${symbolId} within ${timeoutMs} ms`, PayloadType.PROTO_OA_SPOT_EVENT);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Told every spot of a subscribed symbol. */
  onSpot(listener: (symbolId: number) => void): void {
    this.listeners.push(listener);
  }

  /** The latest bid and ask of a symbol subscribed in this session, or undefined before its first spot. */
  last(symbolId: number): { bid: number; ask: number } | undefined {
    const q = this.quotes.get(symbolId);
    return q?.bid !== undefined && q.ask !== undefined ? { bid: q.bid, ask: q.ask } : undefined;
  }

  /** When the last spot of a symbol reached the connector (ms since the epoch), or undefined before the first. */
  receivedAt(symbolId: number): number | undefined {
    return this.quotes.get(symbolId)?.receivedAt;
  }
}
