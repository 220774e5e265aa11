import { ExecutionType, OrderStatus, OrderType, PositionStatus, TradeSide, type Order, type Position } from '../../src/ctrader/messages';
import type { DoubleAccount, Executions } from './ctrader-market';

/**
 * What the market does to a pending order of the cTrader Open API double, on a test's word (the double moves no prices
 * on its own): it fills into its position (ORDER_FILLED with the position and a deal, the order FILLED in the history),
 * or expires (ORDER_EXPIRED, EXPIRED in the history), as ProtoOAExecutionEvent and ProtoOAOrderStatus say.
 */

function pending(account: DoubleAccount, orderId: number): Order {
  const order = account.orders.get(orderId);
  if (!order) throw new Error(`order ${orderId} is not pending`);
  return order;
}

/** The order fills whole at its entry price into the position it named when accepted. */
export function fillPending(account: DoubleAccount, orderId: number, now = Date.now()): Executions {
  const order = pending(account, orderId);
  const price = (order.orderType === OrderType.LIMIT ? order.limitPrice : order.stopPrice)!;
  const position: Position = {
    positionId: order.positionId!,
    tradeData: { ...order.tradeData, openTimestamp: now },
    positionStatus: PositionStatus.POSITION_STATUS_OPEN,
    swap: 0,
    price,
    stopLoss: order.stopLoss,
    takeProfit: order.takeProfit,
    moneyDigits: 2,
  };
  const volume = order.tradeData.volume;
  const deal = {
    dealId: account.takeId(),
    orderId,
    positionId: position.positionId,
    volume,
    filledVolume: volume,
    symbolId: order.tradeData.symbolId,
    createTimestamp: now,
    executionTimestamp: now,
    executionPrice: price,
    tradeSide: order.tradeData.tradeSide === TradeSide.BUY ? TradeSide.BUY : TradeSide.SELL,
    dealStatus: 2,
  };
  const filled: Order = { ...order, orderStatus: OrderStatus.ORDER_STATUS_FILLED, executionPrice: price, executedVolume: volume, utcLastUpdateTimestamp: now };
  account.orders.delete(orderId);
  account.positions.set(position.positionId, position);
  account.history.set(orderId, filled);
  account.deals.set(orderId, [deal]);
  return [{ executionType: ExecutionType.ORDER_FILLED, order: filled, position, deal }];
}

/** The order reaches its expiry (or the broker expires it): gone, EXPIRED in the history. */
export function expirePending(account: DoubleAccount, orderId: number, now = Date.now()): Executions {
  const order = pending(account, orderId);
  const expired: Order = { ...order, orderStatus: OrderStatus.ORDER_STATUS_EXPIRED, utcLastUpdateTimestamp: now };
  account.orders.delete(orderId);
  account.history.set(orderId, expired);
  return [{ executionType: ExecutionType.ORDER_EXPIRED, order: expired }];
}

/**
 * A quote moved: what the server does with it, by the published trigger rule (ProtoOAOrderTriggerMethod TRADE, the
 * default): a buy position's stop loss and take profit are checked against the bid, a sell's against the ask, and the
 * broker closes it at that price with its STOP_LOSS_TAKE_PROFIT order (a server event); a buy limit fills when the ask
 * reaches it, a buy stop when the ask reaches it from below, sells by the bid; a GTD order past its expiry expires.
 */
export function marketMoved(account: DoubleAccount, symbol: { symbolId: number; bid: number; ask: number }, now = Date.now()): Executions {
  const out: Executions = expireDue(account, now);
  for (const o of [...account.orders.values()]) {
    if (o.tradeData.symbolId !== symbol.symbolId) continue;
    const buy = o.tradeData.tradeSide === TradeSide.BUY;
    const at = buy ? symbol.ask : symbol.bid;
    const entry = (o.orderType === OrderType.LIMIT ? o.limitPrice : o.stopPrice)!;
    const reached = o.orderType === OrderType.LIMIT ? (buy ? at <= entry : at >= entry) : buy ? at >= entry : at <= entry;
    if (reached) out.push(...fillPending(account, o.orderId, now).map((e) => ({ ...e, isServerEvent: true })));
  }
  for (const p of [...account.positions.values()]) {
    if (p.tradeData.symbolId !== symbol.symbolId) continue;
    const buy = p.tradeData.tradeSide === TradeSide.BUY;
    const at = buy ? symbol.bid : symbol.ask;
    const slHit = p.stopLoss !== undefined && (buy ? at <= p.stopLoss : at >= p.stopLoss);
    const tpHit = p.takeProfit !== undefined && (buy ? at >= p.takeProfit : at <= p.takeProfit);
    if (!slHit && !tpHit) continue;
    const levels = { orderType: OrderType.STOP_LOSS_TAKE_PROFIT, stopLoss: p.stopLoss, takeProfit: p.takeProfit };
    out.push(...account.closeAt(p, p.tradeData.volume, at, now, levels).map((e) => ({ ...e, isServerEvent: true })));
  }
  return out;
}

/** GTD orders whose `expirationTimestamp` has passed expire (the server's clock, quotes or not). */
export function expireDue(account: DoubleAccount, now = Date.now()): Executions {
  return [...account.orders.values()]
    .filter((o) => o.expirationTimestamp !== undefined && o.expirationTimestamp <= now)
    .flatMap((o) => expirePending(account, o.orderId, now).map((e) => ({ ...e, isServerEvent: true })));
}

/** The trader closes (part of) a position by hand in cTrader: a closing MARKET order the connector did not send. */
export function closeByHand(account: DoubleAccount, positionId: number, volume?: number, now = Date.now()): Executions {
  const p = account.positions.get(positionId);
  if (!p) throw new Error(`position ${positionId} is not open`);
  return account.closeAt(p, volume ?? p.tradeData.volume, closePrice(account, p), now, { orderType: OrderType.MARKET });
}

/** The broker's own stop-out closes a position: a server event, the closing order flagged `isStopOut`. */
export function stopOutByBroker(account: DoubleAccount, positionId: number, now = Date.now()): Executions {
  const p = account.positions.get(positionId);
  if (!p) throw new Error(`position ${positionId} is not open`);
  return account.closeAt(p, p.tradeData.volume, closePrice(account, p), now, { orderType: OrderType.MARKET, isStopOut: true }).map((e) => ({
    ...e,
    isServerEvent: true,
  }));
}

/** The trader cancels a pending order by hand in cTrader. */
export function cancelByHand(account: DoubleAccount, orderId: number, now = Date.now()): Executions {
  return account.cancelOrder({ orderId }, now);
}

function closePrice(account: DoubleAccount, p: Position): number {
  const q = account.quoteOf(p.tradeData.symbolId);
  return p.tradeData.tradeSide === TradeSide.BUY ? q.bid : q.ask;
}
