/** Fixtures of the stop-out's unit tests (test/unit/stop-out-*.test.ts): a clock, an arming, fresh quotes, a mark. */
import type { StopOutArming, StopOutMark } from '../../src/risk/stop-out';

export const T0 = Date.parse('2026-11-25T10:00:00Z');
export const arming = (over: Partial<StopOutArming> = {}): StopOutArming => ({
  maxDrawdownPercent: 10,
  drawdownResetAt: null,
  figuresMaxAgeMs: 60_000,
  ...over,
});
export const fresh = [{ symbol: 'EURUSD', quotedAtMs: T0 - 1_000 }];

export function markOf(over: Partial<StopOutMark> = {}): StopOutMark {
  return {
    resetAt: null,
    trippedAt: new Date(T0).toISOString(),
    equity: 9_000,
    peak: 10_000,
    currency: 'USD',
    maxDrawdownPercent: 10,
    positions: [],
    orders: [],
    state: 'done',
    closed: [],
    cancelled: [],
    acknowledged: false,
    ...over,
  };
}
