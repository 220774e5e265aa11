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
