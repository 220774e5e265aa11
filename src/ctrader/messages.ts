/**
 * The part of cTrader Open API this connector speaks, as Spotware publishes it (openapi-proto-messages; docs/ctrader-connector.md
 * names the release and the registry package the tests read it from): payload type numbers from `ProtoOAPayloadType`
 * (OpenApiModelMessages.proto) and `ProtoPayloadType` (OpenApiCommonModelMessages.proto), enum values from
 * OpenApiModelMessages.proto, field names from OpenApiMessages.proto. The JSON form (port 5036) wraps every message
 * as `{clientMsgId, payloadType, payload}` with the same field names; enums travel as their numbers.
 * test/unit/ctrader-messages.test.ts checks every number here against the published definitions.
 */

export const PayloadType = {
  // ProtoPayloadType (OpenApiCommonModelMessages.proto)
  ERROR_RES: 50,
  HEARTBEAT_EVENT: 51,
  // ProtoOAPayloadType (OpenApiModelMessages.proto)
  PROTO_OA_APPLICATION_AUTH_REQ: 2100,
  PROTO_OA_APPLICATION_AUTH_RES: 2101,
  PROTO_OA_ACCOUNT_AUTH_REQ: 2102,
  PROTO_OA_ACCOUNT_AUTH_RES: 2103,
  PROTO_OA_NEW_ORDER_REQ: 2106,
  PROTO_OA_CANCEL_ORDER_REQ: 2108,
  PROTO_OA_AMEND_ORDER_REQ: 2109,
  PROTO_OA_AMEND_POSITION_SLTP_REQ: 2110,
  PROTO_OA_CLOSE_POSITION_REQ: 2111,
  PROTO_OA_ASSET_LIST_REQ: 2112,
  PROTO_OA_ASSET_LIST_RES: 2113,
  PROTO_OA_SYMBOLS_LIST_REQ: 2114,
  PROTO_OA_SYMBOLS_LIST_RES: 2115,
  PROTO_OA_SYMBOL_BY_ID_REQ: 2116,
  PROTO_OA_SYMBOL_BY_ID_RES: 2117,
  PROTO_OA_SYMBOLS_FOR_CONVERSION_REQ: 2118,
  PROTO_OA_SYMBOLS_FOR_CONVERSION_RES: 2119,
  PROTO_OA_TRADER_REQ: 2121,
  PROTO_OA_TRADER_RES: 2122,
  PROTO_OA_RECONCILE_REQ: 2124,
  PROTO_OA_RECONCILE_RES: 2125,
  PROTO_OA_EXECUTION_EVENT: 2126,
  PROTO_OA_SUBSCRIBE_SPOTS_REQ: 2127,
  PROTO_OA_SUBSCRIBE_SPOTS_RES: 2128,
  PROTO_OA_SPOT_EVENT: 2131,
  PROTO_OA_ORDER_ERROR_EVENT: 2132,
  PROTO_OA_DEAL_LIST_REQ: 2133,
  PROTO_OA_DEAL_LIST_RES: 2134,
  PROTO_OA_ERROR_RES: 2142,
  PROTO_OA_ACCOUNTS_TOKEN_INVALIDATED_EVENT: 2147,
  PROTO_OA_CLIENT_DISCONNECT_EVENT: 2148,
  PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_REQ: 2149,
  PROTO_OA_GET_ACCOUNTS_BY_ACCESS_TOKEN_RES: 2150,
  PROTO_OA_ACCOUNT_DISCONNECT_EVENT: 2164,
  PROTO_OA_REFRESH_TOKEN_REQ: 2173,
  PROTO_OA_REFRESH_TOKEN_RES: 2174,
  PROTO_OA_ORDER_LIST_REQ: 2175,
  PROTO_OA_ORDER_LIST_RES: 2176,
  PROTO_OA_ORDER_DETAILS_REQ: 2181,
  PROTO_OA_ORDER_DETAILS_RES: 2182,
  PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ: 2187,
  PROTO_OA_GET_POSITION_UNREALIZED_PNL_RES: 2188,
} as const;

