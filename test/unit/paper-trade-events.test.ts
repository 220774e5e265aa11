import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualFeed } from '../../src/paper/broker';
import { MemoryLedger } from '../../src/paper/ledger';
import { PaperTerminal } from '../../src/paper/terminal';
import { bookSchema as contractBook, tradeEventSchema as contractEvent, type TradeEvent, type TradeRecord } from '../../src/domain/trade-events';
import { applyEvent } from '../../src/trades/apply';
import { bookOf } from '../../src/paper/trade-events';
import { TraderFile } from '../../src/paper/trader-file';

/**
 * The paper bridge's trade events (protocol 1.5, src/paper/trade-events.ts) from a real terminal and broker, without
 * a network: every event type with its cause, checked against the wire's schemas (src/domain/trade-events.ts), and
 * the outbox across a restart.
 */

const T0 = Date.parse('2026-11-25T10:00:00Z'); // a Wednesday: every market open
let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paper-trades-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function paper(files = false) {
  let now = T0;
  const clock = () => now;
  const feed = new ManualFeed(clock);
  feed.set('EURUSD', 1.085, 1.0851);
  const make = () =>
    new PaperTerminal({
      accountId: 'acc-1',
      platform: 'mt5',
      bridgeToken: 'brg_unused',
      ingressUrl: 'http://127.0.0.1:9',
      clock,
      brokerOptions: { feed, balance: 10_000 },
      ledger: new MemoryLedger(),
      tickMs: 0,
      diag: () => undefined,
      log: () => undefined,
      ...(files ? { stateFile: path.join(dir, 'acc-1.state.json'), tradesFile: path.join(dir, 'acc-1.trades.json') } : {}),
    });
  let seq = 0;
  const run = (t: PaperTerminal, body: Record<string, unknown>) => {
    seq++;
    const handled = t.handle({
      commandId: `signal/s${seq}/account/acc-1`,
      seq,
      signalId: `s${seq}`,
      accountId: 'acc-1',
      acceptedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 60_000).toISOString(),
      ...body,
    });
    return handled!.report;
  };
  return { make, run, feed, advance: (ms: number) => (now += ms) };
}

const events = (t: PaperTerminal): TradeEvent[] => t.trades.outbox.pending();
const shapes = (list: TradeEvent[]) => list.map((e) => [e.type, 'cause' in e ? e.cause : undefined, e.ticket]);

