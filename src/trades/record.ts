import type { Logger } from 'pino';
import type { Account } from '../domain/account';
import { accountOfCommand, signalOfCommand } from '../domain/ids';
import {
  bookPastClock,
  FUTURE_TOLERANCE_MS,
  MAX_BOOK_ENTRIES,
  type Book,
  type TradeEvent,
  type TradeEventResult,
  type TradeRecord,
  type TradesAnswer,
  type TradesBody,
} from '../domain/trade-events';
import { applyEvent, realizedBy, tradesTouched, type JournalInput } from './apply';
import type { TradeJournal } from './journal';
import { tradeCallbackEventOf, type PublishTradeEvent } from './callback-events';
import { Refusal } from '../refusal';
import { reconcile } from './reconcile';

/**
 * `POST /bridge/v1/trades` after its body is checked (docs/trades.md): each event recorded once per (account,
 * eventId) and applied to its trade, then the book reconciled with the journal and kept, then what is past retention
 * removed. Nothing here is on the path to a signal's 202 or to the bridge's hand-out of commands.
 */

export interface TradesDeps {
  journal: TradeJournal;
  /** TRADE_JOURNAL_RETENTION_DAYS in ms. */
  retentionMs: number;
  /**
   * The owner's callbacks for each recorded position or order event (src/trades/callback-events.ts): the `poll-exits`
   * branch's publishTradeEvent. Absent, none go.
   */
  publish?: PublishTradeEvent;
  logger?: Logger;
}

/** How often one event is applied again when other calls of the same account changed its trades first. */
const MAX_ATTEMPTS = 8;
/** Trades past retention removed per call: the rest go with the next calls. */
const PRUNE_PER_CALL = 200;

/**
 * The trade events one account's bridge may send a minute (every event of a call counted, a resend too); past it the
 * call is refused whole, 429 with Retry-After, and nothing of it recorded. A real terminal's events follow its broker
 * operations: an MT5 terminal sends its trade requests one at a time (tens a second at most), cTrader's Open API
 * takes 50 requests a second per connection for all its accounts, and the largest burst the broker makes alone is a
 * whole book closing at once (a stop-out of the 1,000 positions a book may list). 1,200 a minute takes that burst in
 * one minute and 20 events a second for ever; a bridge past it only waits (its outbox keeps the events).
 */
export const TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE = 1_200;
const EVENT_BUDGET_WINDOW_MS = 60_000;

export async function recordTrades(deps: TradesDeps, account: Account, body: TradesBody, nowMs: number): Promise<TradesAnswer> {
  await chargeEvents(deps, account, body.events.length);
  const events: TradeEventResult[] = [];
  for (const event of body.events) events.push(await recordOne(deps, account, event, nowMs));
  // A book from a clock ahead of the service's is refused whole: its takenAt would close trades and freeze the data's
  // age, its openedAt would keep a position from ever being reconciled. The events beside it are judged on their own.
  const pastClock = body.book && bookPastClock(body.book, nowMs);
  if (body.book && !pastClock) await reconcileBook(deps, account, body.book, nowMs);
  await deps.journal.prune(account.id, nowMs - deps.retentionMs, PRUNE_PER_CALL);
  if (pastClock) {
    deps.logger?.warn({ accountId: account.id, path: pastClock }, 'book refused: its clock is ahead of the service');
    return { events, book: 'refused', bookRefusal: { reason: 'future', path: pastClock } };
  }
  return { events, book: body.book ? 'recorded' : 'absent' };
}

/** The call's events out of the account's minute (a book alone costs nothing), or the 429 that says when to come back. */
async function chargeEvents(deps: TradesDeps, account: Account, count: number): Promise<void> {
  if (count === 0) return;
  const max = TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE;
  const spent = await deps.journal.chargeEvents(account.id, count, max, EVENT_BUDGET_WINDOW_MS);
  if (spent === undefined) return;
  deps.logger?.warn({ accountId: account.id, events: count, retryAfterMs: spent.retryAfterMs }, 'trade events refused: the account sent its minute');
  throw new Refusal('throttled', `At most ${max} trade events a minute per account; nothing of this call was recorded, send it again after Retry-After`, {
    scope: 'trade_events',
    limit: max,
    windowMs: EVENT_BUDGET_WINDOW_MS,
    retryAfterSeconds: Math.max(1, Math.ceil(spent.retryAfterMs / 1000)),
  });
}

