import type { JournalEvent, TradeManagement } from '../domain/trade-events';

/**
 * What the bridge's trade management did to one trade (docs/trades.md, "Management"), read from the trade's events:
 * the stop moves it made (cause `trailing_stop` or `breakeven_trigger`), the take-profit levels it closed, and whether
 * the trade was closed by a reverse (`close_opposite`). Pure; the owner API shows it, the dashboard words it.
 *
 * Every part is order-free (counts, the earliest time, the earliest trail activation), so the same answer comes from
 * events in any order, and from the events a long trade folded away (summed into `foldedManagement` by the journal)
 * plus those it kept.
 */

const STOP_MOVES = new Set(['trailing_stop', 'breakeven_trigger']);

/** Whether an event is one of the management's own (the others leave the state as it is). */
function isManagementEvent(e: JournalEvent): boolean {
  if (e.type === 'position_modified') return STOP_MOVES.has(e.cause as string);
  return e.type === 'position_closed' && (e.cause === 'take_profit_level' || e.cause === 'close_opposite');
}

/** The state from `events` over `from` (what earlier, folded events said); undefined when no management event exists. */
export function managementOf(events: readonly JournalEvent[], from?: TradeManagement): TradeManagement | undefined {
  let state = from ? { ...from } : undefined;
  // The earliest trail activation wins: a trail activates once per position, a later event only repeats it.
  let trailAt = from && from.trailActiveAt !== null ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  for (const e of events) {
    if (!isManagementEvent(e)) continue;
    state ??= { trailActiveAt: null, stopMoves: 0, breakevenAt: null, levelsHit: 0, closedOpposite: false };
    const atMs = Date.parse(e.at);
    if (e.type === 'position_modified') {
      state.stopMoves += 1;
      if (e.cause === 'breakeven_trigger' && (state.breakevenAt === null || atMs < Date.parse(state.breakevenAt))) state.breakevenAt = e.at;
      if (e.cause === 'trailing_stop' && typeof e.trailActiveAt === 'number' && atMs < trailAt) {
        state.trailActiveAt = e.trailActiveAt;
        trailAt = atMs;
      }
    } else if (e.cause === 'take_profit_level') state.levelsHit += 1;
    else state.closedOpposite = true;
  }
  return state;
}
