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

/** How often a step of events is applied again when another call of the same account changed its trades first. */
const MAX_ATTEMPTS = 8;
/**
 * Events applied in one atomic step at most: a call's hundred in one, a whole book's reconciliation (up to 2,000) in
 * steps of this many, so that one Lua step never holds Redis long on one account's behalf.
 */
const EVENTS_PER_STEP = 100;
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
  const events = await recordEvents(deps, account, body.events, nowMs);
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

/**
 * How long one trades call holds its account at most: the bridge kit gives up on a call after 15 s
 * (src/bridge-kit/client.ts) and sends it again; a call of an ingress that died frees the account then too.
 */
const CALL_HOLD_MS = 15_000;

/**
 * Lets one trades call of the account in, before its body is read (src/http/routes/bridge.ts), or refuses it 429:
 * its minute is spent (a book alone too: until the minute ends nothing of the account is read), or another of its
 * calls is being applied. A bridge sends its calls one after another (src/bridge-kit/trade-sender.ts); calls of one
 * account at once would only apply their events against each other's, and a bridge past its minute that sends on
 * costs a read, not a parse of its body. Returns what ends the call.
 */
export async function openTradesCall(deps: TradesDeps, account: Account): Promise<() => Promise<void>> {
  const call = await deps.journal.openCall(account.id, TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE, CALL_HOLD_MS);
  if (call.open) return call.end;
  if (call.reason === 'spent') throw minuteSpent(deps, account, 0, call.retryAfterMs);
  throw new Refusal(
    'throttled',
    'One trades call per account at a time: another call of this account is being recorded; nothing of this one was read, send it again after Retry-After',
    {
      scope: 'trade_calls',
      limit: 1,
      retryAfterSeconds: 1,
    },
  );
}

/** The call's events out of the account's minute (a book alone costs nothing), or the 429 that says when to come back. */
async function chargeEvents(deps: TradesDeps, account: Account, count: number): Promise<void> {
  if (count === 0) return;
  const spent = await deps.journal.chargeEvents(account.id, count, TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE, EVENT_BUDGET_WINDOW_MS);
  if (spent !== undefined) throw minuteSpent(deps, account, count, spent.retryAfterMs);
}

function minuteSpent(deps: TradesDeps, account: Account, events: number, retryAfterMs: number): Refusal {
  const max = TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE;
  deps.logger?.warn({ accountId: account.id, events, retryAfterMs }, 'trade events refused: the account sent its minute');
  return new Refusal('throttled', `At most ${max} trade events a minute per account; nothing of this call was recorded, send it again after Retry-After`, {
    scope: 'trade_events',
    limit: max,
    windowMs: EVENT_BUDGET_WINDOW_MS,
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  });
}

/** The call's events, each judged, recorded once and applied in the call's order; then their owner's callbacks. */
async function recordEvents(deps: TradesDeps, account: Account, events: readonly TradeEvent[], nowMs: number): Promise<TradeEventResult[]> {
  const judged = events.map((event) => judge(deps, account, event, nowMs));
  const taken = judged.flatMap((j, i) => (j.refused ? [] : [{ event: events[i]!, signalId: j.signalId }]));
  const applied = await applyAll(deps, account.id, taken, nowMs);
  const results: TradeEventResult[] = [];
  let next = 0;
  for (const [i, j] of judged.entries()) {
    const event = events[i]!;
    if (j.refused) {
      results.push({ eventId: event.eventId, result: 'refused', reason: j.refused });
      continue;
    }
    const { result, trade } = applied[next++]!;
    if (result === 'full') {
      results.push({ eventId: event.eventId, result: 'refused', reason: 'journal_full' });
      continue;
    }
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
    results.push({ eventId: event.eventId, result });
  }
  return results;
}

/** Refused on its face (its time, another account's command), or taken with the signal its command names. */
function judge(deps: TradesDeps, account: Account, event: TradeEvent, nowMs: number): { refused?: NonNullable<TradeEventResult['reason']>; signalId?: string } {
  const atMs = Date.parse(event.at);
  if (atMs > nowMs + FUTURE_TOLERANCE_MS) return { refused: 'future' };
  if (atMs < nowMs - deps.retentionMs) return { refused: 'too_old' };
  // A command of another account names a ticket of that account's: this journal never takes it.
  const commandAccount = event.commandId === undefined ? undefined : accountOfCommand(event.commandId);
  if (commandAccount !== undefined && commandAccount !== account.id) return { refused: 'foreign_ticket' };
  return commandAccount === undefined ? {} : { signalId: signalOfCommand(event.commandId!) };
}

