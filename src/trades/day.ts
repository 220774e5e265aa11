import type { Account } from '../domain/account';
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
  dailyLossLimit: { amount: number | null; percent: number | null; used: number | null; loss: number | null; dayOpenEquity: number | null } | null;
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
  const [buckets, latest] = await Promise.all([
    journal.realizedBuckets(account.id, Math.floor((nowMs - (DAYS_SHOWN + 2) * DAY_MS) / QUARTER_HOUR_MS)),
    figures.latest(account.id),
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
    dailyLossLimit,
    drawdown,
    equity,
    figuresAt: latest?.at ?? null,
    days,
  };
}
