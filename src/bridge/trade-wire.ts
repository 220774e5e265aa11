/**
 * The trade events and the book a bridge sends on `POST /bridge/v1/trades` (protocol 1.5, docs/bridge-protocol.md),
 * as the bridge side builds them. The service validates them with its own schemas (src/domain/trade-events.ts).
 */

export type TradeSide = 'buy' | 'sell';
export type TradeOrderType = 'limit' | 'stop' | 'stop_limit';
export type CloseCause = 'command' | 'stop_loss' | 'take_profit' | 'stop_out' | 'margin_call' | 'manual' | 'other';
export type ModifyCause = 'command' | 'broker' | 'management';
export type CancelCause = 'command' | 'broker' | 'stop_out' | 'manual';

interface EventBase {
  /** Unique per account and stable across resends and restarts: derived from the broker (a deal, an order and its state). */
  eventId: string;
  /** When the broker did it (ISO 8601 with offset). */
  at: string;
  ticket: string;
  symbol: string;
  /** The service command that caused it, when the bridge knows it. */
  commandId?: string;
}

export type TradeEvent = EventBase &
  (
    | { type: 'position_opened'; side: TradeSide; volume: number; price: number; sl?: number; tp?: number; fromOrder?: string }
    | { type: 'position_modified'; sl: number | null; tp: number | null; cause: ModifyCause }
    | {
        type: 'position_closed';
        volume: number;
        remainingVolume: number;
        price: number;
        profit: number;
        commission: number;
        swap: number;
        cause: CloseCause;
      }
    | {
        type: 'order_placed';
        side: TradeSide;
        orderType: TradeOrderType;
        volume: number;
        price: number;
        stopLimitPrice?: number;
        sl?: number;
        tp?: number;
        expiresAt?: string;
      }
    | { type: 'order_modified'; price?: number; sl?: number | null; tp?: number | null; cause: ModifyCause }
    | { type: 'order_triggered'; positionTicket: string; price: number }
    | { type: 'order_expired' }
    | { type: 'order_cancelled'; cause: CancelCause }
  );

export interface BookPosition {
  ticket: string;
  symbol: string;
  side: TradeSide;
  volume: number;
  openPrice: number;
  sl: number | null;
  tp: number | null;
  openedAt: string;
  profit: number;
  swap: number;
  commission: number;
}

export interface BookOrder {
  ticket: string;
  symbol: string;
  side: TradeSide;
  orderType: TradeOrderType;
  volume: number;
  price: number;
  stopLimitPrice: number | null;
  sl: number | null;
  tp: number | null;
  placedAt: string;
  expiresAt: string | null;
}

/** The positions-and-orders snapshot: at most BOOK_MAX of each, oldest first, `truncated` when the broker held more. */
export interface Book {
  takenAt: string;
  truncated: boolean;
  positions: BookPosition[];
  orders: BookOrder[];
}

export const BOOK_MAX = 1_000;
/** At most this many events a call (the service's bound). */
export const TRADE_EVENTS_PER_CALL = 100;

export type TradeEventResult = { eventId: string; result: 'recorded' | 'duplicate' | 'refused'; reason?: string };

export interface TradesAnswer {
  events: TradeEventResult[];
  book: 'recorded' | 'absent';
}

/** The first BOOK_MAX positions and orders, oldest first, and whether the broker held more. */
export function boundedBook(takenAt: string, positions: BookPosition[], orders: BookOrder[]): Book {
  const oldestFirst = <T>(items: T[], at: (t: T) => string) => items.slice().sort((a, b) => Date.parse(at(a)) - Date.parse(at(b)));
  return {
    takenAt,
    truncated: positions.length > BOOK_MAX || orders.length > BOOK_MAX,
    positions: oldestFirst(positions, (p) => p.openedAt).slice(0, BOOK_MAX),
    orders: oldestFirst(orders, (o) => o.placedAt).slice(0, BOOK_MAX),
  };
}
