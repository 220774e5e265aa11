import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TradeOutbox } from '../../src/bridge-kit/trade-outbox';
import type { TradeEvent } from '../../src/domain/trade-events';

/** The bridge kit's trade-event outbox (src/bridge-kit/trade-outbox.ts): durable, ordered, once per eventId, bounded. */

const closed = (n: number): TradeEvent => ({
  eventId: `100${n}:closed:${n}`,
  type: 'position_closed',
  at: '2026-11-26T10:00:00.000Z',
  ticket: `100${n}`,
  symbol: 'EURUSD',
  volume: 0.1,
  remainingVolume: 0,
  price: 1.09,
  profit: 50,
  commission: 0,
  swap: 0,
  cause: 'take_profit',
});

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the trade-event outbox', () => {
  test('when a bridge restarts, then the events it saw and the service never answered are there again, in their order', () => {
    const file = path.join(dir, 'acc.trades.json');
    const first = new TradeOutbox({ file, accountId: 'acc' });
    first.add([closed(1), closed(2)]);
    first.add([closed(3)]);
    const again = new TradeOutbox({ file, accountId: 'acc' });
    expect(again.pending().map((e) => e.eventId)).toEqual([closed(1), closed(2), closed(3)].map((e) => e.eventId));
  });

  test('when the service answered recorded, duplicate or refused, then the event leaves the outbox for good, also across a restart', () => {
    const file = path.join(dir, 'acc.trades.json');
    const diag: Record<string, unknown>[] = [];
    const outbox = new TradeOutbox({ file, accountId: 'acc', diag: (l) => diag.push(l) });
    outbox.add([closed(1), closed(2), closed(3), closed(4)]);
    outbox.settle([
      { eventId: closed(1).eventId, result: 'recorded' },
      { eventId: closed(2).eventId, result: 'duplicate' },
      { eventId: closed(3).eventId, result: 'refused', reason: 'foreign_ticket' },
    ]);
    expect(outbox.pending().map((e) => e.eventId)).toEqual([closed(4).eventId]);
    expect(diag).toEqual([expect.objectContaining({ event: 'trade_event_refused', eventId: closed(3).eventId, reason: 'foreign_ticket' })]);
    const again = new TradeOutbox({ file, accountId: 'acc' });
    expect(again.pending().map((e) => e.eventId)).toEqual([closed(4).eventId]);
    // Seen again (a broker operation replayed after a crash): neither queued twice nor sent again once settled.
    expect(again.add([closed(1), closed(4)])).toBe(0);
    expect(again.size).toBe(1);
  });

  test('when more events wait than the bound, then the oldest are dropped and said so', () => {
    const diag: Record<string, unknown>[] = [];
    const outbox = new TradeOutbox({ accountId: 'acc', max: 3, diag: (l) => diag.push(l) });
    outbox.add([1, 2, 3, 4, 5].map(closed));
    expect(outbox.pending().map((e) => e.ticket)).toEqual(['1003', '1004', '1005']);
    expect(diag).toEqual([expect.objectContaining({ event: 'trade_outbox_full', dropped: 2, firstDropped: closed(1).eventId, max: 3 })]);
  });

  test('when the file does not read, then the bridge refuses to start rather than forget its events', () => {
    const file = path.join(dir, 'acc.trades.json');
    fs.writeFileSync(file, '{"version":1,"events":[');
    expect(() => new TradeOutbox({ file, accountId: 'acc' })).toThrow(/does not parse/);
  });

  test('when an event is given up (unreadable by the service alone), then it is gone and said so', () => {
    const diag: Record<string, unknown>[] = [];
    const outbox = new TradeOutbox({ accountId: 'acc', diag: (l) => diag.push(l) });
    outbox.add([closed(1), closed(2)]);
    outbox.drop(closed(1).eventId, 'trades: HTTP 400 events.0.price');
    expect(outbox.pending().map((e) => e.eventId)).toEqual([closed(2).eventId]);
    expect(diag).toEqual([expect.objectContaining({ event: 'trade_event_dropped', eventId: closed(1).eventId })]);
  });

  test('when an event is added, then it is flushed to disk before add returns; a settlement is written without a flush', () => {
    const file = path.join(dir, 'acc.trades.json');
    const outbox = new TradeOutbox({ file, accountId: 'acc' });
    const flushes = jest.spyOn(fs, 'fdatasyncSync');
    try {
      outbox.add([closed(1)]);
      expect(flushes).toHaveBeenCalledTimes(1);
      outbox.settle([{ eventId: closed(1).eventId, result: 'recorded' }]);
      expect(flushes).toHaveBeenCalledTimes(1);
    } finally {
      flushes.mockRestore();
    }
  });

  test('when the bridge died in the middle of an append, then the cut line is left out and everything before it is there', () => {
    const file = path.join(dir, 'acc.trades.json');
    const first = new TradeOutbox({ file, accountId: 'acc' });
    first.add([closed(1)]);
    first.add([closed(2)]);
    fs.appendFileSync(file, JSON.stringify({ add: [closed(3)] }).slice(0, 40));
    const again = new TradeOutbox({ file, accountId: 'acc' });
    expect(again.pending().map((e) => e.eventId)).toEqual([closed(1).eventId, closed(2).eventId]);
    // The next append starts on a line of its own, after the cut one.
    again.add([closed(4)]);
    expect(new TradeOutbox({ file, accountId: 'acc' }).pending().map((e) => e.eventId)).toEqual([1, 2, 4].map((n) => closed(n).eventId));
  });

  test('when a whole line of the log does not read, then the bridge refuses to start', () => {
    const file = path.join(dir, 'acc.trades.json');
    new TradeOutbox({ file, accountId: 'acc' }).add([closed(1)]);
    fs.appendFileSync(file, '{"add":[}\n');
    expect(() => new TradeOutbox({ file, accountId: 'acc' })).toThrow(/does not parse at line 2/);
  });

  test('when the file is the whole-object format of before, then its events and settled ids are read and it becomes a log', () => {
    const file = path.join(dir, 'acc.trades.json');
    fs.writeFileSync(file, JSON.stringify({ version: 1, events: [closed(2), closed(3)], settled: [closed(1).eventId] }));
    const outbox = new TradeOutbox({ file, accountId: 'acc' });
    expect(outbox.pending().map((e) => e.eventId)).toEqual([closed(2).eventId, closed(3).eventId]);
    expect(outbox.add([closed(1)])).toBe(0);
    expect(fs.readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
    const again = new TradeOutbox({ file, accountId: 'acc' });
    expect(again.pending().map((e) => e.eventId)).toEqual([closed(2).eventId, closed(3).eventId]);
    expect(again.add([closed(1)])).toBe(0);
  });

  test('when many changes were logged, then the log is rewritten short, with the waiting events and the settled ids', () => {
    const file = path.join(dir, 'acc.trades.json');
    const outbox = new TradeOutbox({ file, accountId: 'acc' });
    for (let n = 1; n <= 400; n++) {
      outbox.add([closed(n)]);
      if (n % 2 === 0) outbox.settle([{ eventId: closed(n - 1).eventId, result: 'recorded' }]);
    }
    expect(fs.readFileSync(file, 'utf8').split('\n').length).toBeLessThan(520);
    const again = new TradeOutbox({ file, accountId: 'acc' });
    expect(again.pending().map((e) => e.eventId)).toEqual(outbox.pending().map((e) => e.eventId));
    expect(again.size).toBe(200);
    // Settled before the rewrite: still remembered, so not queued again.
    expect(again.add([closed(1), closed(399)])).toBe(0);
  });
});
