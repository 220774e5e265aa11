import { FUTURE_TOLERANCE_MS, type Book, type TradeRecord } from '../domain/trade-events';
import { orderTradeId, type JournalInput } from './apply';

/**
 * The book against the journal (docs/trades.md, "Reconciliation"): a position or order the book lists that the journal
 * has never held is recorded, opened outside the service (or its event was lost); one the journal holds open that a
 * whole book (not truncated) no longer lists, and that was open before the book was taken, is ended with cause
 * `unknown`. A trade whose start lies past the clock (`nowMs` + FUTURE_TOLERANCE_MS: a journal written before books
 * were bounded) was not opened after the book: it is ended too. The end's time never passes `nowMs`. Each derived
 * event's id is stable, so a book sent twice changes nothing the second time.
 */
export function reconcile(book: Book, inJournal: ReadonlySet<string>, open: readonly TradeRecord[], nowMs: number): JournalInput[] {
  const events: JournalInput[] = [];
  const takenMs = Date.parse(book.takenAt);
  const endAt = new Date(Math.min(takenMs, nowMs)).toISOString();
  // A pending order that became a position keeps its order ticket on the position's trade: a book read before the
  // trigger still lists the order, which is not an order opened outside.
  const triggered = new Set(open.flatMap((t) => (t.status === 'open' && t.orderTicket ? [t.orderTicket] : [])));
  for (const p of book.positions) {
    if (inJournal.has(p.ticket)) continue;
    events.push({
      type: 'position_seen_in_book',
      eventId: `book/position/${p.ticket}`,
      at: p.openedAt,
      ticket: p.ticket,
      symbol: p.symbol,
      side: p.side,
      volume: p.volume,
      price: p.openPrice,
      sl: p.sl,
      tp: p.tp,
    });
  }
  for (const o of book.orders) {
    if (inJournal.has(orderTradeId(o.ticket)) || triggered.has(o.ticket)) continue;
    events.push({
      type: 'order_seen_in_book',
      eventId: `book/order/${o.ticket}`,
      at: o.placedAt,
      ticket: o.ticket,
      symbol: o.symbol,
      side: o.side,
      orderType: o.orderType,
      volume: o.volume,
      price: o.price,
      sl: o.sl,
      tp: o.tp,
      expiresAt: o.expiresAt,
    });
  }
  if (book.truncated) return events;
  const positions = new Set(book.positions.map((p) => p.ticket));
  const orders = new Set(book.orders.map((o) => orderTradeId(o.ticket)));
  for (const t of open) {
    const began = Date.parse(t.status === 'pending' ? (t.placedAt ?? t.updatedAt) : (t.openedAt ?? t.updatedAt));
    if (!(began < takenMs) && began <= nowMs + FUTURE_TOLERANCE_MS) continue;
    if (t.status === 'open' && !positions.has(t.tradeId)) {
      events.push({ type: 'position_closed_unknown', eventId: `book/closed/${t.tradeId}`, at: endAt, ticket: t.tradeId, symbol: t.symbol });
    }
    if (t.status === 'pending' && !orders.has(t.tradeId)) {
      const ticket = t.tradeId.slice('order:'.length);
      events.push({ type: 'order_closed_unknown', eventId: `book/gone/${ticket}`, at: endAt, ticket, symbol: t.symbol });
    }
  }
  return events;
}
