import type { Platform } from './broker-types';

/** How the paper broker says no, on each platform. */

export type RejectionKind =
  | 'invalid_request'
  | 'unknown_symbol'
  | 'bad_volume'
  | 'bad_price'
  | 'bad_stops'
  | 'market_closed'
  | 'no_money'
  | 'bad_expiry'
  | 'position_not_found'
  | 'order_not_found';

/** What a rejection looks like on each platform: MT5 trade-server retcodes, cTrader Open API error codes. */
export const RETCODES: Record<RejectionKind, Record<Platform, { retcode: number | string; message: string }>> = {
  invalid_request: { mt5: { retcode: 10013, message: 'Invalid request' }, ctrader: { retcode: 'INVALID_REQUEST', message: 'Invalid request' } },
  unknown_symbol: { mt5: { retcode: 10013, message: 'Invalid request' }, ctrader: { retcode: 'SYMBOL_NOT_FOUND', message: 'Symbol not found' } },
  bad_volume: { mt5: { retcode: 10014, message: 'Invalid volume' }, ctrader: { retcode: 'TRADING_BAD_VOLUME', message: 'Bad volume' } },
  bad_price: { mt5: { retcode: 10015, message: 'Invalid price' }, ctrader: { retcode: 'TRADING_BAD_PRICES', message: 'Bad prices' } },
  bad_stops: { mt5: { retcode: 10016, message: 'Invalid stops' }, ctrader: { retcode: 'TRADING_BAD_STOPS', message: 'Bad stops' } },
  market_closed: { mt5: { retcode: 10018, message: 'Market is closed' }, ctrader: { retcode: 'MARKET_CLOSED', message: 'Market is closed' } },
  no_money: { mt5: { retcode: 10019, message: 'No money' }, ctrader: { retcode: 'NOT_ENOUGH_MONEY', message: 'Not enough money' } },
  bad_expiry: {
    mt5: { retcode: 10022, message: 'Invalid expiration' },
    ctrader: { retcode: 'TRADING_BAD_EXPIRATION_DATE', message: 'Bad expiration date' },
  },
  position_not_found: {
    mt5: { retcode: 10036, message: "Position doesn't exist" },
    ctrader: { retcode: 'POSITION_NOT_FOUND', message: 'Position not found' },
  },
  order_not_found: { mt5: { retcode: 4754, message: 'Order not found' }, ctrader: { retcode: 'ORDER_NOT_FOUND', message: 'Order not found' } },
};

/** The bridge-side max-open-positions guard; a service reason code, passed through as the outcome's reason. */
export const RISK_MAX_OPEN_POSITIONS = 'risk_max_open_positions';
/** MT5 TRADE_RETCODE_NO_CHANGES: a modify that changes nothing. A success (reported `done`), like MT5 treats it. */
export const MT5_NO_CHANGES = 10025;

/** A broker refusal, thrown by a check and turned into a rejected result by PaperBroker.execute. */
export class Rejected extends Error {
  constructor(
    readonly retcode: number | string,
    message: string,
  ) {
    super(message);
  }
}
