import { CONFORMANCE_SYMBOLS, type Quote, type SymbolSpec } from './driver';

/** Prices on the conformance suite's steered market (driver.ts CONFORMANCE_SYMBOLS), at each symbol's digits. */

export const SYMBOL_SPECS: Record<string, SymbolSpec> = Object.fromEntries(CONFORMANCE_SYMBOLS.map((s) => [s.name, s]));
const round = (symbol: string, v: number) => Number(v.toFixed(SYMBOL_SPECS[symbol]!.digits));
/** `pips` away from `from`, at the symbol's digits. */
export const away = (symbol: string, from: number, pips: number) => round(symbol, from + pips * SYMBOL_SPECS[symbol]!.pip);
/** Where the suite puts the symbol's market at the start. */
export const baseQuote = (symbol: string): Quote => ({
  bid: SYMBOL_SPECS[symbol]!.bid,
  ask: round(symbol, SYMBOL_SPECS[symbol]!.bid + SYMBOL_SPECS[symbol]!.spread),
});
/** A quote whose bid (or ask) is exactly `price`. */
export const bidAt = (symbol: string, price: number): Quote => ({ bid: price, ask: round(symbol, price + SYMBOL_SPECS[symbol]!.spread) });
export const askAt = (symbol: string, price: number): Quote => ({ bid: round(symbol, price - SYMBOL_SPECS[symbol]!.spread), ask: price });
