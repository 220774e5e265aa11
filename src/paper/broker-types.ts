import type { BridgeCommand } from '../domain/bridge-protocol';
import type { Action } from '../domain/actions';
import type { SymbolNaming, SymbolSpec } from './instruments';
import type { PriceFeed } from './feeds';
import type { ManagementAsked } from '../bridge-kit/trade-management';

/** The paper broker's vocabulary: its state (positions, pending orders), the commands it runs, their results and the operations it reports. */

export type Platform = 'mt5' | 'ctrader';
export type Side = 'buy' | 'sell';
export type OrderType = 'limit' | 'stop' | 'stop_limit';

export interface Position {
  ticket: string;
  /** The broker symbol as the command named it (e.g. EURUSD.m). */
  symbol: string;
  canonical: string;
  side: Side;
  volume: number;
  openPrice: number;
  openTime: string;
  sl: number | null;
  tp: number | null;
  commandId: string | null;
  action: Action | null;
  /** The entry's trade management (protocol 1.6), managed by the terminal from its fill. */
  management?: ManagementAsked;
}

export interface PendingOrder {
  ticket: string;
  symbol: string;
  canonical: string;
  side: Side;
  /** A triggered stop-limit becomes a `limit` with the same ticket. */
  type: OrderType;
  /** Entry price (the limit price of a stop-limit). */
  price: number;
  /** Trigger price of an untriggered stop-limit. */
  stopLimitPrice: number | null;
  volume: number;
  sl: number | null;
  tp: number | null;
  expiry: string | null;
  placedTime: string;
  commandId: string | null;
  action: Action | null;
  /** The entry's trade management (protocol 1.6): the position it fills takes it over. */
  management?: ManagementAsked;
}

/** What became of a pending order that left the book (the broker's order history, as far as the stop-out needs it). */
export interface OrderGone {
  ticket: string;
  fate: 'cancelled' | 'expired' | 'filled';
  /** The position a fill opened (the paper broker gives it the order's ticket). */
  position?: string;
}

export interface BrokerState {
  nextTicket: number;
  balance: number;
  positions: Position[];
  orders: PendingOrder[];
  /** The last GONE_ORDERS_KEPT orders to leave the book, oldest first (absent in a state saved before 2026-11-26). */
  gone?: OrderGone[];
  /** The next operation's deal number (absent in a state saved before 2026-11-26: counts from 1). */
  nextDeal?: number;
}

/** A bridge command as the broker needs it; `maxOpenPositions` is the optional bridge-side guard. */
export type BrokerCommand = Partial<Omit<BridgeCommand, 'action'>> & { action: Action; maxOpenPositions?: number };

export interface ExecutionResult {
  /** filled: an entry was accepted (position or pending order); done: a non-opening action ran. */
  status: 'filled' | 'done' | 'rejected';
  ticket?: string | null;
  price?: number | null;
  volume?: number | null;
  retcode?: number | string | null;
  message?: string | null;
}

export type OpKind =
  | 'open' // market order filled: a new position
  | 'place' // pending order placed
  | 'trigger' // pending order filled: a new position (same ticket)
  | 'stop_limit_trigger' // stop-limit reached its trigger: now a limit order (same ticket)
  | 'close' // position closed (by command, SL, TP, by hand in the terminal, by the stop-out)
  | 'partial_close'
  | 'modify' // position SL/TP (modify_sl, modify_tp, breakeven)
  | 'modify_order' // pending order price/trigger/SL/TP/expiry
  | 'cancel' // pending order removed (by command, or at trigger for lack of margin)
  | 'expire'; // pending order reached its expiry

export interface BrokerOp {
  time: string;
  /** The command that performed it; for market-driven ops (cause ≠ command), the command that created the ticket. */
  commandId: string | null;
  action: Action | null;
  op: OpKind;
  ticket: string;
  symbol: string;
  side: Side;
  volume: number;
  price: number | null;
  /**
   * `manual`: the trader did it by hand in the terminal; `stop_out`: the bridge's stop-out (protocol 1.4) did;
   * `trailing_stop`, `breakeven_trigger`, `take_profit_level`, `close_opposite`: the trade management (protocol 1.6).
   */
  cause: 'command' | 'price' | 'sl' | 'tp' | 'expiry' | 'no_money' | 'manual' | 'stop_out' | ManagementCause;
  /**
   * The broker's number for this operation, counted in its state: what makes a trade event's eventId stable across
   * restarts (an operation replayed after a crash that lost the state gets the same number again).
   */
  deal?: number;
  /** What a close left open (0: fully closed). */
  remainingVolume?: number;
  orderType?: OrderType;
  stopLimitPrice?: number | null;
  sl?: number | null;
  tp?: number | null;
  expiry?: string | null;
  profit?: number;
  balance?: number;
  /** A trailing stop's move: the closing price at which the trail became active. */
  trailActiveAt?: number;
}

type ManagementCause = 'trailing_stop' | 'breakeven_trigger' | 'take_profit_level' | 'close_opposite';

export interface BrokerOptions {
  platform: Platform;
  clock?: () => number;
  feed?: PriceFeed;
  symbols?: readonly SymbolSpec[];
  naming?: Partial<SymbolNaming>;
  /** Account currency is USD. Default 100 000. */
  balance?: number;
  /** Default 100 (margin = notional / leverage). */
  leverage?: number;
  /** First ticket number. Default 1000001. */
  firstTicket?: number;
  /** A state from `snapshot()` to continue from (a restarted terminal). */
  state?: BrokerState;
}
