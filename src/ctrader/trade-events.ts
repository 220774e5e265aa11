import type { TradeEvent } from '../domain/trade-events';
import { ExecutionType, OrderStatus, OrderType, PositionStatus, TradeSide, type Deal, type ExecutionEvent, type Order, type Position } from './messages';
import { volumeToLots, type SymbolSpec } from './units';

/**
 * ProtoOAExecutionEvent → the trade events of protocol 1.5 (docs/bridge-protocol.md, docs/ctrader-connector.md "Trade
 * events"). Pure: what the connector knows beyond the event (the symbols, which command or stop-out was running, the
 * command behind an order's label) comes in `TradeContext`. Each eventId is derived from the broker's ids and the
 * order's state, so the same fill seen live and again in the deal history after a reconnect is one event.
 */

export interface TradeContext {
  symbolById(symbolId: number): Pick<SymbolSpec, 'name' | 'lotSize' | 'digits'> | undefined;
  /** The command (or the stop-out) that caused this execution, when the connector sent the request it answers. */
  causedBy?:
    | { kind: 'command'; commandId: string }
    | { kind: 'stop_out' }
    // Trade management (protocol 1.6): the connector's own moves and level closes, and an entry's reverse.
    | { kind: 'management'; cause: 'trailing_stop' | 'breakeven_trigger' | 'take_profit_level'; trailActiveAt?: number }
    | { kind: 'close_opposite'; commandId: string };
  /** The command whose order carried this label (ProtoOANewOrderReq.label), from the exactly-once store. */
  commandOfLabel(label: string): string | undefined;
}

type Cause = 'command' | 'stop_loss' | 'take_profit' | 'stop_out' | 'margin_call' | 'manual' | 'other' | 'take_profit_level' | 'close_opposite';

const PENDING_TYPES: ReadonlySet<number> = new Set([OrderType.LIMIT, OrderType.STOP, OrderType.STOP_LIMIT]);

/** A pending entry (not the broker's SL/TP order, not a market order, not an order closing a position). */
export function isPendingEntry(order: Order | undefined): order is Order {
  return !!order && PENDING_TYPES.has(order.orderType) && !order.closingOrder;
}

const eventIds = {
  deal: (dealId: number) => `deal:${dealId}`,
  placed: (orderId: number) => `order:${orderId}:placed`,
  triggered: (orderId: number) => `order:${orderId}:triggered`,
  cancelled: (orderId: number) => `order:${orderId}:cancelled`,
  expired: (orderId: number) => `order:${orderId}:expired`,
  /** A change has no id of its own: the time of the change (or, without one, the new levels) tells two changes apart. */
  orderModified: (o: Order) => `order:${o.orderId}:modified:${o.utcLastUpdateTimestamp ?? levels(o.limitPrice ?? o.stopPrice, o.stopLoss, o.takeProfit)}`,
  positionModified: (p: Position) => `position:${p.positionId}:modified:${p.utcLastUpdateTimestamp ?? levels(p.stopLoss, p.takeProfit)}`,
};

function levels(...xs: (number | undefined)[]): string {
  return xs.map((x) => (x === undefined ? 'none' : String(x))).join('/');
}

export const sideOf = (tradeSide: number): 'buy' | 'sell' => (tradeSide === TradeSide.BUY ? 'buy' : 'sell');

export function orderTypeOf(orderType: number): 'limit' | 'stop' | 'stop_limit' {
  return orderType === OrderType.LIMIT ? 'limit' : orderType === OrderType.STOP ? 'stop' : 'stop_limit';
}

export const iso = (ms: number | undefined, fallback: number): string => new Date(ms ?? fallback).toISOString();

/** Money fields of Open API are integers × 10^moneyDigits. */
export const money = (v: number | undefined, digits: number | undefined): number => (v ?? 0) / 10 ** (digits ?? 2);

/**
 * The entry of a pending order in the service's terms: `price` is where it fills (the limit), `stopLimitPrice` a stop
 * limit's trigger. cTrader's STOP_LIMIT has a trigger (`stopPrice`) and a range (`slippageInPoints`); the connector
 * places the signal's limit that many points below a buy's trigger, above a sell's (docs/ctrader-connector.md).
 */
