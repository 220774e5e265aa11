import type { Account } from '../domain/account';
import type { JournalEvent, TradeRecord } from '../domain/trade-events';
import type { FiguresStore } from '../bridge/figures';
import { QUARTER_HOUR_MS, type TradeJournal } from './journal';

/**
 * The account's day as the owner's gauges show it (docs/trades.md, "The day"): realized P&L per calendar day in the
 * account's loss-guard time zone (UTC when none), and the loss guards measured the way the bridge measures them
 * (src/risk/entry-risk.ts): the daily loss from the day's opening equity, the drawdown from the highest equity since
 * the owner's reset. The service's figures are the bridge's samples (one a minute), so a gauge can lag the bridge's
 * own check by that much; the bridge's check is the one that refuses entries.
 */
export interface DayFigures {
  day: string;
  timeZone: string;
  realizedProfit: number;
  /** Today's closes, partial ones too, newest first: their net P&L adds up to `realizedProfit` (todaysCloses, below). */
  closes: DayClose[];
  /** More closes today than `closes` holds. */
  closesTruncated: boolean;
  /** `basis`: what the owner set, an amount or a percent of the day's opening equity (the other is derived from it). */
  dailyLossLimit: {
    basis: 'amount' | 'percent';
    amount: number | null;
    percent: number | null;
    used: number | null;
    loss: number | null;
    dayOpenEquity: number | null;
  } | null;
  drawdown: { current: number | null; max: number; used: number | null; peakEquity: number | null } | null;
  /** The equity the gauges measured, and when the bridge sent it (null: no figures yet). */
  equity: number | null;
  figuresAt: string | null;
  days: { day: string; profit: number }[];
}

const DAY_MS = 86_400_000;
const DAYS_SHOWN = 30;

/** The calendar day (YYYY-MM-DD) of an instant in a time zone. */
export function dayIn(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
}

/**
 * Realized money per day from the quarter-hour sums: every time zone's offset is a whole number of quarter hours, so
 * each sum lies within one local day. The last `count` days up to `nowMs`'s, oldest first, days without a close at 0.
 */
export function dailyProfits(buckets: ReadonlyMap<number, number>, timeZone: string, nowMs: number, count = DAYS_SHOWN): { day: string; profit: number }[] {
  const days: string[] = [];
  // Half-day steps: a 23-hour day (clocks going forward) is never stepped over.
  for (let ms = nowMs; days.length < count; ms -= DAY_MS / 2) {
    const day = dayIn(ms, timeZone);
    if (days.at(-1) !== day) days.push(day);
  }
  const sums = new Map(days.map((d) => [d, 0]));
  for (const [bucket, sum] of buckets) {
    const day = dayIn(bucket * QUARTER_HOUR_MS, timeZone);
    if (sums.has(day)) sums.set(day, sums.get(day)! + sum);
  }
  return days.reverse().map((day) => ({ day, profit: Math.round(sums.get(day)! * 100) / 100 }));
}

const clamp = (n: number) => Math.min(1, Math.max(0, n));
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function dayFigures(journal: TradeJournal, figures: FiguresStore, account: Account, nowMs: number): Promise<DayFigures> {
  const guards = account.risk.lossGuards;
  const timeZone = guards?.timezone ?? 'UTC';
  const today = dayIn(nowMs, timeZone);
  const [buckets, latest, closes] = await Promise.all([
    journal.realizedBuckets(account.id, Math.floor((nowMs - (DAYS_SHOWN + 2) * DAY_MS) / QUARTER_HOUR_MS)),
    figures.latest(account.id),
    todaysCloses(journal, account.id, nowMs, timeZone),
  ]);
  const days = dailyProfits(buckets, timeZone, nowMs);
  const equity = latest?.figures.equity ?? null;

  let dailyLossLimit: DayFigures['dailyLossLimit'] = null;
  if (guards?.dailyLossAmount !== undefined || guards?.dailyLossPercent !== undefined) {
    // The day's opening equity: the first point of the local day (a day is at most 26 hours back).
    const points = await journal.equity(account.id, nowMs - 26 * 3_600_000, nowMs, 2000);
    const dayOpen = points.find((p) => dayIn(Date.parse(p.at), timeZone) === today)?.equity ?? null;
    const amount = guards.dailyLossAmount ?? (dayOpen !== null ? (dayOpen * guards.dailyLossPercent!) / 100 : null);
    const loss = dayOpen !== null && equity !== null ? Math.max(0, dayOpen - equity) : null;
    dailyLossLimit = {
      basis: guards.dailyLossAmount !== undefined ? 'amount' : 'percent',
      amount: amount === null ? null : round(amount),
      percent: guards.dailyLossPercent ?? (amount !== null && dayOpen ? round((amount / dayOpen) * 100) : null),
      used: amount && loss !== null ? round(clamp(loss / amount), 4) : null,
      loss: loss === null ? null : round(loss),
      dayOpenEquity: dayOpen,
    };
  }

  let drawdown: DayFigures['drawdown'] = null;
  if (guards?.maxDrawdownPercent !== undefined) {
    const since = guards.drawdownResetAt ? Date.parse(guards.drawdownResetAt) : 0;
    const peakSeen = await journal.equityPeak(account.id, since);
    const peak = peakSeen === undefined ? equity : Math.max(peakSeen, equity ?? -Infinity);
    const current = peak && equity !== null ? Math.max(0, ((peak - equity) / peak) * 100) : null;
    drawdown = {
      current: current === null ? null : round(current),
      max: guards.maxDrawdownPercent,
      used: current === null ? null : round(clamp(current / guards.maxDrawdownPercent), 4),
      peakEquity: peak,
    };
  }

  return {
    day: today,
    timeZone,
    realizedProfit: days.at(-1)!.profit,
    closes: closes.list,
    closesTruncated: closes.truncated,
    dailyLossLimit,
    drawdown,
    equity,
    figuresAt: latest?.at ?? null,
    days,
  };
}

