import { MAX_EVENTS_PER_TRADE, type TradeCloseCause, type TradeEvent, type TradeRecord, type TradeStatus } from '../domain/trade-events';
import { managementOf } from './management';
import { ORDER_TRADE_PREFIX } from '../domain/ticket';

/**
 * What one event does to the trades it names (docs/trades.md): pure, so the journal can run it again on fresh records
 * when another call changed them first. Events may come in any order (a bridge resends after a restart): a trade an
 * event names that the journal does not hold is begun from what the event tells.
 */

/** An event as the journal applies it: a bridge's, or one the service derives from the book (reconciliation). */
export type JournalInput =
  | TradeEvent
  | {
      type: 'position_closed_unknown' | 'order_closed_unknown';
      eventId: string;
      at: string;
      ticket: string;
      symbol: string;
      commandId?: undefined;
    }
  | {
      type: 'position_seen_in_book';
      eventId: string;
      at: string;
      ticket: string;
      symbol: string;
      side: 'buy' | 'sell';
      volume: number;
      price: number;
      sl: number | null;
      tp: number | null;
      commandId?: undefined;
    }
  | {
      type: 'order_seen_in_book';
      eventId: string;
      at: string;
      ticket: string;
      symbol: string;
      side: 'buy' | 'sell';
      orderType: 'limit' | 'stop' | 'stop_limit';
      volume: number;
      price: number;
      sl: number | null;
      tp: number | null;
      expiresAt: string | null;
      commandId?: undefined;
    };

export interface EventContext {
  accountId: string;
  /** The signal of the event's commandId, when it is one of this account's commands. */
  signalId?: string;
  nowIso: string;
}

export const orderTradeId = (ticket: string): string => `${ORDER_TRADE_PREFIX}${ticket}`;

/** The trades (journal ids) an event reads and writes. */
export function tradesTouched(event: JournalInput): string[] {
  switch (event.type) {
    case 'position_opened':
      return event.fromOrder ? [event.ticket, orderTradeId(event.fromOrder)] : [event.ticket];
    case 'order_triggered':
      return [orderTradeId(event.ticket), event.positionTicket];
    case 'position_modified':
    case 'position_closed':
    case 'position_closed_unknown':
    case 'position_seen_in_book':
      return [event.ticket];
    default:
      return [orderTradeId(event.ticket)];
  }
}

