import { z } from 'zod';
import { accountFiguresSchema } from './bridge-protocol';
import { brokerTicket } from './ticket';

/**
 * Trade events and the book (bridge protocol 1.5; docs/bridge-protocol.md, "Trade events", and docs/trades.md): what a
 * bridge tells the service of a trade's life after the entry, and the trade journal's record of it. Every field is
 * bounded; zod's numbers are finite, so a `1e999` in a body is a 400 naming its path.
 */

export const TRADE_EVENTS_FEATURE = 'trade_events';
export const MAX_EVENTS_PER_CALL = 100;
export const MAX_BOOK_ENTRIES = 1000;
export const MAX_EVENTS_PER_TRADE = 200;
/** How far ahead of the server's clock an event's `at` may be before it is refused `future`. */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

const at = z.iso.datetime({ offset: true }).max(64);
const ticket = brokerTicket(z.string().min(1).max(64));
const side = z.enum(['buy', 'sell']);
const volume = z.number().gt(0).lte(1e6);
const price = z.number().gt(0).lte(1e12);
const money = z.number().gte(-1e15).lte(1e15);
const level = price.nullable();

const common = {
  eventId: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._:/-]+$/, 'letters, digits and . _ : / - only'),
  at,
  ticket,
  symbol: z.string().min(1).max(32),
  commandId: z.string().max(256).optional(),
};

export const POSITION_CLOSE_CAUSES = [
  'command',
  'stop_loss',
  'take_profit',
  'stop_out',
  'margin_call',
  'manual',
  'other',
  // Trade management (protocol 1.6): a take-profit level's share, and the reverse of an entry with closeOpposite.
  'take_profit_level',
  'close_opposite',
] as const;
export const ORDER_CANCEL_CAUSES = ['command', 'broker', 'stop_out', 'manual'] as const;
/** `trailing_stop` and `breakeven_trigger` (protocol 1.6): the bridge's trade management moved the stop. */
export const MODIFY_CAUSES = ['command', 'broker', 'management', 'trailing_stop', 'breakeven_trigger'] as const;
const ORDER_TYPES = ['limit', 'stop', 'stop_limit'] as const;

export const tradeEventSchema = z.discriminatedUnion('type', [
  z.strictObject({
    ...common,
    type: z.literal('position_opened'),
    side,
    volume,
    price,
    sl: price.optional(),
    tp: price.optional(),
    fromOrder: ticket.optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('position_modified'),
    sl: level,
    tp: level,
    cause: z.enum(MODIFY_CAUSES),
    /** With cause `trailing_stop`: the closing price at which the trail became active (protocol 1.6). */
    trailActiveAt: price.optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('position_closed'),
    volume,
    remainingVolume: z.number().gte(0).lte(1e6),
    price,
    profit: money,
    commission: money,
    swap: money,
    cause: z.enum(POSITION_CLOSE_CAUSES),
  }),
  z.strictObject({
    ...common,
    type: z.literal('order_placed'),
    side,
    orderType: z.enum(ORDER_TYPES),
    volume,
    price,
    stopLimitPrice: price.optional(),
    sl: price.optional(),
    tp: price.optional(),
    expiresAt: at.optional(),
  }),
  z.strictObject({
    ...common,
    type: z.literal('order_modified'),
    /** The limit price of a limit or stop-limit order, the stop price of a stop order (as in order_placed). */
    price: price.optional(),
    /** A stop-limit's trigger now; null: no trigger (the stop-limit reached it and is a limit order now). */
    stopLimitPrice: level.optional(),
    /** The order's type now: a stop-limit that reached its trigger is a `limit`. */
    orderType: z.enum(ORDER_TYPES).optional(),
    sl: level.optional(),
    tp: level.optional(),
    /** The expiry now; null: good till cancelled. Absent: not said (a bridge before this field), the journal keeps its own. */
    expiresAt: at.nullable().optional(),
    cause: z.enum(MODIFY_CAUSES),
  }),
  z.strictObject({ ...common, type: z.literal('order_triggered'), positionTicket: ticket, price }),
  z.strictObject({ ...common, type: z.literal('order_expired') }),
  z.strictObject({ ...common, type: z.literal('order_cancelled'), cause: z.enum(ORDER_CANCEL_CAUSES) }),
]);
export type TradeEvent = z.infer<typeof tradeEventSchema>;
type TradeEventType = TradeEvent['type'];

const most = (what: string) => ({ message: `at most ${MAX_BOOK_ENTRIES} ${what}` });

const bookPositionSchema = z.strictObject({
  ticket,
  symbol: common.symbol,
  side,
  volume,
  openPrice: price,
  sl: level,
  tp: level,
  openedAt: at,
  profit: money,
  swap: money,
  commission: money,
});
export type BookPosition = z.infer<typeof bookPositionSchema>;

const bookOrderSchema = z.strictObject({
  ticket,
  symbol: common.symbol,
  side,
  orderType: z.enum(ORDER_TYPES),
  volume,
  price,
  stopLimitPrice: level,
  sl: level,
  tp: level,
  placedAt: at,
  expiresAt: at.nullable(),
});
export type BookOrder = z.infer<typeof bookOrderSchema>;