export function entryPrices(o: Order, digits: number | undefined): { price: number | undefined; stopLimitPrice?: number } {
  if (o.orderType === OrderType.LIMIT) return { price: o.limitPrice };
  if (o.orderType !== OrderType.STOP_LIMIT) return { price: o.stopPrice };
  if (o.stopPrice === undefined) return { price: undefined };
  if (o.slippageInPoints === undefined || digits === undefined) return { price: o.stopPrice, stopLimitPrice: o.stopPrice };
  const away = o.slippageInPoints * 10 ** -digits;
  const limit = o.tradeData.tradeSide === TradeSide.BUY ? o.stopPrice - away : o.stopPrice + away;
  return { price: Number(limit.toFixed(digits)), stopLimitPrice: o.stopPrice };
}

export function orderPlaced(o: Order, ctx: TradeContext, now: number): TradeEvent | undefined {
  const spec = ctx.symbolById(o.tradeData.symbolId);
  const { price, stopLimitPrice } = entryPrices(o, spec?.digits);
  if (!spec || price === undefined) return undefined;
  const commandId = o.tradeData.label ? ctx.commandOfLabel(o.tradeData.label) : undefined;
  return {
    eventId: eventIds.placed(o.orderId),
    type: 'order_placed',
    at: iso(o.tradeData.openTimestamp ?? o.utcLastUpdateTimestamp, now),
    ticket: String(o.orderId),
    symbol: spec.name,
    ...(commandId ? { commandId } : {}),
    side: sideOf(o.tradeData.tradeSide),
    orderType: orderTypeOf(o.orderType),
    volume: volumeToLots(o.tradeData.volume, spec),
    price,
    ...(stopLimitPrice !== undefined ? { stopLimitPrice } : {}),
    ...(o.stopLoss !== undefined ? { sl: o.stopLoss } : {}),
    ...(o.takeProfit !== undefined ? { tp: o.takeProfit } : {}),
    ...(o.expirationTimestamp !== undefined ? { expiresAt: new Date(o.expirationTimestamp).toISOString() } : {}),
  };
}

/**
 * Why a position was (partly) closed, from the published fields only: the connector's own request (a command or the
 * stop-out); the server's stop-out (`isStopOut`); the broker's SL/TP order (`STOP_LOSS_TAKE_PROFIT`), told stop loss
 * from take profit by the level nearer the fill (the two lie on either side of the market, so the fill is at or
 * beyond one of them); a market order closing it that the connector did not send (`closingOrder`, not a server
 * event) is the trader's hand in the terminal. `recovered`: read back from the history, where the connector cannot
 * tell its own lost request from a hand's, so a market close is `other`.
 */
function closeCause(
  order: Order | undefined,
  position: Pick<Position, 'stopLoss' | 'takeProfit'> | undefined,
  price: number,
  ctx: Pick<TradeContext, 'causedBy'>,
  recovered = false,
): Cause {
  if (ctx.causedBy?.kind === 'command') return 'command';
  if (ctx.causedBy?.kind === 'stop_out') return 'stop_out';
  if (ctx.causedBy?.kind === 'close_opposite') return 'close_opposite';
  // The engine only closes a position by a take-profit level's share (its stops are moved, never hit by it).
  if (ctx.causedBy?.kind === 'management') return 'take_profit_level';
  if (!order) return 'other';
  if (order.isStopOut) return 'margin_call';
  if (order.orderType === OrderType.STOP_LOSS_TAKE_PROFIT) {
    const sl = order.stopLoss ?? position?.stopLoss;
    const tp = order.takeProfit ?? position?.takeProfit;
    if (sl === undefined && tp === undefined) return 'other';
    if (tp === undefined) return 'stop_loss';
    if (sl === undefined) return 'take_profit';
    return Math.abs(price - sl) <= Math.abs(price - tp) ? 'stop_loss' : 'take_profit';
  }
  if (order.orderType === OrderType.MARKET && order.closingOrder && !recovered) return 'manual';
  return 'other';
}

export interface ClosedDeal {
  deal: Deal;
  order: Order | undefined;
  /** The position's SL/TP when it closed (the event's position, or the one last known). */
  levels: Pick<Position, 'stopLoss' | 'takeProfit'> | undefined;
  /** What is left open of the position after this deal, in cents of units. */
  remaining: number;
}

