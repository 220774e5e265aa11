import type { DoubleSymbol } from './ctrader-symbols';

/** What a test sets up the cTrader Open API double with (test/helpers/ctrader-double.ts). */

export interface DoubleAccountSpec {
  ctid: number;
  accessToken: string;
  refreshToken: string;
  balance?: number;
  /** The account's currency; default USD. */
  depositAsset?: string;
  /** ProtoOACtidTraderAccount's fields, as ProtoOAGetAccountListByAccessTokenRes lists it. */
  isLive?: boolean;
  traderLogin?: number;
  brokerTitleShort?: string;
}

export interface DoubleOptions {
  clientId: string;
  clientSecret: string;
  accounts: DoubleAccountSpec[];
  symbols?: DoubleSymbol[];
  heartbeatMs?: number;
  /** Requests per second per connection before BLOCKED_PAYLOAD_TYPE; Open API's is 50. */
  limitPerSecond?: number;
}
