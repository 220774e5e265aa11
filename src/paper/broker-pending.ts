import type { BrokerBook } from './broker-book';
import type { Quote } from './feeds';
import { EPS, iso, roundTo } from './numbers';
import { managementOf } from './asked-management';
import type { BrokerCommand, BrokerOp, ExecutionResult, OrderType, PendingOrder, Position, Side } from './broker-types';

/** The paper broker's pending orders: placing, cancelling and modifying them, and what the market does to them. */

/** Expiries, stop-limit triggers and pending fills at `now` (the first part of PaperBroker.tick). */
export function triggerPending(book: BrokerBook, now: number, ops: BrokerOp[]): void {
  for (const order of [...book.state.orders]) {
    const spec = book.specs.get(order.canonical);
    if (!spec) continue;
    if (order.expiry !== null && now >= Date.parse(order.expiry)) {
      book.removeOrder(order.ticket, 'expired');
      ops.push(book.orderOp(order, 'expire', 'expiry', null));
      continue;
    }
    if (!book.marketOpen(spec)) continue;
    const q = book.feed.quote(spec, now);
    if (order.type === 'stop_limit') {
      const trigger = order.stopLimitPrice ?? order.price;
      if (!(order.side === 'buy' ? q.ask >= trigger - EPS : q.bid <= trigger + EPS)) continue;
      order.type = 'limit';
      order.stopLimitPrice = null;
      ops.push(book.orderOp(order, 'stop_limit_trigger', 'price', order.side === 'buy' ? q.ask : q.bid));
    }
    if (!fillable(order, q)) continue;
    const fill = order.side === 'buy' ? q.ask : q.bid;
    if (book.marginFor(spec, order.volume, fill) > book.freeMargin() + EPS) {
      book.removeOrder(order.ticket, 'cancelled');
      ops.push(book.orderOp(order, 'cancel', 'no_money', fill));
      continue;
    }
    book.removeOrder(order.ticket, 'filled');
    const pos: Position = {
      ticket: order.ticket,
      symbol: order.symbol,
      canonical: order.canonical,
      side: order.side,
      volume: order.volume,
      openPrice: fill,
      openTime: iso(now),
      sl: order.sl,
      tp: order.tp,
      commandId: order.commandId,
      action: order.action,
      ...(order.management ? { management: order.management } : {}),
    };
    book.state.positions.push(pos);
    ops.push({ ...book.positionOp(pos, 'trigger', 'price', fill, pos.volume), orderType: order.type });
  }
}

export function pendingEntry(book: BrokerBook, cmd: BrokerCommand, side: Side, type: OrderType, ops: BrokerOp[]): ExecutionResult {
  const spec = book.requireSymbol(cmd.symbol);
  book.guardOpenPositions(cmd, cmd.symbol!);
  const volume = book.requireVolume(spec, cmd.volume);
  book.requireOpen(spec);
  if (cmd.price === undefined) book.reject('invalid_request', 'price is required');
  if (type === 'stop_limit' && cmd.stopLimitPrice === undefined) book.reject('invalid_request', 'stopLimitPrice is required');
  const price = roundTo(cmd.price, spec.digits);
  const trigger = type === 'stop_limit' ? roundTo(cmd.stopLimitPrice!, spec.digits) : null;
  const q = book.feed.quote(spec, book.clock());
  book.checkEntryPrice(spec, side, type, price, trigger, q);
  const { sl, tp } = book.stopsFrom(spec, side, price, cmd);
  book.checkStops(spec, side, price, sl, tp, 'entry');
  const expiry = cmd.expiry === undefined ? null : book.requireExpiry(cmd.expiry);
  book.requireMargin(spec, volume, price);
  const order: PendingOrder = {
    ticket: book.nextTicket(),
    symbol: cmd.symbol!,
    canonical: spec.name,
    side,
    type,
    price,
    stopLimitPrice: trigger,
    volume,
    sl,
    tp,
    expiry,
    placedTime: iso(book.clock()),
    commandId: cmd.commandId ?? null,
    action: cmd.action,
    ...managementOf(cmd),
  };
  book.state.orders.push(order);
  ops.push(book.orderOp(order, 'place', 'command', price));
  return { status: 'filled', ticket: order.ticket, price, volume };
}

export function cancelPending(book: BrokerBook, cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
  const order = book.requireOrder(cmd.orderId);
  book.requireOpen(book.specOf(order));
  book.removeOrder(order.ticket, 'cancelled');
  ops.push(book.orderOp(order, 'cancel', 'command', null, cmd));
  return { status: 'done', ticket: order.ticket };
}

export function modifyPending(book: BrokerBook, cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
  const order = book.requireOrder(cmd.orderId);
  const spec = book.specOf(order);
  const given = (['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'] as const).filter((f) => cmd[f] !== undefined);
  if (given.length === 0) book.reject('invalid_request', 'nothing to modify');
  if (cmd.stopLimitPrice !== undefined && order.type !== 'stop_limit') {
    book.reject('invalid_request', `order ${order.ticket} is a ${order.type} order, it has no stop-limit trigger`);
  }
  book.requireOpen(spec);
  const price = cmd.price !== undefined ? roundTo(cmd.price, spec.digits) : order.price;
  const trigger = cmd.stopLimitPrice !== undefined ? roundTo(cmd.stopLimitPrice, spec.digits) : order.stopLimitPrice;
  const sl = cmd.sl !== undefined ? roundTo(cmd.sl, spec.digits) : order.sl;
  const tp = cmd.tp !== undefined ? roundTo(cmd.tp, spec.digits) : order.tp;
  const expiry = cmd.expiry !== undefined ? book.requireExpiry(cmd.expiry) : order.expiry;
  if (price !== order.price || trigger !== order.stopLimitPrice) {
    book.checkEntryPrice(spec, order.side, order.type, price, trigger, book.feed.quote(spec, book.clock()));
  }
  book.checkStops(spec, order.side, price, sl, tp, 'entry');
  if (price === order.price && trigger === order.stopLimitPrice && sl === order.sl && tp === order.tp && expiry === order.expiry) {
    return book.noChanges(order.ticket);
  }
  Object.assign(order, { price, stopLimitPrice: trigger, sl, tp, expiry });
  ops.push(book.orderOp(order, 'modify_order', 'command', price, cmd));
  return { status: 'done', ticket: order.ticket };
}

function fillable(order: PendingOrder, q: Quote): boolean {
  if (order.type === 'limit') return order.side === 'buy' ? q.ask <= order.price + EPS : q.bid >= order.price - EPS;
  if (order.type === 'stop') return order.side === 'buy' ? q.ask >= order.price - EPS : q.bid <= order.price + EPS;
  return false;
}