describe('trade events of the paper bridge', () => {
  test('when a buy with SL and TP fills and the price reaches the TP, then opened (with its command) and closed by take_profit with the P&L', async () => {
    const p = paper();
    const t = p.make();
    const report = p.run(t, { action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: 1.08, tp: 1.09 });
    p.feed.set('EURUSD', 1.0901, 1.0902);
    await t.tick();
    const list = events(t);
    expect(list.map((e) => contractEvent.parse(e))).toEqual(list);
    expect(list).toEqual([
      expect.objectContaining({
        type: 'position_opened',
        ticket: report.ticket,
        commandId: report.commandId,
        side: 'buy',
        volume: 0.1,
        price: 1.0851,
        sl: 1.08,
        tp: 1.09,
      }),
      // (1.0901 − 1.0851) × 100 000 × 0.1 = 50
      expect.objectContaining({
        type: 'position_closed',
        ticket: report.ticket,
        cause: 'take_profit',
        volume: 0.1,
        remainingVolume: 0,
        price: 1.0901,
        profit: 50,
      }),
    ]);
    expect(list[1]).not.toHaveProperty('commandId');
  });

  test('when the price reaches the SL, then closed by stop_loss with the loss', async () => {
    const p = paper();
    const t = p.make();
    p.run(t, { action: 'sell', symbol: 'EURUSD', volume: 0.2, sl: 1.09, tp: 1.08 });
    p.feed.set('EURUSD', 1.0899, 1.09);
    await t.tick();
    // sold at the bid 1.085, bought back at the ask 1.09: −0.005 × 100 000 × 0.2 = −100
    expect(events(t)[1]).toEqual(expect.objectContaining({ type: 'position_closed', cause: 'stop_loss', price: 1.09, profit: -100 }));
  });

  test('when commands modify, close in part and close, then each event says command and carries the command', () => {
    const p = paper();
    const t = p.make();
    const ticket = p.run(t, { action: 'buy', symbol: 'EURUSD', volume: 0.3 }).ticket!;
    const modify = p.run(t, { action: 'modify_sl', positionId: ticket, sl: 1.07 });
    const partial = p.run(t, { action: 'partial_close', positionId: ticket, partialVolume: 0.1 });
    const close = p.run(t, { action: 'close', positionId: ticket });
    const list = events(t);
    expect(list.map((e) => contractEvent.parse(e))).toEqual(list);
    expect(list.slice(1)).toEqual([
      expect.objectContaining({ type: 'position_modified', cause: 'command', sl: 1.07, tp: null, commandId: modify.commandId }),
      expect.objectContaining({ type: 'position_closed', cause: 'command', volume: 0.1, remainingVolume: 0.2, commandId: partial.commandId }),
      expect.objectContaining({ type: 'position_closed', cause: 'command', volume: 0.2, remainingVolume: 0, commandId: close.commandId }),
    ]);
  });

  test('when a pending order is placed, triggered, another expires and a third is cancelled, then each has its event', async () => {
    const p = paper();
    const t = p.make();
    const limit = p.run(t, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.08, tp: 1.1 });
    const expiring = p.run(t, { action: 'sell_limit', symbol: 'EURUSD', volume: 0.1, price: 1.095, expiry: new Date(T0 + 30_000).toISOString() });
    const cancelled = p.run(t, { action: 'buy_stop', symbol: 'EURUSD', volume: 0.1, price: 1.095 });
    const cancel = p.run(t, { action: 'cancel_pending', orderId: cancelled.ticket });
    p.feed.set('EURUSD', 1.0799, 1.08);
    p.advance(31_000);
    await t.tick();
    const list = events(t);
    expect(list.map((e) => contractEvent.parse(e))).toEqual(list);
    expect(shapes(list)).toEqual([
      ['order_placed', undefined, limit.ticket],
      ['order_placed', undefined, expiring.ticket],
      ['order_placed', undefined, cancelled.ticket],
      ['order_cancelled', 'command', cancelled.ticket],
      ['order_triggered', undefined, limit.ticket],
      ['position_opened', undefined, limit.ticket],
      ['order_expired', undefined, expiring.ticket],
    ]);
    expect(list[0]).toEqual(expect.objectContaining({ orderType: 'limit', price: 1.08, tp: 1.1, commandId: limit.commandId }));
    expect(list[1]).toEqual(expect.objectContaining({ expiresAt: new Date(T0 + 30_000).toISOString() }));
    expect(list[3]).toEqual(expect.objectContaining({ commandId: cancel.commandId }));
    // The position a pending order became is linked to the order and to the entry's command.
    expect(list[5]).toEqual(expect.objectContaining({ fromOrder: limit.ticket, price: 1.08, tp: 1.1, commandId: limit.commandId }));
  });

  test('when a stop-limit gets an expiry and later reaches its trigger, then order_modified says the order as it is and the journal reads it so', async () => {
    const p = paper();
    const t = p.make();
    // A buy stop-limit: at the trigger 1.087 (above the ask 1.0851), a buy limit at 1.0865.
    const order = p.run(t, { action: 'buy_stop_limit', symbol: 'EURUSD', volume: 0.1, price: 1.0865, stopLimitPrice: 1.087 }).ticket!;
    const expiry = new Date(T0 + 3_600_000).toISOString();
    const modify = p.run(t, { action: 'modify_pending_expiry', orderId: order, expiry });
    p.feed.set('EURUSD', 1.087, 1.0871);
    await t.tick();
    const list = events(t);
    expect(list.map((e) => contractEvent.parse(e))).toEqual(list);
    expect(list).toEqual([
      expect.objectContaining({ type: 'order_placed', orderType: 'stop_limit', price: 1.0865, stopLimitPrice: 1.087 }),
      {
        eventId: expect.any(String),
        at: new Date(T0).toISOString(),
        ticket: order,
        symbol: 'EURUSD',
        commandId: modify.commandId,
        type: 'order_modified',
        price: 1.0865,
        orderType: 'stop_limit',
        stopLimitPrice: 1.087,
        sl: null,
        tp: null,
        expiresAt: expiry,
        cause: 'command',
      },
      expect.objectContaining({ type: 'order_modified', orderType: 'limit', stopLimitPrice: null, cause: 'broker' }),
    ]);
    expect(list[2]).not.toHaveProperty('price');
    // The journal's order: its expiry from the modification, then a limit order at its limit price, no trigger left.
    const ctx = { accountId: 'acc-1', nowIso: new Date(T0).toISOString() };
    let journal = new Map<string, TradeRecord>();
    const after: TradeRecord[] = [];
    for (const e of list) {
      for (const [id, r] of applyEvent(journal, e, ctx)) if (r) journal = new Map([...journal, [id, r]]);
      after.push(journal.get(`order:${order}`)!);
    }
    const shown = (r: TradeRecord) => [r.orderType, r.orderPrice, r.stopLimitPrice, r.expiresAt];
    expect(after.map(shown)).toEqual([
      ['stop_limit', 1.0865, 1.087, undefined],
      ['stop_limit', 1.0865, 1.087, expiry],
      ['limit', 1.0865, undefined, expiry],
    ]);
  });

  test('when the trader closes a position and deletes an order by hand, then the events say manual and the ledger says close/cancel manual', async () => {
    const p = paper();
    const t = p.make();
    const ticket = p.run(t, { action: 'buy', symbol: 'EURUSD', volume: 0.1 }).ticket!;
    const order = p.run(t, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.07 }).ticket!;
    await t.tick(); // nothing happens
    expect(t.byHand({ op: 'close', ticket })).toEqual(expect.objectContaining({ status: 'done', ticket }));
    expect(t.byHand({ op: 'cancel', ticket: order })).toEqual(expect.objectContaining({ status: 'done', ticket: order }));
    expect(shapes(events(t)).slice(2)).toEqual([
      ['position_closed', 'manual', ticket],
      ['order_cancelled', 'manual', order],
    ]);
    expect((t.ledger as MemoryLedger).entries.slice(2).map((l) => [l.op, l.cause])).toEqual([
      ['close', 'manual'],
      ['cancel', 'manual'],
    ]);
    // A click on a ticket already closed is refused by the broker: nothing happens twice.
    expect(t.byHand({ op: 'close', ticket })).toEqual(expect.objectContaining({ status: 'rejected', retcode: 10036 }));
    expect(events(t)).toHaveLength(4);
  });

  test('when the stop-out closes everything, then its closes and cancels say stop_out', async () => {
    const p = paper();
    const t = p.make();
    const ticket = p.run(t, { action: 'buy', symbol: 'EURUSD', volume: 1 }).ticket!;
    const order = p.run(t, { action: 'sell_limit', symbol: 'EURUSD', volume: 0.1, price: 1.1 }).ticket!;
    const arming = { maxDrawdownPercent: 10, drawdownResetAt: null, figuresMaxAgeMs: 60_000 };
    expect(await t.stopOut.runner.check(arming, T0)).toBe('watching');
    p.feed.set('EURUSD', 1.07, 1.0701); // −1 510 on 10 000
    expect(await t.stopOut.runner.check(arming, T0)).toBe('tripped');
    // The stop-out cancels the pending orders first (none fills while it closes), then closes.
    expect(shapes(events(t)).slice(2)).toEqual([
      ['order_cancelled', 'stop_out', order],
      ['position_closed', 'stop_out', ticket],
    ]);
  });

  test('when the terminal restarts, then the events not yet recorded are there once, with the same ids, and the book reads as the contract says', async () => {
    const p = paper(true);
    const first = p.make();
    p.run(first, { action: 'buy', symbol: 'EURUSD', volume: 0.1, tp: 1.09 });
    p.run(first, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.07, expiry: new Date(T0 + 3_600_000).toISOString() });
    const before = events(first);
    first.trades.outbox.settle([{ eventId: before[0]!.eventId, result: 'recorded' }]);
    const again = p.make();
    expect(events(again)).toEqual(before.slice(1));
    p.feed.set('EURUSD', 1.0901, 1.0902);
    await again.tick();
    const ids = events(again).map((e) => e.eventId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events(again).at(-1)).toEqual(expect.objectContaining({ type: 'position_closed', cause: 'take_profit' }));
    const book = contractBook.parse(bookOf(again.broker, T0));
    expect(book).toEqual({
      takenAt: new Date(T0).toISOString(),
      truncated: false,
      positions: [],
      orders: [expect.objectContaining({ orderType: 'limit', price: 1.07 })],
    });
  });
});

