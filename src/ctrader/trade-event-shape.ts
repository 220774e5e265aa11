/**
 * The protocol 1.5 trade event as /work/briefs/trade-events.md fixes it, until src/domain/trade-events.ts (the
 * service's zod schemas) is merged; then this file goes and the mapping imports the domain's type.
 */
type Common = { eventId: string; at: string; ticket: string; symbol: string; commandId?: string };
type Side = 'buy' | 'sell';
export type TradeEvent =
  | (Common & { type: 'position_opened'; side: Side; volume: number; price: number; sl?: number; tp?: number; fromOrder?: string })
  | (Common & { type: 'position_modified'; sl: number | null; tp: number | null; cause: 'command' | 'broker' | 'management' })
  | (Common & {
      type: 'position_closed';
      volume: number;
      remainingVolume: number;
      price: number;
      profit: number;
      commission: number;
      swap: number;
      cause: 'command' | 'stop_loss' | 'take_profit' | 'stop_out' | 'margin_call' | 'manual' | 'other';
    })
  | (Common & {
      type: 'order_placed';
      side: Side;
      orderType: 'limit' | 'stop' | 'stop_limit';
      volume: number;
      price: number;
      stopLimitPrice?: number;
      sl?: number;
      tp?: number;
      expiresAt?: string;
    })
  | (Common & { type: 'order_modified'; price?: number; sl?: number | null; tp?: number | null; cause: 'command' | 'broker' | 'management' })
  | (Common & { type: 'order_triggered'; positionTicket: string; price: number })
  | (Common & { type: 'order_expired' })
  | (Common & { type: 'order_cancelled'; cause: 'command' | 'broker' | 'stop_out' | 'manual' });

export interface BookPosition {
  ticket: string;
  symbol: string;
  side: Side;
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
  side: Side;
  orderType: 'limit' | 'stop' | 'stop_limit';
  volume: number;
  price: number;
  stopLimitPrice: number | null;
  sl: number | null;
  tp: number | null;
  placedAt: string;
  expiresAt: string | null;
}
export interface Book {
  takenAt: string;
  truncated: boolean;
  positions: BookPosition[];
  orders: BookOrder[];
}
