import { z } from 'zod';
import type { Account } from '../domain/account';
import { TRADE_EVENTS_FEATURE, MAX_BOOK_ENTRIES, type TradeManagement, type TradeRecord, type TradeSummary } from '../domain/trade-events';
import type { FiguresStore } from '../bridge/figures';
import { ownerAccount, type OwnerAccountsDeps } from '../owners/accounts';
import { Refusal } from '../refusal';
import type { TradeJournal } from './journal';
import { dayFigures, type DayFigures } from './day';
import { managementOf } from './management';

/**
 * The trade journal as its owner reads it (docs/trades.md, "Owner API"): every read starts from the owner's own
 * account (another owner's is not found), and every answer is bounded.
 */
export interface OwnerTradesDeps {
  accounts: OwnerAccountsDeps;
  journal: TradeJournal;
  figures: FiguresStore;
  retentionMs: number;
  now: () => Date;
}

const MAX_LIST = 200;
/** Ids read from an index for one page when filters skip most of them: past it the page ends with a cursor. */
const MAX_SCAN = 2000;
const MAX_EQUITY_POINTS = 2000;
const MAX_SIGNAL_TRADES = 500;

/** The trade's management state (src/trades/management.ts): present once any management event is. */
function managed(t: TradeRecord): { management?: TradeManagement } {
  const management = managementOf(t.events, t.foldedManagement);
  return management ? { management } : {};
}
const summary = (t: TradeRecord): TradeSummary => {
  const { events: _events, foldedManagement: _folded, ...rest } = t;
  return { ...rest, ...managed(t) };
};
const invalid = (error: z.ZodError) =>
  new Refusal('invalid', 'Invalid query', { details: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) });
const instant = z.iso.datetime({ offset: true }).max(64);

async function records(journal: TradeJournal, accountId: string, ids: readonly string[]): Promise<TradeRecord[]> {
  return (await journal.readRaw(accountId, ids)).flatMap((t) => (t ? [JSON.parse(t) as TradeRecord] : []));
}

/** Open positions and pending orders: the journal's open trades (events and reconciled books), with the book's floating P&L. */
export async function ownerBook(deps: OwnerTradesDeps, owner: string, accountId: string) {
  const account = await ownerAccount(deps.accounts, owner, accountId);
  const [book, lastMs, ids] = await Promise.all([
    deps.journal.book(account.id),
    deps.journal.lastEventMs(account.id),
    deps.journal.openTradeIds(account.id, 2 * MAX_BOOK_ENTRIES),
  ]);
  const open = await records(deps.journal, account.id, ids);
  // A book's takenAt may lie up to FUTURE_TOLERANCE_MS ahead (a terminal's clock): the data is never newer than now.
  const nowMs = deps.now().getTime();
  const asOfMs = Math.min(Math.max(book ? Date.parse(book.takenAt) : -Infinity, lastMs ?? -Infinity), nowMs);
  const asOf = Number.isFinite(asOfMs) ? new Date(asOfMs).toISOString() : null;
  const floating = new Map(book?.positions.map((p) => [p.ticket, p]) ?? []);
  const link = (t: TradeRecord) => ({ tradeId: t.tradeId, ...(t.signalId ? { signalId: t.signalId } : {}) });
  return {
    asOf,
    ageSeconds: asOf === null ? null : Math.max(0, Math.round((nowMs - asOfMs) / 1000)),
    reportedByBridge: reportedByBridge(account),
    bridgeVersion: account.bridgeVersion === '0.0.0' ? null : account.bridgeVersion,
    positions: open
      .filter((t) => t.status === 'open')
      .map((t) => {
        const b = floating.get(t.tradeId);
        return {
          ticket: t.tradeId,
          symbol: t.symbol,
          side: t.side,
          volume: t.volume,
          openPrice: t.openPrice ?? null,
          sl: t.sl,
          tp: t.tp,
          openedAt: t.openedAt ?? null,
          profit: b?.profit ?? null,
          swap: b?.swap ?? t.swap,
          commission: b?.commission ?? t.commission,
          ...link(t),
          ...managed(t),
        };
      }),
    orders: open
      .filter((t) => t.status === 'pending')
      .map((t) => ({
        ticket: t.orderTicket ?? t.tradeId.slice('order:'.length),
        symbol: t.symbol,
        side: t.side,
        orderType: t.orderType ?? null,
        volume: t.volume,
        price: t.orderPrice ?? null,
        stopLimitPrice: t.stopLimitPrice ?? null,
        sl: t.sl,
        tp: t.tp,
        placedAt: t.placedAt ?? null,
        expiresAt: t.expiresAt ?? null,
        ...link(t),
      })),
  };
}

function reportedByBridge(account: Account): boolean {
  return (account.bridgeFeatures as readonly string[]).includes(TRADE_EVENTS_FEATURE);
}

const listQuerySchema = z.strictObject({
  status: z.enum(['open', 'closed', 'all']).default('all'),
  symbol: z.string().min(1).max(32).optional(),
  signalId: z.string().min(1).max(64).optional(),
  from: instant.optional(),
  to: instant.optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIST).default(50),
  cursor: z
    .string()
    .max(200)
    .regex(/^-?\d+(\.\d+)?~.{1,80}$/, 'a cursor from a previous page')
    .optional(),
});

