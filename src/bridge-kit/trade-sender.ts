import type { AccountFigures } from '../domain/bridge-protocol';
import type { AccountLink } from './account-link';
import { HttpStatusError } from './client';
import type { TradeOutbox } from './trade-outbox';
import { MAX_BOOK_ENTRIES, MAX_EVENTS_PER_CALL, type Book, type TradeEvent } from '../domain/trade-events';

/**
 * How a TypeScript bridge sends its trade events and its book (protocol 1.5, docs/bridge-protocol.md "Trade events"):
 * the outbox's events oldest first, at most 100 a call; the book right after every hello, at least every
 * `bookEveryMs` while connected, and only with the call that empties the outbox (the book is read first, then the
 * events are taken: no event older than the book is left for a later call, which the service's reconciliation
 * would read as a position gone without an event).
 *
 * - `recorded`, `duplicate`, `refused`: the event leaves the outbox (refused is final: said in the diagnostics).
 * - 400 (the service could not read the call; nothing of it was recorded): the events go again one at a time, and
 *   an event the service cannot read alone is dropped and said so; a book it cannot read waits for the next minute.
 * - anything else (network, 401, 404 of an older service, 429, 503): everything stays; tried again with backoff.
 */

/** What one call may weigh (the service takes 512 KiB: a whole book), with room for the figures and the framing. */
const TRADES_BODY_BUDGET = 500 * 1024;

export interface TradeSenderOptions {
  accountId: string;
  outbox: TradeOutbox;
  /** The book as the broker holds it now; undefined when it cannot be read now (tried again later). */
  book: () => Promise<Book | undefined>;
  figures: () => Promise<AccountFigures | undefined>;
  clock: () => number;
  diag: (line: Record<string, unknown>) => void;
  /** Default 60 000 (the contract's "at least every minute"). */
  bookEveryMs?: number;
  /** How often the timer looks for something to send; default 1 000. */
  everyMs?: number;
  /** Backoff after a failed call: doubling from 1 s to this; default 30 000. */
  maxBackoffMs?: number;
}

export class TradeSender {
  private client: AccountLink | undefined;
  private timer: NodeJS.Timeout | undefined;
  private bookDue = false;
  private bookSentAt = 0;
  private running: Promise<void> | undefined;
  private again = false;
  /** After a 400: events go one at a time until the outbox is past the last event of that call. */
  private isolateUntil: string | undefined;
  private notBefore = 0;
  private backoff = 0;
  private lastError: string | undefined;
  readonly stats = { calls: 0, eventsSettled: 0, books: 0, failures: 0 };

  constructor(private readonly opts: TradeSenderOptions) {}

