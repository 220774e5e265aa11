import type { EquityMarks } from './equity-marks';
import { staleFigures, type QuoteTime } from './figures-age';

/**
 * The copy-trading stop-out's rule (docs/risk-sizing.md, "Stop-out"; protocol 1.4), one implementation for every
 * TypeScript bridge: while armed, trip when equity is `maxDrawdownPercent` or more below the SAME peak the
 * `risk_max_drawdown` guard uses; only on fresh figures (a stale quote neither trips nor clears); and once per
 * owner's reset: while a mark exists for the current reset, never again.
 */

/** What arms the watch: the `stopOut` of the service's answers. */
export interface StopOutArming {
  maxDrawdownPercent: number;
  drawdownResetAt: string | null;
  figuresMaxAgeMs: number;
}

export interface TicketResult<R extends string> {
  ticket: string;
  result: R | 'failed';
  message?: string;
}

/** The durable mark, written before anything is closed (the bridge's marks or state file). */
export interface StopOutMark {
  resetAt: string | null;
  trippedAt: string;
  equity: number;
  peak: number;
  currency: string;
  maxDrawdownPercent: number;
  positions: string[];
  orders: string[];
  state: 'closing' | 'done';
  closed: TicketResult<'closed'>[];
  cancelled: TicketResult<'cancelled'>[];
  /** The service acknowledged the event (recorded or duplicate): it is not sent again. */
  acknowledged: boolean;
  /**
   * Events of earlier stop-outs (before the owner's reset) the service had not acknowledged when this one tripped:
   * still sent until it does, so a new mark never drops an old event.
   */
  unsent?: StopOutEventBody[];
}

export type StopOutEventBody = ReturnType<typeof stopOutEventOf>;

export type WatchDecision =
  | { kind: 'stopped_out' }
  | { kind: 'stale'; message: string }
  | { kind: 'holding'; peak: number; drawdownPercent: number }
  | { kind: 'trip'; peak: number; drawdownPercent: number };

/** Does a mark already stand for this reset? Only a strictly newer reset re-arms. */
export function markStands(mark: StopOutMark | undefined, drawdownResetAt: string | null): boolean {
  if (!mark) return false;
  return !(resetTime(drawdownResetAt) > resetTime(mark.resetAt));
}

const resetTime = (at: string | null) => (at === null ? 0 : Date.parse(at) || 0);

/** One look at the account. Records the equity in the peak only on fresh figures, and not after a stop-out. */
export function watchStopOut(input: {
  arming: StopOutArming;
  mark: StopOutMark | undefined;
  marks: EquityMarks;
  equity: number;
  quotes: readonly QuoteTime[];
  nowMs: number;
}): WatchDecision {
  const { arming, marks, equity } = input;
  if (markStands(input.mark, arming.drawdownResetAt)) return { kind: 'stopped_out' };
  // An equity the bridge could not read (NaN, undefined from a broken answer) is no figure: never a trip, and never
  // the peak (Math.max with NaN would make it NaN for good, and the guard and the watch would never trip again).
  if (typeof equity !== 'number' || !Number.isFinite(equity)) return { kind: 'stale', message: `the account's equity is unreadable (${String(equity)})` };
  const stale = staleFigures(input.quotes, arming.figuresMaxAgeMs, input.nowMs);
  if (stale) return { kind: 'stale', message: stale.message };
  const peak = marks.observePeak(equity, arming.drawdownResetAt ?? undefined);
  const drawdownPercent = peak > 0 ? ((peak - equity) / peak) * 100 : 0;
  return peak > 0 && drawdownPercent >= arming.maxDrawdownPercent ? { kind: 'trip', peak, drawdownPercent } : { kind: 'holding', peak, drawdownPercent };
}

/** The event the service records (protocol 1.4) from a finished mark. */
export function stopOutEventOf(mark: StopOutMark) {
  const drawdownPercent = mark.peak > 0 ? ((mark.peak - mark.equity) / mark.peak) * 100 : 0;
  return {
    type: 'stop_out' as const,
    eventId: `stop-out/${mark.resetAt ?? 'initial'}`,
    trippedAt: mark.trippedAt,
    equity: mark.equity,
    peak: mark.peak,
    drawdownPercent: Math.round(drawdownPercent * 10_000) / 10_000,
    maxDrawdownPercent: mark.maxDrawdownPercent,
    currency: mark.currency,
    closed: mark.closed.slice(0, 500).map(bounded),
    cancelled: mark.cancelled.slice(0, 500).map(bounded),
  };
}

const bounded = <R extends string>(t: TicketResult<R>): TicketResult<R> => ({
  ticket: t.ticket.slice(0, 64),
  result: t.result,
  ...(t.message !== undefined ? { message: t.message.slice(0, 512) } : {}),
});
