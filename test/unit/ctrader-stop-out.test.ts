import { Serial } from '../../src/bridge-kit/serial';
import { OrderType, PayloadType, TradeSide } from '../../src/ctrader/messages';
import { ctraderStopOut } from '../../src/ctrader/stop-out';
import type { StopOutWatch } from '../../src/bridge-kit/stop-out-watch';
import { CTID, harness } from '../helpers/ctrader-inprocess';
import { expirePending, fillPending } from '../helpers/ctrader-pending';
import { checkPayload } from '../helpers/ctrader-proto';

/**
 * The cTrader connector's stop-out (src/ctrader/stop-out.ts, docs/ctrader-connector.md) on a real CtraderAccount whose
 * Open API is the double in-process: what it reads, what it sends (each request checked against the definitions),
 * and its mark in the marks file.
 */

const arming = { maxDrawdownPercent: 5, drawdownResetAt: null, figuresMaxAgeMs: 60_000 };

type Harness = Awaited<ReturnType<typeof harness>>;

/** The connector's watch as CtraderBridge builds it: the marks file written whole with the stop-out's mark. */
function watchOf(h: Harness): StopOutWatch {
  const { marks, stopOut } = h.file.loadAll();
  const watch: StopOutWatch = ctraderStopOut({
    accountId: 'acc-r',
    account: h.account,
    marks,
    saved: stopOut,
    save: () => h.file.save(marks, watch.runner.mark),
    serial: new Serial(),
    diag: () => undefined,
  });
  return watch;
}

/** Two EURUSD buys (3 and 2 lots at the ask 1.0851) and a buy limit at 1.05: their ids as the connector reports them. */
function book(h: Harness) {
  const account = h.double.account(CTID);
  h.open(1, TradeSide.BUY, 30_000_000);
  h.open(1, TradeSide.BUY, 20_000_000);
  account.newOrder({ symbolId: 1, tradeSide: TradeSide.BUY, volume: 10_000_000, orderType: OrderType.LIMIT, limitPrice: 1.05 }, Date.now());
  return {
    positions: [...account.positions.values()].map((p) => ({ id: p.positionId, volume: p.tradeData.volume })),
    orders: [...account.orders.keys()],
  };
}