export const bookSchema = z.strictObject({
  takenAt: at,
  truncated: z.boolean(),
  positions: z.array(bookPositionSchema).max(MAX_BOOK_ENTRIES, most('positions')),
  orders: z.array(bookOrderSchema).max(MAX_BOOK_ENTRIES, most('orders')),
});
export type Book = z.infer<typeof bookSchema>;

/** The body of `POST /bridge/v1/trades`. */
export const tradesBodySchema = z
  .strictObject({
    events: z
      .array(tradeEventSchema)
      .max(MAX_EVENTS_PER_CALL, { message: `at most ${MAX_EVENTS_PER_CALL} events` })
      .default([]),
    book: bookSchema.optional(),
    account: accountFiguresSchema.optional(),
  })
  .refine((b) => b.events.length > 0 || b.book !== undefined, { message: 'send at least one event or the book' });
export type TradesBody = z.infer<typeof tradesBodySchema>;

/** `journal_full`: the event would begin a trade past the most one account's journal holds (docs/trades.md). */
type TradeRefusal = 'foreign_ticket' | 'future' | 'too_old' | 'journal_full';

/** What became of one event of a trades call. */
export interface TradeEventResult {
  eventId: string;
  result: 'recorded' | 'duplicate' | 'refused';
  reason?: TradeRefusal;
}

/**
 * Why a book was refused (nothing of it applied): `future`, its `takenAt`, a position's `openedAt` or an order's
 * `placedAt` lies more than FUTURE_TOLERANCE_MS ahead of the service's clock (the terminal's clock is ahead of UTC).
 */
type BookRefusal = 'future';

/** The answer of `POST /bridge/v1/trades`. */
export interface TradesAnswer {
  events: TradeEventResult[];
  book: 'recorded' | 'absent' | 'refused';
  /** With `book: 'refused'`: why, and the first field that made it so (`book.positions.3.openedAt`). */
  bookRefusal?: { reason: BookRefusal; path: string };
}

/** The first time of a book past the clock (`nowMs` + FUTURE_TOLERANCE_MS), as its path; undefined when none is. */
export function bookPastClock(book: Book, nowMs: number): string | undefined {
  const ahead = (at: string) => Date.parse(at) > nowMs + FUTURE_TOLERANCE_MS;
  if (ahead(book.takenAt)) return 'book.takenAt';
  const p = book.positions.findIndex((x) => ahead(x.openedAt));
  if (p >= 0) return `book.positions.${p}.openedAt`;
  const o = book.orders.findIndex((x) => ahead(x.placedAt));
  return o >= 0 ? `book.orders.${o}.placedAt` : undefined;
}

/** The journal's record of one trade (docs/trades.md). */
export type TradeStatus = 'pending' | 'open' | 'closed' | 'cancelled' | 'expired';
/** How a trade ended: a bridge's cause, or `unknown` when the book no longer listed it and no event said why. */
export type TradeCloseCause = (typeof POSITION_CLOSE_CAUSES)[number] | (typeof ORDER_CANCEL_CAUSES)[number] | 'expired' | 'unknown';

/** One event as the trade keeps it: the bridge's event without what the record already says, or the service's own. */
export interface JournalEvent {
  eventId: string;
  type: TradeEventType | 'position_closed_unknown' | 'order_closed_unknown' | 'position_seen_in_book' | 'order_seen_in_book';
  at: string;
  [field: string]: unknown;
}

export interface TradeRecord {
  /** The position's ticket, or `order:<ticket>` while the trade is a pending order. */
  tradeId: string;
  accountId: string;
  symbol: string;
  side: 'buy' | 'sell';
  status: TradeStatus;
  /** `signal`: a service command opened it; `outside`: seen first in the book (opened by hand, or its event lost). */
  origin: 'signal' | 'outside';
  signalId?: string;
  openCommandId?: string;
  /** The pending order's ticket, when the trade began as one. */
  orderTicket?: string;
  orderType?: (typeof ORDER_TYPES)[number];
  orderPrice?: number;
  stopLimitPrice?: number;
  placedAt?: string;
  expiresAt?: string;
  openedAt?: string;
  openPrice?: number;
  /** Lots open now (for a pending order: its lots). */
  volume: number;
  closedVolume: number;
  sl: number | null;
  tp: number | null;
  realizedProfit: number;
  commission: number;
  swap: number;
  /** The price of the last (partial) close. */
  closePrice?: number;
  closedAt?: string;
  closeCause?: TradeCloseCause;
  /** Signals of the commands that modified or closed it. */
  linkedSignals: string[];
  /** Events folded out of `events` to keep it within its bound (the first is always kept). */
  foldedEvents: number;
  /** What the folded events said of the trade's management, so a long trail's moves still count (src/trades/management.ts). */
  foldedManagement?: TradeManagement;
  /** When the journal last changed it. */
  updatedAt: string;
  events: JournalEvent[];
}
export type TradeSummary = Omit<TradeRecord, 'events' | 'foldedManagement'> & { management?: TradeManagement };

/**
 * What the bridge's trade management did to a trade (protocol 1.6; docs/trades.md, "Management"), from its events:
 * where the trail became active (a price), how often the stop moved (trailing or breakeven), when the breakeven move
 * was made, how many take-profit levels closed their share, and whether a reverse (`closeOpposite`) closed it.
 */
export interface TradeManagement {
  trailActiveAt: number | null;
  stopMoves: number;
  breakevenAt: string | null;
  levelsHit: number;
  closedOpposite: boolean;
}