interface Applied {
  result: 'recorded' | 'duplicate' | 'full';
  /** The trade as the event left it (a duplicate: as it is), for the callbacks. */
  trade?: TradeRecord;
}

/**
 * Applies events (a bridge's, or the book's) in their order, each once, in one read and one atomic step per chunk:
 * the records they touch read together, the events applied to them in memory, the records written back with every
 * event id in one Lua step that refuses if anything changed meanwhile (then the chunk is read and applied again).
 */
async function applyAll(deps: TradesDeps, accountId: string, items: readonly { event: JournalInput; signalId?: string }[], nowMs: number): Promise<Applied[]> {
  const out: Applied[] = [];
  for (let i = 0; i < items.length; i += EVENTS_PER_STEP) out.push(...(await applyChunk(deps, accountId, items.slice(i, i + EVENTS_PER_STEP), nowMs)));
  return out;
}

async function applyChunk(
  deps: TradesDeps,
  accountId: string,
  items: readonly { event: JournalInput; signalId?: string }[],
  nowMs: number,
): Promise<Applied[]> {
  if (items.length === 0) return [];
  const ids = [...new Set(items.flatMap((item) => tradesTouched(item.event)))];
  const nowIso = new Date(nowMs).toISOString();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const read = await deps.journal.readForEvents(
      accountId,
      ids,
      items.map((item) => item.event.eventId),
    );
    const raw = new Map(ids.map((id, i) => [id, read.raw[i] ?? null]));
    const state = new Map<string, TradeRecord>();
    for (const [id, text] of raw) if (text) state.set(id, JSON.parse(text) as TradeRecord);
    const recorded = new Set<string>();
    const events: { eventId: string; atMs: number; realized: number }[] = [];
    const applied: Applied[] = [];
    let held = read.held;
    for (const [i, { event, signalId }] of items.entries()) {
      const touched = tradesTouched(event);
      if (read.seen[i] || recorded.has(event.eventId)) {
        // The trade as it is: the position a triggered order became, else the trade named.
        const trades = touched.flatMap((id) => (state.has(id) ? [state.get(id)!] : []));
        applied.push({ result: 'duplicate', trade: trades.find((t) => !t.tradeId.startsWith('order:')) ?? trades[0] });
        continue;
      }
      const writes = applyEvent(state, event, { accountId, nowIso, ...(signalId ? { signalId } : {}) });
      const begun = [...writes].filter(([id, record]) => record !== null && !state.has(id)).length;
      const gone = [...writes].filter(([id, record]) => record === null && state.has(id)).length;
      if (begun > 0 && held + begun > read.maxTrades) {
        applied.push({ result: 'full' });
        continue;
      }
      held += begun - gone;
      for (const [id, record] of writes) {
        if (record) state.set(id, record);
        else state.delete(id);
      }
      recorded.add(event.eventId);
      // The time the journal's freshness is read from (the last event's, the day's quarter hour) never passes the
      // clock: an event up to FUTURE_TOLERANCE_MS ahead counts as now.
      events.push({ eventId: event.eventId, atMs: Math.min(Date.parse(event.at), nowMs), realized: realizedBy(event) });
      applied.push({ result: 'recorded', trade: [...writes.values()].find((r): r is TradeRecord => r !== null) });
    }
    if (events.length === 0) return applied;
    const writes = ids.flatMap((id) => {
      const record = state.get(id) ?? null;
      const before = raw.get(id) ?? null;
      return before === null && record === null ? [] : [{ tradeId: id, expect: before, record }];
    });
    const result = await deps.journal.commit(accountId, { events, writes });
    if (result === 'recorded') return applied;
  }
  // Only a storm of calls for the same trades gets here: the bridge sends it again on the 503.
  throw new Refusal('backpressure', 'The trades changed under this call too often, retry later');
}

async function reconcileBook(deps: TradesDeps, account: Account, book: Book, nowMs: number): Promise<void> {
  const tickets = [...book.positions.map((p) => p.ticket), ...book.orders.map((o) => `order:${o.ticket}`)];
  const [known, openIds] = await Promise.all([deps.journal.readRaw(account.id, tickets), deps.journal.openTradeIds(account.id, 4 * MAX_BOOK_ENTRIES)]);
  const open = (await deps.journal.readRaw(account.id, openIds)).flatMap((t) => (t ? [JSON.parse(t) as TradeRecord] : []));
  const inJournal = new Set(tickets.filter((_, i) => known[i] !== null));
  // A full journal takes no trade opened outside; the book's closes still apply.
  await applyAll(
    deps,
    account.id,
    reconcile(book, inJournal, open, nowMs).map((event) => ({ event })),
    nowMs,
  );
  await deps.journal.saveBook(account.id, book);
}
