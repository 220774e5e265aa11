import { MAX_BOOK_ENTRIES, type Book, type BookOrder, type BookPosition } from '../domain/trade-events';

/** What a bridge needs beside the wire's schemas (src/domain/trade-events.ts) to build its book. */

/** The first 1,000 positions and orders, oldest first, and whether the broker held more (protocol 1.5). */
export function boundedBook(takenAt: string, positions: BookPosition[], orders: BookOrder[]): Book {
  const oldestFirst = <T>(items: T[], at: (t: T) => string) => items.slice().sort((a, b) => Date.parse(at(a)) - Date.parse(at(b)));
  return {
    takenAt,
    truncated: positions.length > MAX_BOOK_ENTRIES || orders.length > MAX_BOOK_ENTRIES,
    positions: oldestFirst(positions, (p) => p.openedAt).slice(0, MAX_BOOK_ENTRIES),
    orders: oldestFirst(orders, (o) => o.placedAt).slice(0, MAX_BOOK_ENTRIES),
  };
}
