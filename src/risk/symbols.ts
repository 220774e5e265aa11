import type { SymbolMap } from '../domain/risk-settings';

/**
 * The trader's symbol to the broker's: an alias wins (XAUUSD → GOLD, taken as written), otherwise prefix and suffix
 * wrap the symbol (EURUSD → EURUSD.m). Case is preserved; alias lookup ignores case.
 */
export function mapSymbol(symbol: string, map: SymbolMap): string {
  const wanted = symbol.toUpperCase();
  for (const [from, to] of Object.entries(map.aliases)) {
    if (from.toUpperCase() === wanted) return to;
  }
  return `${map.prefix}${symbol}${map.suffix}`;
}