describe("the trader's clicks (--trader FILE)", () => {
  test('when lines are appended, then each terminal takes its own account’s clicks once, in order, and a line being written waits', () => {
    const file = path.join(dir, 'trader.jsonl');
    const diag: Record<string, unknown>[] = [];
    const reader = new TraderFile(file, 'acc-1', (l) => diag.push(l));
    expect(reader.take()).toEqual([]);
    fs.appendFileSync(file, '{"accountId":"acc-1","op":"close","ticket":"1000001"}\n{"accountId":"acc-2","op":"close","ticket":"7"}\nnot json\n');
    fs.appendFileSync(file, '{"accountId":"acc-1","op":"cancel","ticket":"1000002"}\n{"accountId":"acc-1","op":"close"');
    expect(reader.take()).toEqual([
      { accountId: 'acc-1', op: 'close', ticket: '1000001' },
      { accountId: 'acc-1', op: 'cancel', ticket: '1000002' },
    ]);
    expect(diag).toEqual([expect.objectContaining({ event: 'trader_line_unreadable', line: 'not json' })]);
    fs.appendFileSync(file, ',"ticket":"1000003"}\n');
    expect(reader.take()).toEqual([{ accountId: 'acc-1', op: 'close', ticket: '1000003' }]);
    expect(reader.take()).toEqual([]);
  });
});
