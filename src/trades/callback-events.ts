import type { TradeEvent, TradeRecord } from '../domain/trade-events';

/**
 * A recorded trade event as the owner's callbacks carry it (docs/callbacks.md, the `position.*` and `order.*` types).
 * The delivery is the `poll-exits` branch's `publishTradeEvent(owner, event)` (src/callbacks/trade-events.ts); this
 * is the shape it takes, so the journal needs nothing of the callbacks' code.
 */
type Side = 'buy' | 'sell';
type Stop = number | null;
interface TradeData {
  accountId: string;
  tradeId: string;
  symbol: string;
  signalId?: string;
}
interface TradeCallbackData {
  'position.opened': TradeData & { side: Side; volume: number; price: number; sl?: Stop; tp?: Stop };
  'position.modified': TradeData & { sl: Stop; tp: Stop; cause: string };
  'position.closed': TradeData & {
    side: Side;
    volume: number;
    remainingVolume?: number;
    price: number;
    profit: number;
    commission: number;
    swap: number;
    cause: string;
  };
  'order.placed': TradeData & { side: Side; orderType: string; volume: number; price: number; sl?: Stop; tp?: Stop; expiresAt?: string | null };
  'order.triggered': TradeData & { positionTicket: string; price: number };
  'order.expired': TradeData;
  'order.cancelled': TradeData & { cause: string };
}
type TradeCallbackType = keyof TradeCallbackData;
export type TradeCallbackEvent = {
  [T in TradeCallbackType]: { eventId: string; type: T; at: string; data: TradeCallbackData[T] };
}[TradeCallbackType];

/**
 * Starts the delivery of one event to the owner's endpoints (once per account and eventId, however often called).
 * Resolves when started, when the owner has no endpoint for it, or when it can never be published; rejects when it
 * should be tried again (Temporal unavailable): the bridge's call is then answered 503 and sent again.
 */
export type PublishTradeEvent = (owner: string, event: TradeCallbackEvent) => Promise<unknown>;

/** The callback of a bridge's event, about the trade it ended in; undefined for an event without a callback type. */
export function tradeCallbackEventOf(event: TradeEvent, trade: TradeRecord): TradeCallbackEvent | undefined {
  const base = { accountId: trade.accountId, tradeId: trade.tradeId, symbol: event.symbol, ...(trade.signalId ? { signalId: trade.signalId } : {}) };
  const head = { eventId: event.eventId, at: event.at };
  switch (event.type) {
    case 'position_opened':
      return { ...head, type: 'position.opened', data: { ...base, side: event.side, volume: event.volume, price: event.price, ...stops(event) } };
    case 'position_modified':
      return { ...head, type: 'position.modified', data: { ...base, sl: event.sl, tp: event.tp, cause: event.cause } };
    case 'position_closed': {
      const { volume, remainingVolume, price, profit, commission, swap, cause } = event;
      return { ...head, type: 'position.closed', data: { ...base, side: trade.side, volume, remainingVolume, price, profit, commission, swap, cause } };
    }
    case 'order_placed':
      return {
        ...head,
        type: 'order.placed',
        data: {
          ...base,
          side: event.side,
          orderType: event.orderType,
          volume: event.volume,
          price: event.price,
          ...stops(event),
          expiresAt: event.expiresAt ?? null,
        },
      };
    case 'order_triggered':
      return { ...head, type: 'order.triggered', data: { ...base, positionTicket: event.positionTicket, price: event.price } };
    case 'order_expired':
      return { ...head, type: 'order.expired', data: base };
    case 'order_cancelled':
      return { ...head, type: 'order.cancelled', data: { ...base, cause: event.cause } };
    case 'order_modified':
      return undefined;
  }
}

function stops(event: { sl?: number; tp?: number }): { sl?: Stop; tp?: Stop } {
  return { ...(event.sl !== undefined ? { sl: event.sl } : {}), ...(event.tp !== undefined ? { tp: event.tp } : {}) };
}