/** The writes the event makes: each touched trade's new record, or null when it goes (a pending order that became a position). */
export function applyEvent(current: ReadonlyMap<string, TradeRecord>, event: JournalInput, ctx: EventContext): Map<string, TradeRecord | null> {
  const writes = new Map<string, TradeRecord | null>();
  const take = (id: string) => structuredClone(current.get(id));
  const side = 'side' in event ? event.side : undefined;
  switch (event.type) {
    case 'position_opened':
    case 'order_triggered': {
      const orderId = event.type === 'order_triggered' ? orderTradeId(event.ticket) : event.fromOrder && orderTradeId(event.fromOrder);
      const positionId = event.type === 'order_triggered' ? event.positionTicket : event.ticket;
      const order = orderId ? take(orderId) : undefined;
      let trade = merge(take(positionId), order, positionId);
      if (orderId && order) writes.set(orderId, null);
      trade ??= blank(positionId, ctx, event.symbol, side, 'open');
      if (trade.status === 'pending') trade.status = 'open';
      trade.openedAt ??= event.at;
      trade.openPrice = event.type === 'position_opened' || trade.openPrice === undefined ? event.price : trade.openPrice;
      if (event.type === 'position_opened') {
        trade.side = event.side;
        trade.openedAt = event.at;
        if (trade.status === 'open') trade.volume = Math.max(0, event.volume - trade.closedVolume);
        if (event.sl !== undefined) trade.sl = event.sl;
        if (event.tp !== undefined) trade.tp = event.tp;
        if (event.fromOrder) trade.orderTicket = event.fromOrder;
        linkOpening(trade, ctx, event.commandId);
      } else trade.orderTicket = event.ticket;
      writes.set(positionId, withEvent(trade, event, ctx));
      return writes;
    }
    case 'order_placed': {
      const id = orderTradeId(event.ticket);
      const trade = take(id) ?? blank(id, ctx, event.symbol, event.side, 'pending');
      Object.assign(trade, {
        side: event.side,
        orderTicket: event.ticket,
        orderType: event.orderType,
        orderPrice: event.price,
        ...(event.stopLimitPrice !== undefined ? { stopLimitPrice: event.stopLimitPrice } : {}),
        volume: event.volume,
        placedAt: event.at,
        ...(event.expiresAt ? { expiresAt: event.expiresAt } : {}),
      });
      if (event.sl !== undefined) trade.sl = event.sl;
      if (event.tp !== undefined) trade.tp = event.tp;
      linkOpening(trade, ctx, event.commandId);
      writes.set(id, withEvent(trade, event, ctx));
      return writes;
    }
    case 'position_seen_in_book':
    case 'order_seen_in_book': {
      const pending = event.type === 'order_seen_in_book';
      const id = pending ? orderTradeId(event.ticket) : event.ticket;
      const trade = take(id) ?? blank(id, ctx, event.symbol, event.side, pending ? 'pending' : 'open');
      Object.assign(trade, { side: event.side, volume: event.volume, sl: event.sl, tp: event.tp });
      if (pending) Object.assign(trade, { orderTicket: event.ticket, orderType: event.orderType, orderPrice: event.price, placedAt: event.at });
      else Object.assign(trade, { openedAt: event.at, openPrice: event.price });
      if (pending && event.expiresAt) trade.expiresAt = event.expiresAt;
      writes.set(id, withEvent(trade, event, ctx));
      return writes;
    }
    default:
      break;
  }
  const id = tradesTouched(event)[0]!;
  const position = !id.startsWith('order:');
  const trade = take(id) ?? blank(id, ctx, event.symbol, undefined, position ? 'open' : 'pending');
  switch (event.type) {
    case 'position_modified':
      trade.sl = event.sl;
      trade.tp = event.tp;
      break;
    case 'order_modified':
      // What the event says is the order now; what it leaves out, the journal keeps (a null clears: no trigger, no expiry).
      if (event.price !== undefined) trade.orderPrice = event.price;
      if (event.orderType !== undefined) trade.orderType = event.orderType;
      if (event.stopLimitPrice === null || (event.orderType !== undefined && event.orderType !== 'stop_limit')) delete trade.stopLimitPrice;
      else if (event.stopLimitPrice !== undefined) trade.stopLimitPrice = event.stopLimitPrice;
      if (event.expiresAt === null) delete trade.expiresAt;
      else if (event.expiresAt !== undefined) trade.expiresAt = event.expiresAt;
      if (event.sl !== undefined) trade.sl = event.sl;
      if (event.tp !== undefined) trade.tp = event.tp;
      break;
    case 'position_closed':
      trade.closedVolume = round(trade.closedVolume + event.volume);
      trade.volume = event.remainingVolume;
      trade.realizedProfit = round(trade.realizedProfit + event.profit);
      trade.commission = round(trade.commission + event.commission);
      trade.swap = round(trade.swap + event.swap);
      trade.closePrice = event.price;
      if (event.remainingVolume === 0) end(trade, 'closed', event.at, event.cause);
      break;
    case 'position_closed_unknown':
      trade.closedVolume = round(trade.closedVolume + trade.volume);
      trade.volume = 0;
      end(trade, 'closed', event.at, 'unknown');
      break;
    case 'order_expired':
      end(trade, 'expired', event.at, 'expired');
      break;
    case 'order_cancelled':
      end(trade, 'cancelled', event.at, event.cause);
      break;
    case 'order_closed_unknown':
      end(trade, 'cancelled', event.at, 'unknown');
      break;
  }
  linkLater(trade, ctx.signalId);
  writes.set(id, withEvent(trade, event, ctx));
  return writes;
}