/** ProtoOATradeSide */
export const TradeSide = { BUY: 1, SELL: 2 } as const;
/** ProtoOAOrderType (the ones the 17 actions need, and the broker's own SL/TP order that closes a position at its level) */
export const OrderType = { MARKET: 1, LIMIT: 2, STOP: 3, STOP_LOSS_TAKE_PROFIT: 4, STOP_LIMIT: 6 } as const;
/** ProtoOATimeInForce */
export const TimeInForce = { GOOD_TILL_DATE: 1, GOOD_TILL_CANCEL: 2 } as const;
/** ProtoOAPositionStatus */
export const PositionStatus = { POSITION_STATUS_OPEN: 1, POSITION_STATUS_CLOSED: 2 } as const;
/** ProtoOAOrderStatus */
export const OrderStatus = {
  ORDER_STATUS_ACCEPTED: 1,
  ORDER_STATUS_FILLED: 2,
  ORDER_STATUS_REJECTED: 3,
  ORDER_STATUS_EXPIRED: 4,
  ORDER_STATUS_CANCELLED: 5,
} as const;
/** ProtoOAExecutionType */
export const ExecutionType = {
  ORDER_ACCEPTED: 2,
  ORDER_FILLED: 3,
  ORDER_REPLACED: 4,
  ORDER_CANCELLED: 5,
  ORDER_EXPIRED: 6,
  ORDER_REJECTED: 7,
  ORDER_CANCEL_REJECTED: 8,
  SWAP: 9,
  DEPOSIT_WITHDRAW: 10,
  ORDER_PARTIAL_FILL: 11,
  BONUS_DEPOSIT_WITHDRAW: 12,
} as const;
/** ProtoOADealStatus: only these two moved volume. */
export const DealStatus = { FILLED: 2, PARTIALLY_FILLED: 3 } as const;

/**
 * Error code names (ProtoErrorCode in OpenApiCommonModelMessages.proto, ProtoOAErrorCode in
 * OpenApiModelMessages.proto) the connector acts on; every other name is passed through to the report as is.
 */
export const ErrorCode = {
  UNSUPPORTED_MESSAGE: 'UNSUPPORTED_MESSAGE',
  INVALID_REQUEST: 'INVALID_REQUEST',
  MARKET_CLOSED: 'MARKET_CLOSED',
  BLOCKED_PAYLOAD_TYPE: 'BLOCKED_PAYLOAD_TYPE',
  OA_AUTH_TOKEN_EXPIRED: 'OA_AUTH_TOKEN_EXPIRED',
  ACCOUNT_NOT_AUTHORIZED: 'ACCOUNT_NOT_AUTHORIZED',
  ALREADY_LOGGED_IN: 'ALREADY_LOGGED_IN',
  CH_CLIENT_AUTH_FAILURE: 'CH_CLIENT_AUTH_FAILURE',
  CH_CLIENT_NOT_AUTHENTICATED: 'CH_CLIENT_NOT_AUTHENTICATED',
  CH_CLIENT_ALREADY_AUTHENTICATED: 'CH_CLIENT_ALREADY_AUTHENTICATED',
  CH_ACCESS_TOKEN_INVALID: 'CH_ACCESS_TOKEN_INVALID',
  CH_CTID_TRADER_ACCOUNT_NOT_FOUND: 'CH_CTID_TRADER_ACCOUNT_NOT_FOUND',
  REQUEST_FREQUENCY_EXCEEDED: 'REQUEST_FREQUENCY_EXCEEDED',
  ALREADY_SUBSCRIBED: 'ALREADY_SUBSCRIBED',
  SYMBOL_NOT_FOUND: 'SYMBOL_NOT_FOUND',
  NOT_ENOUGH_MONEY: 'NOT_ENOUGH_MONEY',
  POSITION_NOT_FOUND: 'POSITION_NOT_FOUND',
  ORDER_NOT_FOUND: 'ORDER_NOT_FOUND',
  TRADING_BAD_VOLUME: 'TRADING_BAD_VOLUME',
  TRADING_BAD_STOPS: 'TRADING_BAD_STOPS',
  TRADING_BAD_PRICES: 'TRADING_BAD_PRICES',
  TRADING_BAD_EXPIRATION_DATE: 'TRADING_BAD_EXPIRATION_DATE',
} as const;