export function positionClosed(c: ClosedDeal, ctx: TradeContext, now: number, recovered = false): TradeEvent | undefined {
  const { deal } = c;
  const detail = deal.closePositionDetail;
  const spec = ctx.symbolById(deal.symbolId);
  const price = deal.executionPrice ?? c.order?.executionPrice;
  if (!detail || !spec || price === undefined) return undefined;
  const digits = detail.moneyDigits ?? deal.moneyDigits;
  return {
    eventId: eventIds.deal(deal.dealId),
    type: 'position_closed',
    at: iso(deal.executionTimestamp ?? deal.createTimestamp, now),
    ticket: String(deal.positionId),
    symbol: spec.name,
    ...commandOf(ctx),
    volume: volumeToLots(detail.closedVolume ?? deal.filledVolume, spec),
    remainingVolume: volumeToLots(Math.max(0, c.remaining), spec),
    price,
    profit: money(detail.grossProfit, digits),
    commission: money(detail.commission, digits),
    swap: money(detail.swap, digits),
    cause: closeCause(c.order, c.levels, price, ctx, recovered),
  };
}

/** A deal that opened a position: position_opened, after order_triggered when a pending order filled. */
export function positionOpened(
  deal: Deal,
  order: Order | undefined,
  levels: Pick<Position, 'stopLoss' | 'takeProfit'> | undefined,
  ctx: TradeContext,
  now: number,
): TradeEvent[] {
  const spec = ctx.symbolById(deal.symbolId);
  const price = deal.executionPrice ?? order?.executionPrice;
  if (!spec || price === undefined) return [];
  const at = iso(deal.executionTimestamp ?? deal.createTimestamp, now);
  const fromOrder = isPendingEntry(order) ? order : undefined;
  const label = order?.tradeData.label;
  const commandId = label ? ctx.commandOfLabel(label) : undefined;
  const out: TradeEvent[] = [];
  if (fromOrder)
    out.push({
      eventId: eventIds.triggered(fromOrder.orderId),
      type: 'order_triggered',
      at,
      ticket: String(fromOrder.orderId),
      symbol: spec.name,
      positionTicket: String(deal.positionId),
      price,
    });
  out.push({
    eventId: eventIds.deal(deal.dealId),
    type: 'position_opened',
    at,
    ticket: String(deal.positionId),
    symbol: spec.name,
    ...(commandId ? { commandId } : {}),
    side: sideOf(deal.tradeSide),
    volume: volumeToLots(deal.filledVolume, spec),
    price,
    ...(levels?.stopLoss !== undefined ? { sl: levels.stopLoss } : {}),
    ...(levels?.takeProfit !== undefined ? { tp: levels.takeProfit } : {}),
    ...(fromOrder ? { fromOrder: String(fromOrder.orderId) } : {}),
  });
  return out;
}

/**
 * A pending order gone without a fill. Cancelled: by the connector's command or stop-out; by the server's own logic
 * (`isServerEvent`) the broker's; else by the trader's hand. Recovered from the history the author is not there, so
 * it is reported as the broker's.
 */
export function orderEnded(o: Order, how: 'cancelled' | 'expired', ctx: TradeContext, now: number, byServer = false): TradeEvent {
  if (how === 'expired')
    return {
      eventId: eventIds.expired(o.orderId),
      type: 'order_expired',
      ...changeOf({ ...ctx, causedBy: undefined }, o.tradeData.symbolId, o.orderId, o.utcLastUpdateTimestamp, now),
    };
  const causedBy = ctx.causedBy;
  const cause = causedBy?.kind === 'command' ? 'command' : causedBy?.kind === 'stop_out' ? 'stop_out' : byServer ? 'broker' : 'manual';
  return {
    eventId: eventIds.cancelled(o.orderId),
    type: 'order_cancelled',
    ...changeOf(ctx, o.tradeData.symbolId, o.orderId, o.utcLastUpdateTimestamp, now),
    cause,
  };
}

