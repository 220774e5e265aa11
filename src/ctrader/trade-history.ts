import { boundedBook } from '../bridge-kit/trade-wire';
import type { Book, BookOrder, BookPosition, TradeEvent } from '../domain/trade-events';
import { DealStatus, OrderStatus, type Deal, type Order, type Position } from './messages';
import {
  entryPrices,
  isPendingEntry,
  iso,
  money,
  orderEnded,
  orderPlaced,
  orderTypeOf,
  positionClosed,
  positionOpened,
  sideOf,
  type TradeContext,
} from './trade-events';
import { volumeToLots } from './units';

/**
 * What happened while the connector was not listening (disconnected, restarted), read back from the broker: the deals
 * of a window (ProtoOADealListReq) and its orders (ProtoOAOrderListReq), with the positions still open
 * (ProtoOAReconcileReq). The events carry the same eventIds as when seen live (docs/ctrader-connector.md), so a fill
 * seen both ways is recorded once. And the book, the snapshot the service reconciles against.
 */

export interface History {
  deals: Deal[];
  /** Every order of the window, any status: the closing orders tell why a deal closed. */
  orders: Order[];
  /** The positions open now. */
  positions: Position[];
  /** Where the window starts (epoch ms): a pending order placed before it was reported then. */
  from: number;
}

const MOVED: ReadonlySet<number> = new Set([DealStatus.FILLED, DealStatus.PARTIALLY_FILLED]);
const ended = (o: Order) => o.orderStatus === OrderStatus.ORDER_STATUS_CANCELLED || o.orderStatus === OrderStatus.ORDER_STATUS_EXPIRED;

export function eventsOfHistory(h: History, ctx: TradeContext, now = Date.now()): TradeEvent[] {
  const orders = new Map(h.orders.map((o) => [o.orderId, o]));
  const open = new Map(h.positions.map((p) => [p.positionId, p]));
  const deals = h.deals.filter((d) => MOVED.has(d.dealStatus)).sort((a, b) => timeOf(a) - timeOf(b) || a.dealId - b.dealId);
  const timed: { at: number; order: number; events: TradeEvent[] }[] = [];
  const add = (at: number, events: (TradeEvent | undefined)[]) => {
    const kept = events.filter((e): e is TradeEvent => !!e);
    if (kept.length > 0) timed.push({ at, order: timed.length, events: kept });
  };
  const seenOpening = new Set<number>();
  deals.forEach((deal, i) => {
    const order = orders.get(deal.orderId);
    const now_ = open.get(deal.positionId);
    if (deal.closePositionDetail) {
      // What remained after this deal: what is open now plus what the later closing deals of the position took.
      const later = deals.slice(i + 1).filter((d) => d.positionId === deal.positionId && d.closePositionDetail);
      const remaining = (now_?.tradeData.volume ?? 0) + later.reduce((s, d) => s + (d.closePositionDetail!.closedVolume ?? d.filledVolume), 0);
      add(timeOf(deal), [positionClosed({ deal, order, levels: now_ ?? order, remaining }, ctx, now, true)]);
      return;
    }
    if (seenOpening.has(deal.positionId)) return;
    seenOpening.add(deal.positionId);
    add(timeOf(deal), positionOpened(deal, order, now_ ?? order, ctx, now));
  });
  for (const o of h.orders) {
    if (!isPendingEntry(o)) continue;
    const placedAt = o.tradeData.openTimestamp ?? o.utcLastUpdateTimestamp ?? 0;
    if (placedAt >= h.from) add(placedAt, [orderPlaced(o, ctx, now)]);
    if (ended(o))
      add(o.utcLastUpdateTimestamp ?? placedAt, [orderEnded(o, o.orderStatus === OrderStatus.ORDER_STATUS_EXPIRED ? 'expired' : 'cancelled', ctx, now, true)]);
  }
  return timed.sort((a, b) => a.at - b.at || a.order - b.order).flatMap((t) => t.events);
}

function timeOf(d: Deal): number {
  return d.executionTimestamp ?? d.createTimestamp ?? 0;
}

/** The book: the open positions and pending entries, oldest first, bounded as the contract says (boundedBook). */
export function bookOf(
  positions: Position[],
  orders: Order[],
  unrealized: ReadonlyMap<number, number>,
  ctx: Pick<TradeContext, 'symbolById'>,
  takenAt: number,
): Book {
  const ps: BookPosition[] = [];
  for (const p of positions) {
    const spec = ctx.symbolById(p.tradeData.symbolId);
    if (!spec || p.price === undefined) continue;
    ps.push({
      ticket: String(p.positionId),
      symbol: spec.name,
      side: sideOf(p.tradeData.tradeSide),
      volume: volumeToLots(p.tradeData.volume, spec),
      openPrice: p.price,
      sl: p.stopLoss ?? null,
      tp: p.takeProfit ?? null,
      openedAt: iso(p.tradeData.openTimestamp, takenAt),
      profit: unrealized.get(p.positionId) ?? 0,
      swap: money(p.swap, p.moneyDigits),
      commission: money(p.commission, p.moneyDigits),
    });
  }
  const os: BookOrder[] = [];
  for (const o of orders.filter(isPendingEntry)) {
    const spec = ctx.symbolById(o.tradeData.symbolId);
    const { price, stopLimitPrice } = entryPrices(o, spec?.digits);
    if (!spec || price === undefined) continue;
    os.push({
      ticket: String(o.orderId),
      symbol: spec.name,
      side: sideOf(o.tradeData.tradeSide),
      orderType: orderTypeOf(o.orderType),
      volume: volumeToLots(o.tradeData.volume, spec),
      price,
      stopLimitPrice: stopLimitPrice ?? null,
      sl: o.stopLoss ?? null,
      tp: o.takeProfit ?? null,
      placedAt: iso(o.tradeData.openTimestamp, takenAt),
      expiresAt: o.expirationTimestamp !== undefined ? new Date(o.expirationTimestamp).toISOString() : null,
    });
  }
  return boundedBook(new Date(takenAt).toISOString(), ps, os);
}
