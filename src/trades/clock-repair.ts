import type { Redis } from 'ioredis';
import { bookPastClock, FUTURE_TOLERANCE_MS, type JournalEvent, type TradeRecord } from '../domain/trade-events';
import { journalKeys, RedisTradeJournal } from './journal';

/**
 * The repair of a journal written before books were bounded by the clock (docs/trades.md, "Clock"): a book taken by a
 * terminal whose clock ran ahead left times past the clock, which froze the data's age and kept trades from being
 * reconciled. Each time past the clock (now + FUTURE_TOLERANCE_MS) becomes now; a trade that such a book ended
 * `unknown` is open again (the next book that does not list it ends it, at its own time); the last event's time goes back
 * to the newest one not past the clock; a saved book past the clock is dropped (the next book takes its place).
 */

export interface ClockRepair {
  accountId: string;
  /** Trades whose times were past the clock. */
  repaired: string[];
  /** Of those, the ones a book past the clock had ended `unknown`, open (or pending) again. */
  reopened: string[];
  bookDropped: boolean;
  /** The last event's time before and after (null: none). */
  lastEvent: { before: string | null; after: string | null };
}

const TIMES = ['placedAt', 'openedAt', 'closedAt', 'updatedAt'] as const;
const UNKNOWN_ENDS = new Set(['position_closed_unknown', 'order_closed_unknown']);

/** One record with its times past `limitMs` made `nowIso`; the id of the unknown end it undid, when it reopened. */
export function repairRecord(r: TradeRecord, limitMs: number, nowIso: string): { record: TradeRecord; undone?: string } {
  const past = (at: string | undefined) => at !== undefined && Date.parse(at) > limitMs;
  const record: TradeRecord = { ...r, events: r.events.map((e) => (past(e.at) ? { ...e, at: nowIso } : e)) };
  for (const k of TIMES) if (past(record[k])) record[k] = nowIso;
  const last = r.events[r.events.length - 1];
  if (!last || !UNKNOWN_ENDS.has(last.type) || !past(last.at) || r.closeCause !== 'unknown') return { record };
  // Lots the unknown end took: all that was open, i.e. what no close event of the bridge accounts for.
  const closedByBridge = r.events.reduce((sum, e: JournalEvent) => sum + (e.type === 'position_closed' ? Number(e.volume) : 0), 0);
  if (r.foldedEvents > 0 && last.type === 'position_closed_unknown') return { record };
  const reopened: TradeRecord = { ...record, events: record.events.slice(0, -1), status: last.type === 'order_closed_unknown' ? 'pending' : 'open' };
  if (last.type === 'position_closed_unknown') {
    reopened.volume = Math.round((r.closedVolume - closedByBridge) * 1e8) / 1e8;
    reopened.closedVolume = Math.round(closedByBridge * 1e8) / 1e8;
  }
  delete reopened.closedAt;
  delete reopened.closeCause;
  return { record: reopened, undone: last.eventId };
}

export async function repairJournalClock(redis: Redis, accountId: string, nowMs: number): Promise<ClockRepair> {
  const k = journalKeys(accountId);
  const journal = new RedisTradeJournal(redis);
  const limitMs = nowMs + FUTURE_TOLERANCE_MS;
  const nowIso = new Date(nowMs).toISOString();
  const before = await journal.lastEventMs(accountId);
  const ids = [...new Set([...(await redis.zrangebyscore(k.all, `(${limitMs}`, '+inf')), ...(await redis.zrangebyscore(k.closed, `(${limitMs}`, '+inf'))])];
  const repaired: string[] = [];
  const reopened: string[] = [];
  const marks: string[] = [];
  for (const tradeId of ids) {
    for (let attempt = 0; attempt < 8; attempt++) {
      const [raw] = await journal.readRaw(accountId, [tradeId]);
      if (!raw) break;
      const { record, undone } = repairRecord(JSON.parse(raw) as TradeRecord, limitMs, nowIso);
      const mark = `repair/clock/${tradeId}/${nowMs}`;
      const result = await journal.commit(accountId, { events: [{ eventId: mark, atMs: nowMs, realized: 0 }], writes: [{ tradeId, expect: raw, record }] });
      if (result === 'conflict') continue;
      marks.push(mark);
      repaired.push(tradeId);
      // The undone end may come again, from a book that no longer lists the trade.
      if (undone) {
        reopened.push(tradeId);
        marks.push(undone);
      }
      break;
    }
  }
  if (marks.length > 0) await redis.zrem(k.seen, ...marks);
  const [, newest] = await redis.zrevrangebyscore(k.seen, limitMs, '-inf', 'WITHSCORES', 'LIMIT', 0, 1);
  // Event ids past the clock stay (a resend is still a duplicate), kept from now for the retention.
  const ahead = await redis.zrangebyscore(k.seen, `(${limitMs}`, '+inf');
  if (ahead.length > 0) await redis.zadd(k.seen, 'XX', ...ahead.flatMap((id) => [nowMs, id]));
  // The repair's own commits moved the last event's time to now: it is the newest event's again.
  if (repaired.length > 0 || (before !== undefined && before > limitMs)) {
    if (newest === undefined) await redis.del(k.last);
    else await redis.set(k.last, newest);
  }
  const book = await journal.book(accountId);
  const bookDropped = book !== undefined && bookPastClock(book, nowMs) !== undefined;
  if (bookDropped) await redis.del(k.book);
  const after = await journal.lastEventMs(accountId);
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return { accountId, repaired, reopened, bookDropped, lastEvent: { before: iso(before), after: iso(after) } };
}