/** The money a close event realizes (profit, commission and swap of this part), for the day's P&L. */
export function realizedBy(event: JournalInput): number {
  return event.type === 'position_closed' ? round(event.profit + event.commission + event.swap) : 0;
}

function blank(tradeId: string, ctx: EventContext, symbol: string, side: 'buy' | 'sell' | undefined, status: TradeStatus): TradeRecord {
  return {
    tradeId,
    accountId: ctx.accountId,
    symbol,
    // An event that does not say (a modify or close of a trade the journal never saw open) leaves it to a later one.
    side: side ?? 'buy',
    status,
    origin: 'outside',
    volume: 0,
    closedVolume: 0,
    sl: null,
    tp: null,
    realizedProfit: 0,
    commission: 0,
    swap: 0,
    linkedSignals: [],
    foldedEvents: 0,
    updatedAt: ctx.nowIso,
    events: [],
  };
}

/** A position that began as a pending order: one trade, its order's story first. */
function merge(position: TradeRecord | undefined, order: TradeRecord | undefined, positionId: string): TradeRecord | undefined {
  if (!order) return position;
  if (!position) return { ...order, tradeId: positionId };
  const fromOrder = {
    orderTicket: order.orderTicket,
    orderType: order.orderType,
    orderPrice: order.orderPrice,
    placedAt: order.placedAt,
    ...(order.expiresAt ? { expiresAt: order.expiresAt } : {}),
  };
  const merged: TradeRecord = { ...position, ...fromOrder, events: [...order.events, ...position.events].sort((a, b) => Date.parse(a.at) - Date.parse(b.at)) };
  if (order.origin === 'signal' && position.origin !== 'signal') {
    Object.assign(merged, { origin: 'signal', signalId: order.signalId, openCommandId: order.openCommandId });
  }
  merged.linkedSignals = [...new Set([...position.linkedSignals, ...order.linkedSignals])];
  merged.foldedEvents = position.foldedEvents + order.foldedEvents;
  return merged;
}

function linkOpening(trade: TradeRecord, ctx: EventContext, commandId: string | undefined): void {
  if (!ctx.signalId || !commandId) return;
  trade.origin = 'signal';
  trade.signalId = ctx.signalId;
  trade.openCommandId = commandId;
}

function linkLater(trade: TradeRecord, signalId: string | undefined): void {
  if (signalId && signalId !== trade.signalId && !trade.linkedSignals.includes(signalId) && trade.linkedSignals.length < 50) trade.linkedSignals.push(signalId);
}

function end(trade: TradeRecord, status: TradeStatus, at: string, cause: TradeCloseCause): void {
  trade.status = status;
  trade.closedAt = at;
  trade.closeCause = cause;
}

/** The event as the trade keeps it (what the record already says, once: the ticket and symbol), within the bound. */
function withEvent(trade: TradeRecord, event: JournalInput, ctx: EventContext): TradeRecord {
  const { ticket: _ticket, symbol: _symbol, ...kept } = event;
  trade.events.push(kept);
  if (trade.events.length > MAX_EVENTS_PER_TRADE) {
    // The first (how it began) stays; the oldest after it fold into a count.
    const drop = trade.events.length - MAX_EVENTS_PER_TRADE;
    const folded = managementOf(trade.events.splice(1, drop), trade.foldedManagement);
    if (folded) trade.foldedManagement = folded;
    trade.foldedEvents += drop;
  }
  trade.updatedAt = ctx.nowIso;
  return trade;
}

/** Money and lots summed from many events: kept to 8 decimals, so 0.1 + 0.2 reads 0.3. */
function round(n: number): number {
  return Math.round(n * 1e8) / 1e8;
}