/** Trades newest first (by when they began; closed ones by when they closed), filtered, in pages. */
export async function ownerTrades(deps: OwnerTradesDeps, owner: string, accountId: string, query: unknown) {
  const parsed = listQuerySchema.safeParse(query);
  if (!parsed.success) throw invalid(parsed.error);
  const q = parsed.data;
  const account = await ownerAccount(deps.accounts, owner, accountId);
  const fromMs = q.from ? Date.parse(q.from) : undefined;
  const toMs = q.to ? Date.parse(q.to) : undefined;
  const keep = (t: TradeRecord) => (q.symbol === undefined || t.symbol === q.symbol) && (q.signalId === undefined || tradeOfSignal(t, q.signalId));
  if (q.signalId !== undefined) {
    // A signal's trades come from its own index: a handful, answered whole.
    const found = (await records(deps.journal, account.id, await deps.journal.tradesOfSignal(account.id, q.signalId, MAX_SIGNAL_TRADES))).filter(
      (t) => keep(t) && (q.status === 'all' || (q.status === 'open') === (t.status === 'open' || t.status === 'pending')),
    );
    return { trades: newestFirst(found).slice(0, q.limit).map(summary), nextCursor: null };
  }
  let after = q.cursor ? cursorOf(q.cursor) : undefined;
  const trades: TradeRecord[] = [];
  let scanned = 0;
  while (trades.length < q.limit && scanned < MAX_SCAN) {
    const page = await deps.journal.list(account.id, { status: q.status, fromMs, toMs, after, scan: MAX_LIST });
    if (page.length === 0) return { trades: trades.map(summary), nextCursor: null };
    const found = await records(
      deps.journal,
      account.id,
      page.map((p) => p.tradeId),
    );
    const byId = new Map(found.map((t) => [t.tradeId, t]));
    for (const p of page) {
      scanned++;
      after = p;
      const t = byId.get(p.tradeId);
      if (t && keep(t)) trades.push(t);
      if (trades.length === q.limit) break;
    }
    if (page.length < MAX_LIST && trades.length < q.limit) return { trades: trades.map(summary), nextCursor: null };
  }
  return { trades: trades.map(summary), nextCursor: after ? `${after.score}~${after.tradeId}` : null };
}

export async function ownerTrade(
  deps: OwnerTradesDeps,
  owner: string,
  accountId: string,
  tradeId: string,
): Promise<TradeSummary & Pick<TradeRecord, 'events'>> {
  const account = await ownerAccount(deps.accounts, owner, accountId);
  const [found] = tradeId.length <= 80 ? await records(deps.journal, account.id, [tradeId]) : [];
  if (!found) throw new Refusal('not_found', 'No such trade');
  return { ...summary(found), events: found.events };
}

const rangeSchema = z.strictObject({ from: instant.optional(), to: instant.optional() });

/** The equity curve: points sampled from the bridge's figures, at most one a minute, thinned evenly past 2,000. */
export async function ownerEquity(deps: OwnerTradesDeps, owner: string, accountId: string, query: unknown) {
  const parsed = rangeSchema.safeParse(query);
  if (!parsed.success) throw invalid(parsed.error);
  const account = await ownerAccount(deps.accounts, owner, accountId);
  const fromMs = parsed.data.from ? Date.parse(parsed.data.from) : deps.now().getTime() - deps.retentionMs;
  const toMs = parsed.data.to ? Date.parse(parsed.data.to) : deps.now().getTime();
  const [latest, points] = await Promise.all([deps.figures.latest(account.id), deps.journal.equity(account.id, fromMs, toMs, MAX_EQUITY_POINTS)]);
  return { currency: latest?.figures.currency ?? null, points };
}

/** Today's realized P&L and the loss guards' gauges, in the account's loss-guard time zone. */
export async function ownerDay(deps: OwnerTradesDeps, owner: string, accountId: string): Promise<DayFigures> {
  const account = await ownerAccount(deps.accounts, owner, accountId);
  return dayFigures(deps.journal, deps.figures, account, deps.now().getTime());
}

/** Every trade a signal opened, modified or closed, on every account of the owner. */
export async function ownerSignalTrades(deps: OwnerTradesDeps, owner: string, signalId: string) {
  if (signalId.length > 64) throw new Refusal('not_found', 'No such signal');
  const accounts = await deps.accounts.registry.accountsOf(owner);
  const found = await Promise.all(accounts.map(async (a) => records(deps.journal, a.id, await deps.journal.tradesOfSignal(a.id, signalId, MAX_SIGNAL_TRADES))));
  return { trades: newestFirst(found.flat()).map(summary) };
}

function tradeOfSignal(t: TradeRecord, signalId: string): boolean {
  return t.signalId === signalId || t.linkedSignals.includes(signalId);
}

function newestFirst(trades: TradeRecord[]): TradeRecord[] {
  const began = (t: TradeRecord) => Date.parse(t.placedAt ?? t.openedAt ?? t.updatedAt);
  return trades.sort((a, b) => began(b) - began(a));
}

function cursorOf(cursor: string): { score: number; tradeId: string } {
  const at = cursor.indexOf('~');
  return { score: Number(cursor.slice(0, at)), tradeId: cursor.slice(at + 1) };
}
