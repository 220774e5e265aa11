import { tradeEventSchema, MAX_EVENTS_PER_TRADE, type JournalEvent, type TradeEvent, type TradeRecord } from '../../src/domain/trade-events';
import { applyEvent, tradesTouched } from '../../src/trades/apply';
import { managementOf } from '../../src/trades/management';

/**
 * The management state of a trade (docs/trades.md, "Management"), read from its journal events: the stop moves of the
 * bridge's trailing stop and breakeven, the take-profit levels closed, a reverse; and the journal keeping those causes
 * (a level's close leaves the trade open; a long trail's folded moves still count).
 */

const T0 = Date.parse('2026-11-26T12:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const ev = (e: Record<string, unknown>): TradeEvent => tradeEventSchema.parse({ symbol: 'EURUSD', ticket: '1', ...e });

const opened = (s = 0) => ev({ eventId: `o${s}`, type: 'position_opened', at: at(s), side: 'buy', volume: 1, price: 1.08, sl: 1.07 });
const moved = (s: number, sl: number, cause: string, extra: Record<string, unknown> = {}) =>
  ev({ eventId: `m${s}`, type: 'position_modified', at: at(s), sl, tp: 1.1, cause, ...extra });
const closed = (s: number, volume: number, remainingVolume: number, cause: string) =>
  ev({ eventId: `c${s}`, type: 'position_closed', at: at(s), volume, remainingVolume, price: 1.09, profit: 10, commission: 0, swap: 0, cause });

/** The events as the journal keeps them (without ticket and symbol). */
const kept = (events: TradeEvent[]): JournalEvent[] => events.map(({ ticket: _t, symbol: _s, ...rest }) => rest);

function run(events: TradeEvent[]): TradeRecord {
  let trade: TradeRecord | undefined;
  for (const event of events) {
    const current = new Map(trade ? tradesTouched(event).map((id) => [id, trade!] as const) : []);
    trade = applyEvent(current, event, { accountId: 'acc', nowIso: at(0) }).get('1')!;
  }
  return trade!;
}

describe('the management state of a trade', () => {
  test('no management event (a signal modify, a stop loss, a take profit): no state at all', () => {
    expect(managementOf(kept([opened(), moved(5, 1.075, 'command'), moved(6, 1.076, 'management'), closed(9, 1, 0, 'take_profit')]))).toBeUndefined();
    expect(managementOf([])).toBeUndefined();
  });

  test('a trail, a breakeven and two levels: where the trail began, moves counted, the breakeven time, levels hit', () => {
    const events = [
      opened(),
      moved(10, 1.0801, 'breakeven_trigger'),
      moved(20, 1.0812, 'trailing_stop', { trailActiveAt: 1.0862 }),
      closed(25, 0.3, 0.7, 'take_profit_level'),
      moved(30, 1.0822, 'trailing_stop', { trailActiveAt: 1.0862 }),
      moved(35, 1.0823, 'command'),
      closed(40, 0.3, 0.4, 'take_profit_level'),
    ];
    expect(managementOf(kept(events))).toEqual({ trailActiveAt: 1.0862, stopMoves: 3, breakevenAt: at(10), levelsHit: 2, closedOpposite: false });
  });

  test('the same events in any order (a bridge resends after a restart) give the same state; the earliest activation and breakeven win', () => {
    const events = kept([
      moved(30, 1.0822, 'trailing_stop', { trailActiveAt: 1.0899 }),
      moved(20, 1.0812, 'trailing_stop', { trailActiveAt: 1.0862 }),
      moved(50, 1.0805, 'breakeven_trigger'),
      moved(10, 1.0801, 'breakeven_trigger'),
    ]);
    const forward = managementOf(events);
    expect(forward).toEqual({ trailActiveAt: 1.0862, stopMoves: 4, breakevenAt: at(10), levelsHit: 0, closedOpposite: false });
    expect(managementOf([...events].reverse())).toEqual(forward);
  });

  test('a trailing move that does not say where the trail began leaves trailActiveAt null; the stop move still counts', () => {
    expect(managementOf(kept([moved(5, 1.081, 'trailing_stop')]))).toEqual({
      trailActiveAt: null,
      stopMoves: 1,
      breakevenAt: null,
      levelsHit: 0,
      closedOpposite: false,
    });
  });

  test('a position closed by a reverse (close_opposite) says so', () => {
    expect(managementOf(kept([opened(), closed(5, 1, 0, 'close_opposite')]))).toMatchObject({ closedOpposite: true, stopMoves: 0, levelsHit: 0 });
  });

  test('what folded events said comes first: their trail activation and breakeven are the earlier ones, their counts add up', () => {
    const folded = { trailActiveAt: 1.0862, stopMoves: 150, breakevenAt: at(10), levelsHit: 1, closedOpposite: false };
    const later = kept([moved(900, 1.09, 'trailing_stop', { trailActiveAt: 1.0999 }), moved(901, 1.0805, 'breakeven_trigger')]);
    expect(managementOf(later, folded)).toEqual({ ...folded, stopMoves: 152 });
    expect(managementOf([], folded)).toEqual(folded);
  });
});

describe('the journal keeps the management causes', () => {
  test("a take-profit level's close leaves the trade open with the rest; the last close (take_profit) ends it", () => {
    const partly = run([opened(), closed(10, 0.3, 0.7, 'take_profit_level')]);
    expect(partly).toMatchObject({ status: 'open', volume: 0.7, closedVolume: 0.3 });
    expect(partly.closeCause).toBeUndefined();
    const ended = run([opened(), closed(10, 0.3, 0.7, 'take_profit_level'), closed(20, 0.7, 0, 'take_profit')]);
    expect(ended).toMatchObject({ status: 'closed', closeCause: 'take_profit', closedVolume: 1 });
    expect(managementOf(ended.events)).toMatchObject({ levelsHit: 1 });
  });

  test("a level's close that closes the whole remainder ends the trade with that cause; a reverse's close likewise", () => {
    expect(run([opened(), closed(10, 1, 0, 'take_profit_level')])).toMatchObject({ status: 'closed', closeCause: 'take_profit_level' });
    expect(run([opened(), closed(10, 1, 0, 'close_opposite')])).toMatchObject({ status: 'closed', closeCause: 'close_opposite' });
  });

  test('a trailing move is kept with its trailActiveAt and sets the stop', () => {
    const t = run([opened(), moved(10, 1.0812, 'trailing_stop', { trailActiveAt: 1.0862 })]);
    expect(t.sl).toBe(1.0812);
    expect(t.events[1]).toMatchObject({ type: 'position_modified', cause: 'trailing_stop', trailActiveAt: 1.0862 });
  });

  test('a long trail past the events a trade keeps: every move still counts, the first activation and breakeven stay', () => {
    const moves = Array.from({ length: MAX_EVENTS_PER_TRADE + 60 }, (_, i) =>
      i === 0 ? moved(1, 1.0801, 'breakeven_trigger') : moved(1 + i, 1.08 + i * 1e-4, 'trailing_stop', { trailActiveAt: i === 1 ? 1.0862 : 1.0999 }),
    );
    const t = run([opened(), ...moves]);
    expect(t.foldedEvents).toBeGreaterThan(0);
    expect(t.events).toHaveLength(MAX_EVENTS_PER_TRADE);
    expect(managementOf(t.events, t.foldedManagement)).toEqual({
      trailActiveAt: 1.0862,
      stopMoves: MAX_EVENTS_PER_TRADE + 60,
      breakevenAt: at(1),
      levelsHit: 0,
      closedOpposite: false,
    });
    // Without what was folded, the kept events alone would undercount: the fold is what makes it right.
    expect(managementOf(t.events)!.stopMoves).toBeLessThan(MAX_EVENTS_PER_TRADE + 60);
  });

  test('the trade event schema takes the new causes and refuses an unknown one', () => {
    expect(() => moved(1, 1.08, 'trailing_stop', { trailActiveAt: 1.09 })).not.toThrow();
    expect(() => moved(1, 1.08, 'trailing')).toThrow();
    expect(() => closed(1, 1, 0, 'take_profit_levels')).toThrow();
    expect(() => moved(1, 1.08, 'trailing_stop', { trailActiveAt: -1 })).toThrow();
  });
});