  start(client: AccountLink): void {
    this.client = client;
    this.timer = setInterval(() => void this.flush(), this.opts.everyMs ?? 1_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.client = undefined;
  }

  /** A hello was answered: the book goes now (with the events waiting), whatever the backoff said. */
  helloDone(): Promise<void> {
    this.bookDue = true;
    this.notBefore = 0;
    return this.flush();
  }

  /** Sends what is due; one call at a time (a second caller waits for the round that includes its events). */
  flush(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while (await this.round());
        } while (this.again);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** One call; true when another should follow at once. */
  private async round(): Promise<boolean> {
    const client = this.client;
    const now = this.opts.clock();
    if (!client || now < this.notBefore) return false;
    const bookDue = this.bookDue || now - this.bookSentAt >= (this.opts.bookEveryMs ?? 60_000);
    if (this.opts.outbox.size === 0 && !bookDue) return false;
    const isolating = this.isolateUntil !== undefined;
    const book = bookDue && !isolating ? await this.readBook() : undefined;
    const events = this.batch(isolating ? 1 : MAX_EVENTS_PER_CALL, book);
    const withBook = book !== undefined && events.length === this.opts.outbox.size;
    if (events.length === 0 && !withBook) return false;
    const account = await this.opts.figures().catch(() => undefined);
    try {
      this.stats.calls++;
      const answer = await client.sendTrades({ events, ...(withBook ? { book } : {}), ...(account ? { account } : {}) });
      const settled = this.opts.outbox.settle(answer.events.filter((r) => events.some((e) => e.eventId === r.eventId)));
      this.stats.eventsSettled += settled;
      if (withBook) this.bookSent();
      // A refused book is final (the terminal's clock is ahead): the next goes at the book's interval, not at once.
      if (answer.book === 'refused') this.opts.diag({ time: this.now(), event: 'trade_book_refused', accountId: this.opts.accountId, ...answer.bookRefusal });
      if (isolating && events.some((e) => e.eventId === this.isolateUntil)) this.isolateUntil = undefined;
      this.succeeded();
      // An answer that settled none of the events it was sent would be sent again at once, for ever.
      return settled === events.length && (this.opts.outbox.size > 0 || this.again);
    } catch (err) {
      if (err instanceof HttpStatusError && err.status === 400) return this.unreadable(events, withBook, err.message);
      this.failed(err);
      return false;
    }
  }

  private unreadable(events: TradeEvent[], withBook: boolean, message: string): boolean {
    if (events.length > 1) {
      this.isolateUntil = events[events.length - 1]!.eventId;
      this.opts.diag({ time: this.now(), event: 'trade_events_unreadable', accountId: this.opts.accountId, events: events.length, error: message });
      return true;
    }
    if (events.length === 1) {
      this.opts.outbox.drop(events[0]!.eventId, message);
      if (this.isolateUntil === events[0]!.eventId) this.isolateUntil = undefined;
      return true;
    }
    if (withBook) {
      this.opts.diag({ time: this.now(), event: 'trade_book_unreadable', accountId: this.opts.accountId, error: message });
      this.bookSent();
    }
    return false;
  }

  /** The oldest waiting events that fit one call beside the book. */
  private batch(max: number, book: Book | undefined): TradeEvent[] {
    let budget = TRADES_BODY_BUDGET - (book ? JSON.stringify(book).length : 0);
    const out: TradeEvent[] = [];
    for (const e of this.opts.outbox.pending()) {
      if (out.length >= max) break;
      const size = JSON.stringify(e).length + 1;
      if (size > budget && out.length > 0) break;
      budget -= size;
      out.push(e);
    }
    return out;
  }

  private async readBook(): Promise<Book | undefined> {
    try {
      const book = await this.opts.book();
      return book === undefined ? undefined : fitBook(book, TRADES_BODY_BUDGET - 8 * 1024);
    } catch (err) {
      this.opts.diag({ time: this.now(), event: 'trade_book_error', accountId: this.opts.accountId, error: (err as Error)?.message ?? String(err) });
      return undefined;
    }
  }

  private bookSent(): void {
    this.bookDue = false;
    this.bookSentAt = this.opts.clock();
    this.stats.books++;
  }

  private succeeded(): void {
    this.backoff = 0;
    this.notBefore = 0;
    this.lastError = undefined;
  }

  private failed(err: unknown): void {
    this.stats.failures++;
    this.backoff = Math.min(this.backoff === 0 ? 1_000 : this.backoff * 2, this.opts.maxBackoffMs ?? 30_000);
    this.notBefore = this.opts.clock() + this.backoff;
    const message = (err as Error)?.message ?? String(err);
    if (message !== this.lastError)
      this.opts.diag({
        time: this.now(),
        event: 'trade_send_retry',
        accountId: this.opts.accountId,
        waiting: this.opts.outbox.size,
        error: message,
        retryInMs: this.backoff,
      });
    this.lastError = message;
  }

  private now(): string {
    return new Date(this.opts.clock()).toISOString();
  }
}

/**
 * A book that fits one call: long symbols and tickets can make 1,000 positions and 1,000 orders weigh more than a call
 * may carry, so a book over `maxBytes` keeps the oldest of each that fit (`truncated`: the service then closes
 * nothing it misses).
 */
export function fitBook(book: Book, maxBytes: number): Book {
  let positions = book.positions.slice(0, MAX_BOOK_ENTRIES);
  let orders = book.orders.slice(0, MAX_BOOK_ENTRIES);
  let truncated = book.truncated || positions.length < book.positions.length || orders.length < book.orders.length;
  const size = () => JSON.stringify({ ...book, truncated, positions, orders }).length;
  while (size() > maxBytes && positions.length + orders.length > 0) {
    truncated = true;
    if (positions.length >= orders.length) positions = positions.slice(0, Math.floor(positions.length * 0.9));
    else orders = orders.slice(0, Math.floor(orders.length * 0.9));
  }
  return { ...book, truncated, positions, orders };
}
