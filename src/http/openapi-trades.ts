import type { JsonSchema } from './openapi-signal';
import { operation, str } from './openapi-owner';

/** The trade journal on the owner API in the OpenAPI document (docs/trades.md). Every answer is `Cache-Control: no-store`. */

const instant: JsonSchema = { type: 'string', format: 'date-time' };
/** The optional `management` of a trade or position (protocol 1.6), present once its bridge's trade management acted. */
const MANAGEMENT =
  'management? (present once the bridge’s trade management acted: trailActiveAt (price or null), stopMoves (moves with cause trailing_stop or ' +
  'breakeven_trigger), breakevenAt (time or null), levelsHit (take-profit levels closed), closedOpposite (closed by a reverse))';

export function ownerTradePaths() {
  const read = (summary: string, ok: string, extra: { params?: string[]; query?: Record<string, JsonSchema> } = {}) => ({
    get: operation({ summary, ok: ['200', ok], params: ['accountId', ...(extra.params ?? [])], ...(extra.query ? { query: extra.query } : {}) }),
  });
  return {
    '/v1/owner/accounts/{accountId}/book': read(
      'Open positions and pending orders now, from the bridge’s trade events and its last book (protocol 1.5)',
      'asOf (the book’s takenAt or the last event’s time, whichever is later; null: nothing reported yet), ageSeconds, ' +
        'reportedByBridge (false: this account’s bridge does not send trade events; bridgeVersion says which it is), ' +
        'positions (ticket, symbol, side, volume, openPrice, sl, tp, openedAt, profit (floating, from the last book; null when not in it), ' +
        'swap, commission, tradeId, signalId?, ' +
        MANAGEMENT +
        ') and orders (ticket, symbol, side, orderType, volume, price, stopLimitPrice, sl, tp, placedAt, expiresAt, tradeId, signalId?).',
    ),
    '/v1/owner/accounts/{accountId}/trades': read(
      'The account’s trades, newest first (open ones by when they began, closed ones by when they closed), filtered and paged',
      'trades (TradeRecords without their events: tradeId, symbol, side, status pending|open|closed|cancelled|expired, origin signal|outside, ' +
        'signalId?, openedAt, openPrice, volume, closedVolume, sl, tp, realizedProfit, commission, swap, closedAt, closeCause, linkedSignals, ' +
        MANAGEMENT +
        ', …) and nextCursor (null on the last page).',
      {
        query: {
          status: { enum: ['open', 'closed', 'all'] },
          symbol: { type: 'string', maxLength: 32 },
          signalId: { type: 'string', maxLength: 64 },
          from: instant,
          to: instant,
          limit: { type: 'integer', minimum: 1, maximum: 200 },
          cursor: str,
        },
      },
    ),
    '/v1/owner/accounts/{accountId}/trades/{tradeId}': read(
      'One trade with its events (at most 200; older ones after the first are folded into foldedEvents)',
      `The TradeRecord with events and ${MANAGEMENT}.`,
      { params: ['tradeId'] },
    ),
    '/v1/owner/accounts/{accountId}/equity': read(
      'The equity curve: the bridge’s account figures sampled at most once a minute, within the journal’s retention',
      'currency and points (at, balance, equity), at most 2,000, thinned evenly when the range holds more.',
      { query: { from: instant, to: instant } },
    ),
    '/v1/owner/accounts/{accountId}/day': read(
      'Today in the account’s loss-guard time zone: realized P&L, the daily loss limit and the drawdown against their limits, the last 30 days’ P&L',
      'day, timeZone, realizedProfit, closes (today’s closes, partial ones too, newest first, at most 200: tradeId, symbol, side, signalId?, at, ' +
        'volume, remainingVolume, price, profit (net of commission and swap), cause; their profits add up to realizedProfit), closesTruncated, ' +
        'dailyLossLimit (basis amount|percent, amount, percent (of dayOpenEquity), used 0..1, loss, dayOpenEquity) or null, ' +
        'drawdown (current %, max %, used 0..1, peakEquity) or null, equity, figuresAt, days (day, profit; the last 30, oldest first).',
    ),
    '/v1/owner/signals/{signalId}/trades': {
      get: operation({
        summary: 'Every trade a signal opened, modified or closed, on all your accounts',
        ok: ['200', `trades (TradeRecords without their events, each with ${MANAGEMENT}), newest first.`],
        params: ['signalId'],
      }),
    },
  };
}