/**
 * Today's closes, partial ones too (docs/trades.md, "The day"): every `position_closed` of the local day, read from
 * the trades it belongs to, so that the list adds up to the day's realized P&L. A take-profit level's share of a trade
 * still open is one of them: it is realized today though the trade is not closed.
 */
interface DayClose {
  tradeId: string;
  symbol: string;
  side: 'buy' | 'sell';
  signalId?: string;
  at: string;
  /** Lots closed by this close, and what it left open (0: the trade ended). */
  volume: number;
  remainingVolume: number;
  price: number;
  /** Net: profit + commission + swap of this part, as the day's P&L counts it. */
  profit: number;
  cause: string;
}

const MAX_CLOSES = 200;
/** Trades read for one day's closes at most: the day's closed ones and the open ones with a part closed. */
const MAX_TRADES_READ = 2000;

/** The first instant of the local day of `nowMs`: every zone's day begins on a quarter hour. */
function dayStartMs(nowMs: number, timeZone: string): number {
  const today = dayIn(nowMs, timeZone);
  let start = Math.floor(nowMs / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
  while (dayIn(start - QUARTER_HOUR_MS, timeZone) === today) start -= QUARTER_HOUR_MS;
  return start;
}

/** The closes of one trade on the local day `today`, as DayClose rows. */
function closesOf(t: TradeRecord, today: string, timeZone: string): DayClose[] {
  return t.events.flatMap((e: JournalEvent) => {
    if (e.type !== 'position_closed' || dayIn(Date.parse(e.at), timeZone) !== today) return [];
    const n = (k: string) => (typeof e[k] === 'number' ? e[k] : 0);
    return [
      {
        tradeId: t.tradeId,
        symbol: t.symbol,
        side: t.side,
        ...(t.signalId ? { signalId: t.signalId } : {}),
        at: e.at,
        volume: n('volume'),
        remainingVolume: n('remainingVolume'),
        price: n('price'),
        profit: Math.round((n('profit') + n('commission') + n('swap')) * 1e8) / 1e8,
        cause: typeof e.cause === 'string' ? e.cause : 'other',
      },
    ];
  });
}

async function todaysCloses(journal: TradeJournal, accountId: string, nowMs: number, timeZone: string): Promise<{ list: DayClose[]; truncated: boolean }> {
  const today = dayIn(nowMs, timeZone);
  const [closed, open] = await Promise.all([
    journal.list(accountId, { status: 'closed', fromMs: dayStartMs(nowMs, timeZone), scan: MAX_TRADES_READ }),
    journal.openTradeIds(accountId, MAX_TRADES_READ),
  ]);
  const ids = [...closed.map((c) => c.tradeId), ...open.filter((id) => !id.startsWith('order:'))];
  const raw = await journal.readRaw(accountId, ids);
  const closes = raw.flatMap((text) => (text ? closesOf(JSON.parse(text) as TradeRecord, today, timeZone) : []));
  closes.sort((a, b) => Date.parse(b.at) - Date.parse(a.at) || (a.tradeId < b.tradeId ? -1 : 1));
  return { list: closes.slice(0, MAX_CLOSES), truncated: closes.length > MAX_CLOSES };
}
