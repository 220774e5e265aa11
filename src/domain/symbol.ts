/** An instrument symbol as a signal, a risk rule or a filter may name it: 1 to 32 letters, digits or ._#-/. */
export const SYMBOL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._#\-/]{0,31}$/;

/**
 * What a refused symbol or id most likely is, for the 400's message: a template's placeholder left in (TradingView's
 * `{{ticker}}` outside an alert's message, or `<POSITION_TICKET>` of docs/integrations/tradingview.md) or TradingView's
 * exchange prefix (`FX:EURUSD`, from `{{exchange}}:{{ticker}}`). Undefined when nothing points to either. Only a bounded
 * piece is repeated back: a placeholder (at most 30 characters between its brackets, which a generated credential never
 * holds) or an exchange code of at most 15 characters (every credential has at least 16).
 */
export function refusedValueHint(value: unknown, field: 'symbol' | 'id'): string | undefined {
  if (typeof value !== 'string') return undefined;
  const curly = /\{\{\s*[^{}]{0,30}\}\}/.exec(value);
  if (curly)
    return `${curly[0]} is a TradingView placeholder left unfilled: TradingView fills it only in an alert's message, so write the value or put the template in the alert's message box`;
  const angle = /<[^<>]{1,30}>/.exec(value);
  if (angle) return `${angle[0]} is a template's placeholder: replace it, brackets included, with the value`;
  if (field === 'symbol') {
    const prefixed = /^([A-Za-z0-9_]{1,15}):([A-Za-z0-9][A-Za-z0-9._#\-/]{0,31})$/.exec(value);
    if (prefixed)
      return `${value} carries an exchange prefix (${prefixed[1]}:): send the symbol alone, ${prefixed[2]} (TradingView's {{ticker}}, not {{exchange}}:{{ticker}})`;
  }
  return undefined;
}
