import { bookPastClock, tradeEventSchema, type Book, type TradeEvent, type TradeRecord } from '../../src/domain/trade-events';
import { applyEvent, tradesTouched, type JournalInput } from '../../src/trades/apply';
import { reconcile } from '../../src/trades/reconcile';
import { dailyProfits, dayIn } from '../../src/trades/day';
import { tradeCallbackEventOf } from '../../src/trades/callback-events';
import { QUARTER_HOUR_MS } from '../../src/trades/journal';

/** The trade journal's pure parts (docs/trades.md): what an event does to its trade, reconciliation, the day, the callbacks. */

const T0 = Date.parse('2026-11-25T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const ctx = { accountId: 'acc', nowIso: at(0) };

/** Applies events in order to an empty journal; the journal afterwards. */
function run(events: JournalInput[], signalIds: (string | undefined)[] = []): Map<string, TradeRecord> {
  const journal = new Map<string, TradeRecord>();
  events.forEach((event, i) => {
    const current = new Map(tradesTouched(event).flatMap((id) => (journal.has(id) ? [[id, journal.get(id)!] as const] : [])));
    for (const [id, record] of applyEvent(current, event, { ...ctx, ...(signalIds[i] ? { signalId: signalIds[i] } : {}) })) {
      if (record) journal.set(id, record);
      else journal.delete(id);
    }
  });
  return journal;
}

const ev = (e: Record<string, unknown>): TradeEvent => tradeEventSchema.parse({ symbol: 'EURUSD', ticket: '1', ...e });
const open = (s = 0, extra = {}) => ev({ eventId: `o${s}`, type: 'position_opened', at: at(s), side: 'sell', volume: 1, price: 1.1, ...extra });
const close = (s: number, volume: number, remainingVolume: number, profit: number, cause = 'take_profit') =>
  ev({ eventId: `c${s}`, type: 'position_closed', at: at(s), volume, remainingVolume, price: 1.09, profit, commission: -1, swap: -0.5, cause });

describe('applying events', () => {
  test('a partial close then the rest: volumes, money summed, closed by the last part', () => {
    const t = run([open(), close(10, 0.4, 0.6, 40), close(20, 0.6, 0, 60.1)]).get('1')!;
    expect(t).toMatchObject({
      status: 'closed',
      volume: 0,
      closedVolume: 1,
      realizedProfit: 100.1,
      commission: -2,
      swap: -1,
      closeCause: 'take_profit',
      closedAt: at(20),
    });
  });

  test('a close that comes before its open (a resend after a restart): one trade, closed, with the open price and side', () => {
    const t = run([close(10, 1, 0, 5), open()]).get('1')!;
    expect(t).toMatchObject({ status: 'closed', side: 'sell', openPrice: 1.1, openedAt: at(0), volume: 0, closedVolume: 1 });
  });

  test('an opening command links the signal; a later command of another signal is linked, not the opener', () => {
    const t = run([open(0, { commandId: 'signal/sig_a/account/acc' }), close(5, 1, 0, 1, 'command')], ['sig_a', 'sig_b']).get('1')!;
    expect(t).toMatchObject({ origin: 'signal', signalId: 'sig_a', openCommandId: 'signal/sig_a/account/acc', linkedSignals: ['sig_b'] });
  });

  test('the position opened from an order (fromOrder) before the order_triggered: one trade under the position ticket', () => {
    const placed = ev({
      eventId: 'p',
      type: 'order_placed',
      at: at(0),
      ticket: '7',
      side: 'buy',
      orderType: 'stop',
      volume: 2,
      price: 1.2,
      commandId: 'signal/sig_x/account/acc',
    });
    const opened = open(5, { ticket: '8', fromOrder: '7', side: 'buy', volume: 2, price: 1.2001 });
    const triggered = ev({ eventId: 't', type: 'order_triggered', at: at(5), ticket: '7', positionTicket: '8', price: 1.2001 });
    const journal = run([placed, opened, triggered], ['sig_x']);
    expect([...journal.keys()]).toEqual(['8']);
    expect(journal.get('8')).toMatchObject({ status: 'open', orderTicket: '7', orderType: 'stop', signalId: 'sig_x', openPrice: 1.2001, volume: 2 });
    expect(journal.get('8')!.events.map((e) => e.eventId)).toEqual(['p', 'o5', 't']);
  });

  test('an order modification is the order now: a new expiry, none (null: good till cancelled), a stop-limit become a limit; what it leaves out is kept', () => {
    const expiry = at(3600);
    const placed = ev({
      eventId: 'p',
      type: 'order_placed',
      at: at(0),
      ticket: '3',
      side: 'buy',
      orderType: 'stop_limit',
      volume: 1,
      price: 1.0935,
      stopLimitPrice: 1.095,
    });
    const modified = (s: number, e: Record<string, unknown>) =>
      ev({ eventId: `m${s}`, type: 'order_modified', at: at(s), ticket: '3', cause: 'command', ...e });
    const steps = [
      [placed],
      [placed, modified(1, { expiresAt: expiry })],
      [placed, modified(1, { expiresAt: expiry }), modified(2, { sl: 1.09 })],
      [placed, modified(1, { expiresAt: expiry }), modified(2, { sl: 1.09 }), modified(3, { expiresAt: null })],
      [placed, modified(1, { expiresAt: expiry }), modified(4, { orderType: 'limit', cause: 'broker' })],
    ];
    const order = (events: TradeEvent[]) => {
      const t = run(events).get('order:3')!;
      return [t.orderType, t.orderPrice, t.stopLimitPrice, t.expiresAt, t.sl];
    };
    expect(steps.map(order)).toEqual([
      ['stop_limit', 1.0935, 1.095, undefined, null],
      ['stop_limit', 1.0935, 1.095, expiry, null],
      ['stop_limit', 1.0935, 1.095, expiry, 1.09],
      ['stop_limit', 1.0935, 1.095, undefined, 1.09],
      ['limit', 1.0935, undefined, expiry, null],
    ]);
  });

  test('an order expired and one cancelled by the broker end as such', () => {
    const placed = (t: string) => ev({ eventId: `p${t}`, type: 'order_placed', at: at(0), ticket: t, side: 'buy', orderType: 'limit', volume: 1, price: 1 });
    const journal = run([
      placed('1'),
      placed('2'),
      ev({ eventId: 'x', type: 'order_expired', at: at(9), ticket: '1' }),
      ev({ eventId: 'y', type: 'order_cancelled', at: at(9), ticket: '2', cause: 'broker' }),
    ]);
    expect(journal.get('order:1')).toMatchObject({ status: 'expired', closeCause: 'expired' });
    expect(journal.get('order:2')).toMatchObject({ status: 'cancelled', closeCause: 'broker' });
  });

  test('more than 200 events: the first stays, the oldest after it fold into a count', () => {
    const modifies = Array.from({ length: 250 }, (_, i) =>
      ev({ eventId: `m${i}`, type: 'position_modified', at: at(i + 1), sl: 1 + i / 1000, tp: null, cause: 'broker' }),
    );
    const t = run([open(), ...modifies]).get('1')!;
    expect(t.events).toHaveLength(200);
    expect(t.events[0]!.eventId).toBe('o0');
    expect(t.events[1]!.eventId).toBe('m51');
    expect(t.foldedEvents).toBe(51);
    expect(t.sl).toBe(1.249);
  });
});

describe('reconciliation', () => {
  const book = (over: Partial<Book> = {}): Book => ({ takenAt: at(100), truncated: false, positions: [], orders: [], ...over });
  const openTrade = run([open(0, { ticket: '5' })]).get('5')!;
  const NOW = T0 + 200_000;

  test('an open trade missing from a whole book is closed unknown; from a truncated book, or opened after the book, it is not', () => {
    expect(reconcile(book(), new Set(), [openTrade], NOW).map((e) => [e.type, e.eventId])).toEqual([['position_closed_unknown', 'book/closed/5']]);
    expect(reconcile(book({ truncated: true }), new Set(), [openTrade], NOW)).toEqual([]);
    expect(reconcile(book({ takenAt: at(-1) }), new Set(), [openTrade], NOW)).toEqual([]);
  });

  test('a trade begun past the clock (a journal written before books were bounded) is closed by a book taken before it; the end never passes the clock', () => {
    const skewed = run([open(0, { ticket: '6', at: '2098-01-01T00:00:00.000Z' })]).get('6')!;
    expect(reconcile(book(), new Set(), [skewed], NOW)).toEqual([
      { type: 'position_closed_unknown', eventId: 'book/closed/6', at: at(100), ticket: '6', symbol: 'EURUSD' },
    ]);
    // Begun within the tolerance after the book: spared, as a trade opened after the book was taken.
    const soon = run([open(0, { ticket: '7', at: at(100 + 250) })]).get('7')!;
    expect(reconcile(book(), new Set(), [soon], NOW)).toEqual([]);
    // A book up to the tolerance ahead ends what it no longer lists at the clock, not at its own time.
    expect(reconcile(book({ takenAt: at(400) }), new Set(), [openTrade], NOW)).toEqual([
      { type: 'position_closed_unknown', eventId: 'book/closed/5', at: at(200), ticket: '5', symbol: 'EURUSD' },
    ]);
  });

  test('a book is past the clock when its takenAt, a position opened or an order placed lies more than 5 minutes ahead', () => {
    const position = {
      ticket: '5',
      symbol: 'EURUSD',
      side: 'buy' as const,
      volume: 1,
      openPrice: 1.1,
      sl: null,
      tp: null,
      openedAt: at(0),
      profit: 0,
      swap: 0,
      commission: 0,
    };
    const order = {
      ticket: '4',
      symbol: 'EURUSD',
      side: 'buy' as const,
      orderType: 'limit' as const,
      volume: 1,
      price: 1,
      stopLimitPrice: null,
      sl: null,
      tp: null,
      placedAt: at(0),
      expiresAt: null,
    };
    const now = Date.parse(at(0));
    expect(bookPastClock(book({ takenAt: at(300), positions: [position], orders: [order] }), now)).toBeUndefined();
    expect(bookPastClock(book({ takenAt: at(301) }), now)).toBe('book.takenAt');
    expect(bookPastClock(book({ takenAt: at(0), positions: [position, { ...position, openedAt: at(301) }] }), now)).toBe('book.positions.1.openedAt');
    expect(bookPastClock(book({ takenAt: at(0), orders: [{ ...order, placedAt: at(301), expiresAt: at(9999) }] }), now)).toBe('book.orders.0.placedAt');
    // An order's expiry is meant to lie ahead.
    expect(bookPastClock(book({ takenAt: at(0), orders: [{ ...order, expiresAt: at(9999) }] }), now)).toBeUndefined();
  });

  test('a listed order whose ticket is the origin of an open position is no order opened outside', () => {
    const fromOrder = { ...openTrade, orderTicket: '4' };
    const order = {
      ticket: '4',
      symbol: 'EURUSD',
      side: 'buy' as const,
      orderType: 'limit' as const,
      volume: 1,
      price: 1,
      stopLimitPrice: null,
      sl: null,
      tp: null,
      placedAt: at(0),
      expiresAt: null,
    };
    const position = {
      ticket: '5',
      symbol: 'EURUSD',
      side: 'sell' as const,
      volume: 1,
      openPrice: 1.1,
      sl: null,
      tp: null,
      openedAt: at(0),
      profit: 0,
      swap: 0,
      commission: 0,
    };
    expect(reconcile(book({ orders: [order], positions: [position] }), new Set(['5']), [fromOrder], NOW)).toEqual([]);
  });
});

describe('the day', () => {
  test('realized money per local day: a close at 23:30 UTC is the next day in Tokyo; days without a close are 0; 30 days, oldest first', () => {
    const late = Date.parse('2026-11-24T23:30:00Z');
    const buckets = new Map([[Math.floor(late / QUARTER_HOUR_MS), 12.5]]);
    const utc = dailyProfits(buckets, 'UTC', T0);
    const tokyo = dailyProfits(buckets, 'Asia/Tokyo', T0);
    expect(utc).toHaveLength(30);
    expect(utc.at(-1)).toEqual({ day: '2026-11-25', profit: 0 });
    expect(utc.at(-2)).toEqual({ day: '2026-11-24', profit: 12.5 });
    expect(tokyo.at(-1)).toEqual({ day: '2026-11-25', profit: 12.5 });
  });

  test('a 23-hour day (clocks forward) is never skipped in the list', () => {
    const days = dailyProfits(new Map(), 'Europe/London', Date.parse('2026-03-30T00:30:00+01:00')).map((d) => d.day);
    expect(days.slice(-3)).toEqual(['2026-03-28', '2026-03-29', '2026-03-30']);
    expect(new Set(days).size).toBe(30);
    expect(dayIn(Date.parse('2026-03-29T23:30:00Z'), 'Europe/London')).toBe('2026-03-30');
  });
});

describe('callbacks of trade events', () => {
  test('a close carries the side of its trade and its P&L; a triggered order names the position; an order modify has no callback', () => {
    const journal = run([open(0, { commandId: 'signal/sig_a/account/acc' }), close(10, 1, 0, 50)], ['sig_a']);
    const closeEvent = close(10, 1, 0, 50);
    expect(tradeCallbackEventOf(closeEvent, journal.get('1')!)).toEqual({
      eventId: 'c10',
      type: 'position.closed',
      at: at(10),
      data: {
        accountId: 'acc',
        tradeId: '1',
        symbol: 'EURUSD',
        signalId: 'sig_a',
        side: 'sell',
        volume: 1,
        remainingVolume: 0,
        price: 1.09,
        profit: 50,
        commission: -1,
        swap: -0.5,
        cause: 'take_profit',
      },
    });
    const modify = ev({ eventId: 'm', type: 'order_modified', at: at(1), ticket: '3', price: 1.01, cause: 'command' });
    expect(tradeCallbackEventOf(modify, journal.get('1')!)).toBeUndefined();
  });
});