describe("the cTrader connector's stop-out", () => {
  test('when equity falls 5 % below the peak, then each position is closed whole with one ProtoOAClosePositionReq and the order cancelled with one ProtoOACancelOrderReq; never a second time', async () => {
    const h = await harness();
    const { positions, orders } = book(h);
    const watch = watchOf(h);
    expect(await watch.runner.check(arming, Date.now())).toBe('watching');
    // 5 lots × (1.0851 − 1.0750) × 100,000 = 5,050 USD below the peak of 99,950: 5.05 %.
    h.double.setQuote('EURUSD', 1.075, 1.0751);
    h.spot(1);
    expect(await watch.runner.check(arming, Date.now())).toBe('tripped');
    expect(h.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ)).toEqual(
      positions.map((p) => ({ ctidTraderAccountId: CTID, positionId: p.id, volume: p.volume })),
    );
    expect(h.requests(PayloadType.PROTO_OA_CANCEL_ORDER_REQ)).toEqual(orders.map((orderId) => ({ ctidTraderAccountId: CTID, orderId })));
    expect(h.double.account(CTID).positions.size + h.double.account(CTID).orders.size).toBe(0);
    expect(h.file.loadAll().stopOut).toMatchObject({
      state: 'done',
      closed: [{ result: 'closed' }, { result: 'closed' }],
      cancelled: [{ result: 'cancelled' }],
    });
    expect(watch.runner.pendingEvents()).toMatchObject([{ eventId: 'stop-out/initial', closed: positions.map((p) => ({ ticket: String(p.id) })) }]);

    // Recovered and fallen again, with a position opened by hand meanwhile: left alone.
    h.double.setQuote('EURUSD', 1.0851, 1.0852);
    h.open(1, TradeSide.BUY, 10_000_000);
    h.double.setQuote('EURUSD', 1.0, 1.0001);
    h.spot(1);
    expect(await watch.runner.check(arming, Date.now())).toBe('stopped_out');
    expect(h.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ)).toHaveLength(2);
    expect(h.double.account(CTID).positions.size).toBe(1);
  });

  test('when a spot of an open position is older than figuresMaxAgeMs, then it neither trips nor closes anything', async () => {
    const h = await harness();
    book(h);
    const watch = watchOf(h);
    expect(await watch.runner.check(arming, Date.now())).toBe('watching');
    h.double.setQuote('EURUSD', 1.075, 1.0751);
    // The connector has this spot, but looks 61 s after it arrived.
    h.spot(1);
    expect(await watch.runner.check(arming, Date.now() + 61_000)).toBe('stale');
    expect(h.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ)).toEqual([]);
    expect(await watch.runner.check(arming, Date.now())).toBe('tripped');
  });

  test('when the connector restarts with the mark closing, then it closes and cancels the listed tickets still open, and nothing else', async () => {
    const h = await harness();
    const { positions, orders } = book(h);
    const listed = positions.map((p) => String(p.id));
    h.file.save(h.file.load(), {
      resetAt: null,
      trippedAt: new Date().toISOString(),
      equity: 94_000,
      peak: 100_000,
      currency: 'USD',
      maxDrawdownPercent: 5,
      positions: listed,
      orders: orders.map(String),
      state: 'closing',
      closed: [],
      cancelled: [],
      acknowledged: false,
    });
    h.open(1, TradeSide.SELL, 10_000_000); // after the mark: not listed
    const restarted = watchOf(h);
    await restarted.runner.resume();
    expect(h.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ).map((r) => r.positionId)).toEqual(positions.map((p) => p.id));
    expect(h.requests(PayloadType.PROTO_OA_CANCEL_ORDER_REQ)).toHaveLength(1);
    expect([...h.double.account(CTID).positions.values()].map((p) => p.tradeData.tradeSide)).toEqual([TradeSide.SELL]);
    expect(h.file.loadAll().stopOut).toMatchObject({ state: 'done' });
  });

  test("when Open API refuses a close NO_QUOTES and then MARKET_CLOSED, then it is sent a second time only, and reported failed with the broker's words", async () => {
    const h = await harness();
    const { positions } = book(h);
    const watch = watchOf(h);
    expect(await watch.runner.check(arming, Date.now())).toBe('watching');
    h.refusing.set(PayloadType.PROTO_OA_CLOSE_POSITION_REQ, ['NO_QUOTES', 'MARKET_CLOSED']);
    h.double.setQuote('EURUSD', 1.075, 1.0751);
    h.spot(1);
    expect(await watch.runner.check(arming, Date.now())).toBe('tripped');
    // The first position: refused NO_QUOTES, then refused MARKET_CLOSED (not tried again); the second closes at once.
    expect(h.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ).map((r) => r.positionId)).toEqual([positions[0]!.id, positions[0]!.id, positions[1]!.id]);
    expect(h.file.loadAll().stopOut?.closed).toEqual([
      { ticket: String(positions[0]!.id), result: 'failed', message: 'MARKET_CLOSED refused by the double' },
      { ticket: String(positions[1]!.id), result: 'closed' },
    ]);
    expect(h.double.account(CTID).positions.size).toBe(1);
  });

  test('when Open API refuses a close NO_QUOTES once, then it is closed on the second attempt', async () => {
    const h = await harness();
    book(h);
    const watch = watchOf(h);
    expect(await watch.runner.check(arming, Date.now())).toBe('watching');
    h.refusing.set(PayloadType.PROTO_OA_CLOSE_POSITION_REQ, ['NO_QUOTES']);
    h.double.setQuote('EURUSD', 1.075, 1.0751);
    h.spot(1);
    expect(await watch.runner.check(arming, Date.now())).toBe('tripped');
    expect(h.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ)).toHaveLength(3);
    expect(h.file.loadAll().stopOut?.closed.map((c) => c.result)).toEqual(['closed', 'closed']);
    expect(h.double.account(CTID).positions.size).toBe(0);
  });
});