/** Codes that mean "authorize this account again (after refreshing its token)", not "the order was refused". */
export const REAUTH_CODES: ReadonlySet<string> = new Set([
  ErrorCode.OA_AUTH_TOKEN_EXPIRED,
  ErrorCode.ACCOUNT_NOT_AUTHORIZED,
  ErrorCode.CH_ACCESS_TOKEN_INVALID,
]);

/** `ProtoMessage` in its JSON form. */
export interface Envelope {
  clientMsgId?: string;
  payloadType: number;
  payload?: Record<string, unknown>;
}

/** ProtoOACtidTraderAccount: one trading account an access token may use (ProtoOAGetAccountListByAccessTokenRes). */
export interface CtidTraderAccount {
  ctidTraderAccountId: number;
  isLive?: boolean;
  traderLogin?: number;
  brokerTitleShort?: string;
}

// ---- the entities the connector reads (OpenApiModelMessages.proto); int64 fields arrive as JSON numbers ----------

export interface LightSymbol {
  symbolId: number;
  symbolName?: string;
  enabled?: boolean;
  /** UI order, lowest first */
  sortingNumber?: number;
  baseAssetId?: number;
  quoteAssetId?: number;
}

export interface Asset {
  assetId: number;
  /** e.g. USD, EUR */
  name: string;
}

export interface FullSymbol {
  symbolId: number;
  digits: number;
  pipPosition: number;
  /** in cents of units */
  maxVolume?: number;
  minVolume?: number;
  stepVolume?: number;
  /** Lot size of the symbol, in cents of units. */
  lotSize?: number;
}

interface TradeData {
  symbolId: number;
  /** in cents of units */
  volume: number;
  tradeSide: number;
  openTimestamp?: number;
  label?: string;
  comment?: string;
  closeTimestamp?: number;
}

export interface Position {
  positionId: number;
  tradeData: TradeData;
  positionStatus: number;
  swap: number;
  price?: number;
  stopLoss?: number;
  takeProfit?: number;
  utcLastUpdateTimestamp?: number;
  /** Unrealized commission, in the deposit currency × 10^moneyDigits. */
  commission?: number;
  /** Margin used by the position, in the deposit currency × 10^moneyDigits. */
  usedMargin?: number;
  moneyDigits?: number;
}

export interface Order {
  orderId: number;
  tradeData: TradeData;
  orderType: number;
  orderStatus: number;
  expirationTimestamp?: number;
  executionPrice?: number;
  executedVolume?: number;
  limitPrice?: number;
  stopPrice?: number;
  stopLoss?: number;
  takeProfit?: number;
  slippageInPoints?: number;
  clientOrderId?: string;
  timeInForce?: number;
  positionId?: number;
  relativeStopLoss?: number;
  relativeTakeProfit?: number;
  closingOrder?: boolean;
  utcLastUpdateTimestamp?: number;
  /** "If TRUE then order was stopped out from server side." */
  isStopOut?: boolean;
}

/** ProtoOAClosePositionDetail: money fields × 10^moneyDigits, in the deposit currency. */
interface ClosePositionDetail {
  entryPrice: number;
  grossProfit: number;
  swap: number;
  commission: number;
  balance: number;
  closedVolume?: number;
  moneyDigits?: number;
}

export interface Deal {
  dealId: number;
  orderId: number;
  positionId: number;
  volume: number;
  filledVolume: number;
  symbolId: number;
  createTimestamp?: number;
  executionTimestamp?: number;
  executionPrice?: number;
  tradeSide: number;
  dealStatus: number;
  commission?: number;
  /** Present on a closing deal only. */
  closePositionDetail?: ClosePositionDetail;
  moneyDigits?: number;
}

export interface ExecutionEvent {
  ctidTraderAccountId: number;
  executionType: number;
  position?: Position;
  order?: Order;
  deal?: Deal;
  errorCode?: string;
  isServerEvent?: boolean;
}

export interface Trader {
  ctidTraderAccountId: number;
  balance: number;
  depositAssetId: number;
  moneyDigits?: number;
}

export const PAYLOAD_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(PayloadType).map(([name, n]) => [n, name]));
