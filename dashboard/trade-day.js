// The account's day in the trader's words: the realized P&L and the closes that add up to it (partial ones too), and
// the loss guards as gauges that say what each counts and what each percentage is of. Pure: no DOM, so node runs it
// too (test/unit/trade-day.test.ts). Shapes: GET /v1/owner/accounts/{id}/day (docs/trades.md, "The day").
'use strict';

import { causeText, lots, money, price } from './trade-model.js?v=__VERSION__';

/** The day's realized P&L line, in three parts (the page colours the amount): what it is, and what it is not. */
export function realizedText(day, currency) {
  return {
    lead: `Realized today (${day.day}, ${day.timeZone}): `,
    amount: money(day.realizedProfit, currency),
    note:
      ", commission and swap included: the closes listed under Closed trades, partial ones too. The daily loss guard counts equity, " +
      'which adds the open positions’ floating P&L to it (below).',
  };
}

/** How a partial close came about: the rest of the trade is still open. */
const PART_CAUSES = {
  command: 'by a signal',
  take_profit_level: 'a take-profit level',
  manual: 'by hand in the terminal',
  stop_out: 'by the stop-out',
  margin_call: "by the broker's stop-out",
  close_opposite: 'by a reverse',
};

/** The columns of today's closes, and one close's cells (strings; the time an ISO instant the page localizes). */
export const CLOSE_COLUMNS = ['Closed', 'Trade', 'Symbol', 'Side', 'Lots closed', 'Price', 'How', 'P&L (net)'];
export function closeCells(c, currency) {
  const how =
    c.remainingVolume > 0 ? `partial close (${PART_CAUSES[c.cause] ?? c.cause ?? 'cause not reported'}): ${lots(c.remainingVolume)} still open` : causeText(c.cause);
  return [c.at, c.tradeId, c.symbol, c.side, lots(c.volume), price(c.price), how, money(c.profit, currency)];
}

/**
 * The line under today's closes that reconciles them with the day's realized P&L: their sum, and what is not listed
 * (closes folded out of a long trade's events, or past the 200 listed) when the two differ.
 */
export function closesTotalText(day, currency) {
  const closes = day.closes ?? [];
  const sum = Math.round(closes.reduce((s, c) => s + c.profit, 0) * 100) / 100;
  const partial = closes.filter((c) => c.remainingVolume > 0).length;
  const count = `${closes.length === 1 ? '1 close' : `${closes.length} closes`}${partial ? ` (${partial} partial)` : ''}`;
  const rest = Math.round((day.realizedProfit - sum) * 100) / 100;
  if (Math.abs(rest) < 0.005) return `${count} today, total ${money(sum, currency)}: the day's realized P&L.`;
  const why = day.closesTruncated ? 'closes past the 200 listed' : "closes no longer in their trade's record (a trade keeps its last 200 events)";
  return `${count} listed, total ${money(sum, currency)}; with ${money(rest, currency)} from ${why}, the day's realized P&L ${money(day.realizedProfit, currency)}.`;
}

/**
 * A guard as a gauge: the fraction used (0..1, past 1 when over), the text a reader hears, and a level that the page
 * also writes out ("near the limit", "limit reached") so the state is never colour only.
 */
function gauge(used) {
  const u = typeof used === 'number' && Number.isFinite(used) ? Math.max(0, used) : 0;
  const level = u >= 1 ? 'reached' : u >= 0.8 ? 'near' : 'ok';
  const words = { ok: '', near: ' — near the limit', reached: ' — limit reached: new entries are refused' }[level];
  return { value: Math.min(u, 1), percent: Math.round(u * 100), level, words };
}

/** A guard the service could not measure yet (no equity figures from the bridge today): said so, no meter. */
const unmeasured = (label) => ({
  value: null,
  percent: null,
  level: 'unknown',
  words: '',
  label,
  text: 'not measured yet: no account figures from the bridge today',
});

/**
 * The daily loss guard counts what the bridge's guard counts (src/risk/entry-risk.ts): the fall of equity from the
 * day's opening equity, open positions' floating P&L included; not the realized P&L. Its limit is an amount or a
 * percent of that opening equity (`basis`), and the share of the limit used is a third figure: each is said.
 */
export function dailyLossGauge(day, currency) {
  const d = day.dailyLossLimit;
  if (!d) return null;
  const label = "Today's equity loss against the daily loss limit";
  if (typeof d.used !== 'number') return unmeasured(label);
  const g = gauge(d.used);
  const m = (n) => money(n, currency, false);
  let measured = typeof d.loss === 'number' ? `${m(d.loss)} lost` : '';
  if (typeof d.dayOpenEquity === 'number' && typeof day.equity === 'number') {
    const change = day.equity - d.dayOpenEquity;
    const now = `opened at ${m(d.dayOpenEquity)}, ${m(day.equity)} now`;
    measured = change >= 0 ? `${now}: ${m(change)} above the opening, nothing lost` : `${now}: ${m(-change)} lost`;
  }
  const ofOpening = typeof d.percent === 'number' ? `${d.percent} % of the day's opening equity` : null;
  const limit =
    d.basis === 'percent' && ofOpening ? `${ofOpening}, ${m(d.amount)}` : `${m(d.amount)}${ofOpening ? ` (${ofOpening})` : ''}`;
  return {
    ...g,
    label,
    text: `Counts the fall of equity since the day opened, open positions' floating P&L included: ${measured}. Limit ${limit}: ${g.percent} % of it used${g.words}.`,
  };
}

/** The drawdown: how far equity is below its peak (a percent of the peak), against the max, and the share of the max used. */
export function drawdownGauge(day, currency = '') {
  const d = day.drawdown;
  if (!d) return null;
  const label = 'Drawdown against the max';
  if (typeof d.used !== 'number' || typeof d.current !== 'number') return unmeasured(label);
  const g = gauge(d.used);
  const peak = typeof d.peakEquity === 'number' ? ` ${money(d.peakEquity, currency, false)}` : '';
  return { ...g, label, text: `Equity ${d.current} % below its peak${peak}; max drawdown ${d.max} %: ${g.percent} % of it used${g.words}.` };
}
