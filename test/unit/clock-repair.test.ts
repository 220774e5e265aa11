import { repairRecord } from '../../src/trades/clock-repair';
import type { JournalEvent, TradeRecord } from '../../src/domain/trade-events';

/** One trade record brought back to the clock (src/trades/clock-repair.ts): its times, and an unknown end undone. */

const NOW = '2026-12-02T00:00:00.000Z';
const LIMIT = Date.parse(NOW) + 5 * 60_000;
const FUTURE = '2099-01-01T00:00:00.000Z';

function trade(events: JournalEvent[], over: Partial<TradeRecord> = {}): TradeRecord {
  return {
    tradeId: '1',
    accountId: 'acc',
    symbol: 'EURUSD',
    side: 'buy',
    status: 'closed',
    origin: 'signal',
    openedAt: '2026-12-01T23:00:00.000Z',
    volume: 0,
    closedVolume: 0.3,
    sl: null,
    tp: null,
    realizedProfit: 5,
    commission: 0,
    swap: 0,
    closedAt: FUTURE,
    closeCause: 'unknown',
    linkedSignals: [],
    foldedEvents: 0,
    updatedAt: FUTURE,
    events,
    ...over,
  };
}
const openEv = { eventId: 'o', type: 'position_opened', at: '2026-12-01T23:00:00.000Z' } as const;
const partial = { eventId: 'p', type: 'position_closed', at: '2026-12-01T23:30:00.000Z', volume: 0.1 } as const;
const unknownEnd = { eventId: 'book/closed/1', type: 'position_closed_unknown', at: FUTURE } as const;

test('a position a book past the clock ended unknown is open again with the lots that end took; its times are now', () => {
  const { record, undone } = repairRecord(trade([openEv, partial, unknownEnd]), LIMIT, NOW);
  expect(undone).toBe('book/closed/1');
  expect(record).toMatchObject({ status: 'open', volume: 0.2, closedVolume: 0.1, updatedAt: NOW, events: [openEv, partial] });
  expect(record.closedAt).toBeUndefined();
  expect(record.closeCause).toBeUndefined();
});

test('a trade opened past the clock keeps its status with its times made now; an end within the clock is kept', () => {
  const future = { ...openEv, at: FUTURE };
  expect(repairRecord(trade([future], { status: 'open', openedAt: FUTURE, closedAt: undefined, closeCause: undefined }), LIMIT, NOW)).toEqual({
    record: trade([{ ...future, at: NOW }], { status: 'open', openedAt: NOW, closedAt: undefined, closeCause: undefined, updatedAt: NOW }),
  });
  const fine = trade([openEv, { ...unknownEnd, at: NOW }], { closedAt: NOW, updatedAt: NOW });
  expect(repairRecord(fine, LIMIT, NOW)).toEqual({ record: fine });
});

test('an order a book past the clock ended unknown is pending again', () => {
  const placed = { eventId: 'order:1/placed', type: 'order_placed', at: '2026-12-01T23:00:00.000Z' } as const;
  const gone = { eventId: 'book/gone/1', type: 'order_closed_unknown', at: FUTURE } as const;
  const { record, undone } = repairRecord(trade([placed, gone], { tradeId: 'order:1', status: 'cancelled', volume: 0.1, closedVolume: 0 }), LIMIT, NOW);
  expect(undone).toBe('book/gone/1');
  expect(record).toMatchObject({ status: 'pending', volume: 0.1, closedVolume: 0, events: [placed] });
});