describe("the cTrader connector's stop-out, on a listed order no longer pending", () => {
  test('when the buy limit fills just before its ProtoOACancelOrderReq, then ProtoOAOrderDetailsReq finds it FILLED: reported failed with its position, which is left open', async () => {
    const h = await harness();
    const { positions, orders } = book(h);
    const limit = orders[0]!;
    const watch = watchOf(h);
    expect(await watch.runner.check(arming, Date.now())).toBe('watching');
    h.before.set(PayloadType.PROTO_OA_CANCEL_ORDER_REQ, () => fillPending(h.double.account(CTID), limit));
    h.double.setQuote('EURUSD', 1.075, 1.0751);
    h.spot(1);
    expect(await watch.runner.check(arming, Date.now())).toBe('tripped');
    expect(h.requests(PayloadType.PROTO_OA_CANCEL_ORDER_REQ)).toEqual([{ ctidTraderAccountId: CTID, orderId: limit }]);
    expect(h.requests(PayloadType.PROTO_OA_ORDER_DETAILS_REQ)).toEqual([{ ctidTraderAccountId: CTID, orderId: limit }]);
    const filledInto = h.double.account(CTID).history.get(limit)!.positionId!;
    expect(h.file.loadAll().stopOut?.cancelled).toEqual([
      {
        ticket: String(limit),
        result: 'failed',
        message: `not pending any more and not cancelled (filled, position ${filledInto}); ORDER_NOT_FOUND Order ${limit} not found`,
      },
    ]);
    // The listed positions closed; the fill's position, never listed, stays open (as the MT5 bridge leaves it).
    expect(h.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ).map((r) => r.positionId)).toEqual(positions.map((p) => p.id));
    expect([...h.double.account(CTID).positions.keys()]).toEqual([filledInto]);
  });

  test('when a restart finds listed orders gone, then each is looked up: expired and cancelled count as cancelled, filled and unknown are failed', async () => {
    const h = await harness();
    const account = h.double.account(CTID);
    const place = (limitPrice: number) => {
      account.newOrder({ symbolId: 1, tradeSide: TradeSide.BUY, volume: 10_000_000, orderType: OrderType.LIMIT, limitPrice }, Date.now());
      return [...account.orders.keys()].at(-1)!;
    };
    const [expired, filled, cancelled] = [place(1.05), place(1.06), place(1.07)];
    const missing = 999_999;
    h.file.save(h.file.load(), {
      resetAt: null,
      trippedAt: new Date().toISOString(),
      equity: 94_000,
      peak: 100_000,
      currency: 'USD',
      maxDrawdownPercent: 5,
      positions: [],
      orders: [expired, filled, cancelled, missing].map(String),
      state: 'closing',
      closed: [],
      cancelled: [],
      acknowledged: false,
    });
    expirePending(account, expired);
    fillPending(account, filled);
    account.cancelOrder({ orderId: cancelled }, Date.now()); // by hand, before the restart
    const restarted = watchOf(h);
    await restarted.runner.resume();
    expect(h.requests(PayloadType.PROTO_OA_CANCEL_ORDER_REQ)).toEqual([]);
    expect(h.requests(PayloadType.PROTO_OA_ORDER_DETAILS_REQ).map((r) => r.orderId)).toEqual([expired, filled, cancelled, missing]);
    expect(h.file.loadAll().stopOut?.cancelled).toEqual([
      { ticket: String(expired), result: 'cancelled', message: 'not pending any more when the stop-out reached it (expired)' },
      {
        ticket: String(filled),
        result: 'failed',
        message: `not pending any more and not cancelled (filled, position ${account.history.get(filled)!.positionId})`,
      },
      { ticket: String(cancelled), result: 'cancelled', message: 'not pending any more when the stop-out reached it (cancelled)' },
      { ticket: String(missing), result: 'failed', message: 'not pending any more and not cancelled (not found)' },
    ]);
    // The double's answers are instances of the published messages.
    for (const orderId of [expired, filled]) {
      const [answer] = h.double.answer(account, { payloadType: PayloadType.PROTO_OA_ORDER_DETAILS_REQ, payload: { ctidTraderAccountId: CTID, orderId } });
      expect(answer!.payloadType).toBe(PayloadType.PROTO_OA_ORDER_DETAILS_RES);
      expect(checkPayload(answer!.payloadType, answer!.payload!)).toBeUndefined();
    }
    expect(
      h.double.answer(account, { payloadType: PayloadType.PROTO_OA_ORDER_DETAILS_REQ, payload: { ctidTraderAccountId: CTID, orderId: missing } })[0],
    ).toMatchObject({
      payloadType: PayloadType.PROTO_OA_ERROR_RES,
      payload: { errorCode: 'ORDER_NOT_FOUND' },
    });
  });
});
