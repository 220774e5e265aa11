/**
 * The broker refusals of a close or a cancel that say "not now" rather than "no" (docs/risk-sizing.md, "Stop-out"):
 * nothing was executed and the same request may pass a moment later. The stop-out tries such a ticket again, a
 * bounded number of times, rather than leave open a position the owner wanted closed. Each is a refusal of the
 * request itself, so trying again cannot close twice (and the runner looks whether the ticket is still open first).
 */
const TRANSIENT: ReadonlySet<string> = new Set([
  // MT5 trade-server retcodes: requote, price changed, no prices, request timed out, no connection to the server.
  '10004',
  '10020',
  '10021',
  '10012',
  '10031',
  // cTrader Open API (ProtoOAErrorCode / ProtoErrorCode): no quotes, deal timed out and rejected, rate limited.
  'NO_QUOTES',
  'TIMEOUT_ERROR',
  'REQUEST_FREQUENCY_EXCEEDED',
  'BLOCKED_PAYLOAD_TYPE',
]);

export function isTransientRefusal(code: number | string | undefined): boolean {
  return code !== undefined && TRANSIENT.has(String(code));
}
