/**
 * The oldest a quote behind an entry's risk figures may be (docs/risk-sizing.md); older, the bridge refuses the entry
 * `risk_figures_stale`. A live symbol quotes many times a minute; a minute without a quote is a closed market or a
 * dead feed, and sizing on it would size on the wrong price.
 */
export const FIGURES_MAX_AGE_MS = 60_000;

/**
 * How old the prices behind an entry's figures may be (docs/risk-sizing.md, "Stale figures"): equity is balance plus
 * the open positions' floating P&L at the latest quotes, and sizing uses the entry's quote and the conversion rate.
 * A quote the bridge last saw longer ago than the command's `figuresMaxAgeMs` makes them yesterday's figures: the
 * entry is refused rather than sized or guarded on them. One rule for every TypeScript bridge.
 */

export interface QuoteTime {
  /** The broker's symbol, as the message names it. */
  symbol: string;
  /** When the bridge last had a quote for it (ms since the epoch); undefined for a live feed that is always current. */
  quotedAtMs: number | undefined;
}

export interface StaleFigures {
  retcode: 'risk_figures_stale';
  message: string;
}

/** The refusal for the oldest quote past the bound, or undefined when every one is within it (or no bound came). */
export function staleFigures(quotes: readonly QuoteTime[], maxAgeMs: number | undefined, nowMs: number): StaleFigures | undefined {
  if (maxAgeMs === undefined) return undefined;
  let oldest: { symbol: string; ageMs: number } | undefined;
  for (const q of quotes) {
    if (q.quotedAtMs === undefined) continue;
    const ageMs = nowMs - q.quotedAtMs;
    if (ageMs > maxAgeMs && (oldest === undefined || ageMs > oldest.ageMs)) oldest = { symbol: q.symbol, ageMs };
  }
  if (!oldest) return undefined;
  return {
    retcode: 'risk_figures_stale',
    message: `the last ${oldest.symbol} quote is ${seconds(oldest.ageMs)} s old, past the ${seconds(maxAgeMs)} s the figures may be: the entry was not placed rather than sized or guarded on old prices`,
  };
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);
