import type { SymbolSpec } from './instruments';
import { roundTo } from './numbers';

/** Where the paper broker's prices come from: a deterministic synthetic feed, or one moved by hand. */

export interface Quote {
  bid: number;
  ask: number;
}

export interface PriceFeed {
  quote(spec: SymbolSpec, nowMs: number): Quote;
  /** A feed that also says when a market is open or closed (undefined: the symbol's session decides). */
  marketOpen?(spec: SymbolSpec, nowMs: number): boolean | undefined;
  /**
   * When the feed last quoted the symbol (ms since the epoch), which bounds how old the risk figures are
   * (src/risk/figures-age.ts). Absent or undefined: the price is current whenever it is read (the synthetic feed, a
   * symbol left at its baseline).
   */
  quotedAt?(spec: SymbolSpec): number | undefined;
}

/** The quote at a symbol's base price: bid = base − half the spread, ask = bid + spread. */
export function baselineQuote(spec: SymbolSpec): Quote {
  const spread = spec.spreadPips * spec.pip;
  const bid = roundTo(spec.basePrice - spread / 2, spec.digits);
  return { bid, ask: roundTo(bid + spread, spec.digits) };
}

/**
 * A deterministic, slowly moving feed: a function of time only (every terminal sees the same prices). The mid swings
 * by ±`amplitude` (relative, default 0.06 %) over `periodMs` (default 15 min) plus a smaller faster wave.
 */
export class SyntheticFeed implements PriceFeed {
  private readonly amplitude: number;
  private readonly periodMs: number;

  constructor(options: { amplitude?: number; periodMs?: number } = {}) {
    this.amplitude = options.amplitude ?? 0.0006;
    this.periodMs = options.periodMs ?? 15 * 60_000;
  }

  quote(spec: SymbolSpec, nowMs: number): Quote {
    let phase = 0;
    for (const ch of spec.name) phase = (phase * 31 + ch.charCodeAt(0)) % 6283;
    phase /= 1000;
    const t = (2 * Math.PI * nowMs) / this.periodMs;
    const move = this.amplitude * Math.sin(t + phase) + (this.amplitude / 3) * Math.sin(t * 9.3 + 2 * phase);
    const spread = spec.spreadPips * spec.pip;
    const bid = roundTo(spec.basePrice * (1 + move) - spread / 2, spec.digits);
    return { bid, ask: roundTo(bid + spread, spec.digits) };
  }
}

/** A feed the caller moves by hand (tests). Unset symbols sit at their baseline quote; a set one is as old as its set(). */
export class ManualFeed implements PriceFeed {
  private readonly quotes = new Map<string, Quote & { at: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  set(symbol: string, bid: number, ask: number): void {
    if (!(ask >= bid)) throw new Error(`ask ${ask} is below bid ${bid}`);
    this.quotes.set(symbol.toUpperCase(), { bid, ask, at: this.clock() });
  }

  quote(spec: SymbolSpec): Quote {
    const q = this.quotes.get(spec.name);
    return q ? { bid: q.bid, ask: q.ask } : baselineQuote(spec);
  }

  quotedAt(spec: SymbolSpec): number | undefined {
    return this.quotes.get(spec.name)?.at;
  }
}

export function mid(q: Quote): number {
  return (q.bid + q.ask) / 2;
}