async function recordOne(deps: TradesDeps, account: Account, event: TradeEvent, nowMs: number): Promise<TradeEventResult> {
  const refused = (reason: NonNullable<TradeEventResult['reason']>): TradeEventResult => ({ eventId: event.eventId, result: 'refused', reason });
  const atMs = Date.parse(event.at);
  if (atMs > nowMs + FUTURE_TOLERANCE_MS) return refused('future');
  if (atMs < nowMs - deps.retentionMs) return refused('too_old');
  // A command of another account names a ticket of that account's: this journal never takes it.
  const commandAccount = event.commandId === undefined ? undefined : accountOfCommand(event.commandId);
  if (commandAccount !== undefined && commandAccount !== account.id) return refused('foreign_ticket');
  const signalId = commandAccount === undefined ? undefined : signalOfCommand(event.commandId!);
  const { result, trade } = await apply(deps, account.id, event, nowMs, signalId);
  if (result === 'full') return refused('journal_full');
  // Published again on a duplicate: the answer that followed the first publishing may have been lost with its call,
  // and a delivery is started once per (account, eventId) however often it is published.
  const callback = deps.publish && trade && tradeCallbackEventOf(event, trade);
  if (callback) {
    await deps.publish!(account.owner, callback).catch((err: unknown) => {
      deps.logger?.warn(
        { accountId: account.id, eventId: event.eventId, err: String(err) },
        'trade event callback not started; the bridge sends the event again',
      );
      throw new Refusal('backpressure', 'Trade event callbacks cannot be started now, retry later');
    });
  }
  return { eventId: event.eventId, result };
}

/** Applies one event (a bridge's or the book's) once; the trade it ended in, for the callbacks. */
async function apply(
  deps: TradesDeps,
  accountId: string,
  event: JournalInput,
  nowMs: number,
  signalId?: string,
): Promise<{ result: 'recorded' | 'duplicate' | 'full'; trade?: TradeRecord }> {
  const ids = tradesTouched(event);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const raw = await deps.journal.readRaw(accountId, ids);
    const current = new Map<string, TradeRecord>();
    ids.forEach((id, i) => raw[i] && current.set(id, JSON.parse(raw[i]) as TradeRecord));
    const writes = applyEvent(current, event, { accountId, nowIso: new Date(nowMs).toISOString(), ...(signalId ? { signalId } : {}) });
    const result = await deps.journal.commit(accountId, {
      eventId: event.eventId,
      // The time the journal's freshness is read from (the last event's, the day's quarter hour) never passes the
      // clock: an event up to FUTURE_TOLERANCE_MS ahead counts as now.
      atMs: Math.min(Date.parse(event.at), nowMs),
      realized: realizedBy(event),
      writes: [...writes].map(([tradeId, record]) => ({ tradeId, record, expect: raw[ids.indexOf(tradeId)] ?? null })),
    });
    // The trade as it is, for publishing again: the position a triggered order became, else the trade named.
    if (result === 'duplicate') return { result, trade: [...current.values()].find((t) => !t.tradeId.startsWith('order:')) ?? [...current.values()][0] };
    if (result === 'full') return { result };
    if (result === 'recorded') return { result, trade: [...writes.values()].find((r): r is TradeRecord => r !== null) };
  }
  // Only a storm of calls for the same trade gets here: the bridge sends it again on the 503.
  throw new Refusal('backpressure', 'The trade changed under this call too often, retry later');
}

async function reconcileBook(deps: TradesDeps, account: Account, book: Book, nowMs: number): Promise<void> {
  const tickets = [...book.positions.map((p) => p.ticket), ...book.orders.map((o) => `order:${o.ticket}`)];
  const [known, openIds] = await Promise.all([deps.journal.readRaw(account.id, tickets), deps.journal.openTradeIds(account.id, 4 * MAX_BOOK_ENTRIES)]);
  const open = (await deps.journal.readRaw(account.id, openIds)).flatMap((t) => (t ? [JSON.parse(t) as TradeRecord] : []));
  const inJournal = new Set(tickets.filter((_, i) => known[i] !== null));
  for (const event of reconcile(book, inJournal, open, nowMs)) {
    // A full journal takes no trade opened outside; the book's closes still apply.
    await apply(deps, account.id, event, nowMs);
  }
  await deps.journal.saveBook(account.id, book);
}
