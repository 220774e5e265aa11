import { Serial } from '../../src/bridge-kit/serial';
import type { StopOutWatch } from '../../src/bridge-kit/stop-out-watch';
import { GONE_ORDERS_KEPT } from '../../src/paper/broker-book';
import { ManualFeed, PaperBroker, type BrokerOp } from '../../src/paper/broker';
import { EquityMarks } from '../../src/paper/risk';
import { paperStopOut } from '../../src/paper/stop-out';
import type { StopOutMark } from '../../src/risk/stop-out';

/**
 * The paper bridge's stop-out (src/paper/stop-out.ts) on a real paper broker: a listed pending order that is gone by
 * the time the stop-out reaches it counts as cancelled only when the broker's history says cancelled or expired.
 */

const T0 = Date.parse('2026-11-25T10:00:00Z'); // a Wednesday: every market open
const arming = { maxDrawdownPercent: 10, drawdownResetAt: null, figuresMaxAgeMs: 60_000 };

function paper(state?: ReturnType<PaperBroker['snapshot']>, saved?: StopOutMark) {
  let now = T0;
  const clock = () => now;
  const feed = new ManualFeed(clock);
  feed.set('EURUSD', 1.085, 1.0851);
  feed.set('GBPUSD', 1.27, 1.2701);
  const broker = new PaperBroker({ platform: 'mt5', clock, feed, balance: 10_000, ...(state ? { state } : {}) });
  const ops: BrokerOp[] = [];
  const marks = new EquityMarks();
  const watch: StopOutWatch = paperStopOut({
    accountId: 'acc-p',
    broker,
    ledger: { append: (_id, o) => ops.push(...o) },
    marks,
    saved,
    save: () => undefined,
    serial: new Serial(),
    clock,
    diag: () => undefined,
  });
  return { broker, feed, ops, watch, advance: (ms: number) => (now += ms), now: () => now };
}

function ticketOf(broker: PaperBroker, command: Parameters<PaperBroker['execute']>[0]): string {
  const { result } = broker.execute(command);
  if (result.status !== 'filled') throw new Error(`not placed: ${result.message}`);
  return result.ticket!;
}

describe("the paper bridge's stop-out, on an order gone before it is cancelled", () => {
  test('when a listed buy limit fills between the listing and its cancel, then it is reported failed with its position, which stays open; the other order is cancelled', async () => {
    const p = paper();
    const position = ticketOf(p.broker, { action: 'buy', symbol: 'EURUSD', volume: 1 });
    const limit = ticketOf(p.broker, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.07 });
    const far = ticketOf(p.broker, { action: 'sell_limit', symbol: 'GBPUSD', volume: 0.1, price: 1.4 });
    expect(await p.watch.runner.check(arming, p.now())).toBe('watching');
    // 1 lot × 0.025 below the open: 25 % of 10,000; the limit at 1.07 fills at the cancel's tick (not at the look).
    p.feed.set('EURUSD', 1.06, 1.0601);
    expect(await p.watch.runner.check(arming, p.now())).toBe('tripped');
    const mark = p.watch.runner.mark!;
    expect(mark.orders).toEqual([limit, far]);
    expect(mark.cancelled).toEqual([
      {
        ticket: limit,
        result: 'failed',
        message: expect.stringMatching(new RegExp(`^not pending any more and not cancelled \\(filled, position ${limit}\\); `)),
      },
      { ticket: far, result: 'cancelled' },
    ]);
    expect(mark.closed).toEqual([{ ticket: position, result: 'closed' }]);
    // The fill's position was never listed: left open, as the MT5 bridge leaves it.
    expect(p.broker.positions().map((x) => x.ticket)).toEqual([limit]);
    expect(p.ops.filter((o) => o.op === 'trigger').map((o) => o.ticket)).toEqual([limit]);
  });

  test('when a restart finds listed orders gone, then the one that expired is cancelled and the one that filled is failed, from the saved broker state', async () => {
    const before = paper();
    const expiring = ticketOf(before.broker, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.06, expiry: new Date(T0 + 60_000).toISOString() });
    const filling = ticketOf(before.broker, { action: 'buy_limit', symbol: 'GBPUSD', volume: 0.1, price: 1.26 });
    const closing: StopOutMark = {
      resetAt: null,
      trippedAt: new Date(T0).toISOString(),
      equity: 8_000,
      peak: 10_000,
      currency: 'USD',
      maxDrawdownPercent: 10,
      positions: [],
      orders: [expiring, filling],
      state: 'closing',
      closed: [],
      cancelled: [],
      acknowledged: false,
    };
    // The bridge died after the mark; meanwhile one order expired and the other filled, and the state file kept both.
    before.advance(61_000);
    before.feed.set('GBPUSD', 1.255, 1.2551);
    before.broker.tick();
    expect(before.broker.orders()).toEqual([]);
    const after = paper(before.broker.snapshot(), closing);
    await after.watch.runner.resume();
    expect(after.watch.runner.mark?.cancelled).toEqual([
      { ticket: expiring, result: 'cancelled', message: 'not pending any more when the stop-out reached it (expired)' },
      { ticket: filling, result: 'failed', message: `not pending any more and not cancelled (filled, position ${filling})` },
    ]);
    expect(after.ops.filter((o) => o.op === 'cancel')).toEqual([]);
  });

  test('when more orders leave the book than it keeps, then the oldest are forgotten and reported not found (failed), never cancelled', async () => {
    const p = paper();
    const first = ticketOf(p.broker, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.01, price: 1.0 });
    p.broker.execute({ action: 'cancel_pending', orderId: first });
    for (let i = 0; i < GONE_ORDERS_KEPT; i++) {
      p.broker.execute({ action: 'cancel_pending', orderId: ticketOf(p.broker, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.01, price: 1.0 }) });
    }
    expect(p.broker.snapshot().gone).toHaveLength(GONE_ORDERS_KEPT);
    expect(p.broker.orderGone(first)).toBeUndefined();
    const closing: StopOutMark = {
      resetAt: null,
      trippedAt: new Date(T0).toISOString(),
      equity: 8_000,
      peak: 10_000,
      currency: 'USD',
      maxDrawdownPercent: 10,
      positions: [],
      orders: [first],
      state: 'closing',
      closed: [],
      cancelled: [],
      acknowledged: false,
    };
    const again = paper(p.broker.snapshot(), closing);
    await again.watch.runner.resume();
    expect(again.watch.runner.mark?.cancelled).toEqual([{ ticket: first, result: 'failed', message: 'not pending any more and not cancelled (not found)' }]);
  });
});