/** One ProtoOAExecutionEvent of this account → its trade events (none for swaps, deposits, rejections, market orders' acceptance). */
export function eventsOfExecution(e: ExecutionEvent, ctx: TradeContext, now = Date.now()): TradeEvent[] {
  const { order, position, deal } = e;
  const one = (ev: TradeEvent | undefined) => (ev ? [ev] : []);
  switch (e.executionType) {
    case ExecutionType.ORDER_ACCEPTED:
      return isPendingEntry(order) && order.orderStatus === OrderStatus.ORDER_STATUS_ACCEPTED ? one(orderPlaced(order, ctx, now)) : [];
    case ExecutionType.ORDER_FILLED:
    case ExecutionType.ORDER_PARTIAL_FILL: {
      if (!deal) return [];
      if (deal.closePositionDetail) {
        const remaining = !position || position.positionStatus === PositionStatus.POSITION_STATUS_CLOSED ? 0 : position.tradeData.volume;
        return one(positionClosed({ deal, order, levels: position, remaining }, ctx, now));
      }
      // Only the deal that opened the position; a later one adding to it changes its volume, which the book shows.
      if (position && position.tradeData.volume !== deal.filledVolume) return [];
      return positionOpened(deal, order, position, ctx, now);
    }
    case ExecutionType.ORDER_REPLACED:
      if (isPendingEntry(order)) return [orderModified(order, ctx, now)];
      if (position && position.positionStatus === PositionStatus.POSITION_STATUS_OPEN) return one(positionModified(position, ctx, now));
      return [];
    case ExecutionType.ORDER_CANCELLED:
      return isPendingEntry(order) ? [orderEnded(order, 'cancelled', ctx, now, e.isServerEvent === true)] : [];
    case ExecutionType.ORDER_EXPIRED:
      return isPendingEntry(order) ? [orderEnded(order, 'expired', ctx, now)] : [];
    default:
      return [];
  }
}

/** The command behind a change: its own request, or the reverse it ran before its entry. */
function commandOf(ctx: TradeContext): { commandId?: string } {
  const by = ctx.causedBy;
  return by?.kind === 'command' || by?.kind === 'close_opposite' ? { commandId: by.commandId } : {};
}

function modifyCause(ctx: TradeContext): { cause: 'command' | 'broker' | 'trailing_stop' | 'breakeven_trigger'; trailActiveAt?: number } {
  const by = ctx.causedBy;
  if (by?.kind === 'command') return { cause: 'command' };
  if (by?.kind === 'management' && by.cause !== 'take_profit_level')
    return { cause: by.cause, ...(by.cause === 'trailing_stop' && by.trailActiveAt !== undefined ? { trailActiveAt: by.trailActiveAt } : {}) };
  return { cause: 'broker' };
}

/** What a change of a position or an order says besides its levels: when, which ticket, and the command that made it. */
function changeOf(ctx: TradeContext, symbolId: number, ticket: number, at: number | undefined, now: number) {
  return {
    at: iso(at, now),
    ticket: String(ticket),
    symbol: ctx.symbolById(symbolId)?.name ?? `symbol-${symbolId}`,
    ...commandOf(ctx),
  };
}

function orderModified(o: Order, ctx: TradeContext, now: number): TradeEvent {
  const { price, stopLimitPrice } = entryPrices(o, ctx.symbolById(o.tradeData.symbolId)?.digits);
  return {
    eventId: eventIds.orderModified(o),
    type: 'order_modified',
    ...changeOf(ctx, o.tradeData.symbolId, o.orderId, o.utcLastUpdateTimestamp, now),
    ...(price !== undefined ? { price } : {}),
    ...(stopLimitPrice !== undefined ? { stopLimitPrice } : {}),
    orderType: orderTypeOf(o.orderType),
    sl: o.stopLoss ?? null,
    tp: o.takeProfit ?? null,
    // The order as it is now: without an expirationTimestamp it is good till cancelled.
    expiresAt: o.expirationTimestamp !== undefined ? new Date(o.expirationTimestamp).toISOString() : null,
    // The engine moves positions' stops only: a pending order's change is a command's or the broker's.
    cause: modifyCause(ctx).cause === 'command' ? 'command' : 'broker',
  };
}

function positionModified(p: Position, ctx: TradeContext, now: number): TradeEvent {
  return {
    eventId: eventIds.positionModified(p),
    type: 'position_modified',
    ...changeOf(ctx, p.tradeData.symbolId, p.positionId, p.utcLastUpdateTimestamp, now),
    sl: p.stopLoss ?? null,
    tp: p.takeProfit ?? null,
    ...modifyCause(ctx),
  };
}
