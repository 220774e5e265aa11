import type { TradeCallbackEvent } from '../domain/callback';
import type { TradeEvent, TradeRecord } from '../domain/trade-events';

export type { TradeCallbackEvent };

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

function stops(event: { sl?: number; tp?: number }): { sl?: number | null; tp?: number | null } {
  return { ...(event.sl !== undefined ? { sl: event.sl } : {}), ...(event.tp !== undefined ? { tp: event.tp } : {}) };
}
