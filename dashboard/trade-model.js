// The trade after the order, in the trader's words: what the dashboard says of an entry's outcome, a position, an
// order, a closed trade, and the geometry of the equity and daily P&L charts (the day's closes and guards: trade-day.js). Pure: no DOM, so node
// runs it too (test/unit/trade-model.test.ts); trade-pages.js only puts these strings and shapes on the page.
// Shapes: the owner API of docs/trades.md (GET /v1/owner/accounts/{id}/book, …/trades, …/equity, …/day).
'use strict';

const PENDING_ENTRIES = new Set(['buy_limit', 'sell_limit', 'buy_stop', 'sell_stop', 'buy_stop_limit', 'sell_stop_limit']);

/** A pending entry (a limit or stop order) is placed, not executed: its "filled" outcome only means the broker took the order. */
export function isPendingEntry(action, item = {}) {
  if (item.entry === 'order') return true;
  if (item.entry === 'position') return false;
  return PENDING_ENTRIES.has(action);
}

/**
 * One account's outcome of a signal, as the log and the signal page show it: `{ text, kind }` (kind is the CSS class).
 * A pending entry's accepted order reads "placed · order N" — never "filled", which a trader reads as executed.
 */
export function outcomeText(action, item) {
  if (item.outcome === 'rejected') return { text: `rejected · ${item.reason ?? 'unknown'}`, kind: 'rejected' };
  if (item.outcome === 'filled' && isPendingEntry(action, item)) return { text: item.ticket ? `placed · order ${item.ticket}` : 'placed', kind: 'placed' };
  if (item.outcome === 'filled' || item.outcome === 'done')
    return { text: item.ticket ? `${item.outcome} · ticket ${item.ticket}` : item.outcome, kind: item.outcome };
  return { text: 'pending', kind: 'pending' };
}

/** How old the book is: "just now", "42 s ago", "3 min ago", "2 h ago"; stale past two missed snapshots (the bridge sends one a minute). */
export function ageText(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return { text: 'never reported', stale: true };
  const s = Math.max(0, Math.round(seconds));
  const text = s < 2 ? 'just now' : s < 120 ? `${s} s ago` : s < 7200 ? `${Math.floor(s / 60)} min ago` : `${Math.floor(s / 3600)} h ago`;
  return { text, stale: s > 150 };
}

/** Thousands apart with commas: 100008.5 reads 100,008.50 (the same on every reader's machine, as the API's figures). */
const grouped = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * A number as the account's money: two decimals, thousands apart, a sign on gains too when `signed` (a P&L reads
 * +1,012.50; a balance, `signed` false, 99,981.60).
 */
export function money(n, currency = '', signed = true) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  const [whole, cents] = Math.abs(n).toFixed(2).split('.');
  const sign = n < 0 && Math.abs(n) >= 0.005 ? '−' : signed && n >= 0.005 ? '+' : '';
  return `${sign}${grouped(whole)}.${cents}${currency ? ` ${currency}` : ''}`;
}

export const price = (n) => (typeof n === 'number' && Number.isFinite(n) ? String(n) : '—');

/** Lots as a broker writes them: "1 lot", "2 lots", "0.10 lots" (a fraction to at least two decimals), "0.125 lots". */
export function lots(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  if (n === 1) return '1 lot';
  const decimals = (String(n).split('.')[1] ?? '').length;
  return `${Number.isInteger(n) ? n : n.toFixed(Math.max(2, decimals))} lots`;
}

/** A chart's axis figure: thousands apart as money is, no trailing zeros (100,005, 0.5, −20). */
export function tickText(v) {
  const [whole, fraction] = String(Number(Math.abs(v).toFixed(6))).split('.');
  return `${v < 0 ? '−' : ''}${grouped(whole)}${fraction ? `.${fraction}` : ''}`;
}

/** A chart's title with what it is counted in, saying only what is known: "Daily P&L (USD, UTC)", "Daily P&L (UTC)". */
export const chartTitle = (name, ...units) => (units.some(Boolean) ? `${name} (${units.filter(Boolean).join(', ')})` : name);

/** A trade's money: realized profit plus commission and swap (both usually negative). */
export const netProfit = (t) => (t.realizedProfit ?? 0) + (t.commission ?? 0) + (t.swap ?? 0);

const CAUSES = {
  command: 'closed by a signal',
  stop_loss: 'stop loss hit',
  take_profit: 'take profit hit',
  stop_out: 'stop-out (drawdown guard)',
  margin_call: "broker's stop-out / margin call",
  manual: 'closed by hand in the terminal',
  other: 'closed (cause not reported)',
  take_profit_level: 'closed by its last take-profit level',
  close_opposite: 'closed by a reverse (close opposite)',
  unknown: 'gone without a report (unknown)',
};
const CANCEL_CAUSES = { command: 'by a signal', broker: 'by the broker', stop_out: 'by the stop-out', manual: 'by hand in the terminal' };
const ORDER_TYPES = { limit: 'limit', stop: 'stop', stop_limit: 'stop-limit' };

/** Why a position closed, in the trader's words. */
export const causeText = (cause) => CAUSES[cause] ?? `closed (${cause ?? 'cause not reported'})`;

/** Where a trade is now and how it ended: a pending order reads "placed", then triggered / expired / cancelled. */
export function tradeStatusText(t) {
  const fromOrder = typeof t.orderTicket === 'string' ? t.orderTicket : null;
  const triggered = fromOrder ? `order ${fromOrder} triggered · ` : '';
  switch (t.status) {
    case 'pending':
      return 'placed (waiting for its price)';
    case 'expired':
      return 'placed · expired';
    case 'cancelled':
      if (t.closeCause === 'unknown') return 'placed · gone (unknown)';
      return t.closeCause ? `placed · cancelled (${CANCEL_CAUSES[t.closeCause] ?? t.closeCause})` : 'placed · cancelled';
    case 'open':
      return `${triggered}open${t.closedVolume > 0 ? ` (${lots(t.closedVolume)} closed so far)` : ''}`;
    case 'closed':
      return `${triggered}${causeText(t.closeCause)}`;
    default:
      return t.status ?? '—';
  }
}

/** Where the trade came from: the signal that opened it, or outside the service (a trade placed by hand, or an event lost). */
export const originText = (t) => (t.origin === 'outside' ? 'opened outside the service' : t.signalId ? 'signal' : '—');

/** An ISO time as HH:MM UTC: the default of managementText, which the page gives the reader's own clock instead. */
const utcTime = (iso) => `${new Date(iso).toISOString().slice(11, 16)} UTC`;

/**
 * What the bridge's trade management did to a trade or position (its `management`, docs/trades.md), in one line:
 * "trail active at 1.0862 · stop moved 3 times · breakeven at 12:03 · levels hit: 2"; null when it did nothing.
 * The levels planned are not said: neither the trade nor the signal's record on the owner API carries its takeProfits.
 * `time` words the breakeven's time.
 */
export function managementText(m, { time = utcTime } = {}) {
  if (typeof m !== 'object' || m === null) return null;
  const parts = [];
  if (typeof m.trailActiveAt === 'number') parts.push(`trail active at ${price(m.trailActiveAt)}`);
  if (m.stopMoves > 0) parts.push(`stop moved ${m.stopMoves === 1 ? 'once' : `${m.stopMoves} times`}`);
  if (typeof m.breakevenAt === 'string') parts.push(`breakeven at ${time(m.breakevenAt)}`);
  if (m.levelsHit > 0) parts.push(`take-profit levels hit: ${m.levelsHit}`);
  if (m.closedOpposite === true) parts.push('closed by a reverse');
  return parts.length ? parts.join(' · ') : null;
}

/** A position's floating P&L with swap and commission; null until a book listed it (an event alone has no P&L). */
export const floatingProfit = (p) => (typeof p.profit === 'number' ? netProfit({ realizedProfit: p.profit, commission: p.commission, swap: p.swap }) : null);

/** The cells of a position row of the book (strings), in the order of POSITION_COLUMNS; `time` as managementText's. */
export const POSITION_COLUMNS = ['Ticket', 'Symbol', 'Side', 'Volume', 'Open price', 'SL', 'TP', 'Opened', 'Floating P&L', 'Management'];
export function positionCells(p, currency, time) {
  return [
    p.ticket,
    p.symbol,
    p.side,
    lots(p.volume),
    price(p.openPrice),
    price(p.sl),
    price(p.tp),
    p.openedAt ?? null,
    money(floatingProfit(p), currency),
    managementText(p.management, { time }) ?? '—',
  ];
}

/**
 * Where a pending order fills. A stop-limit's `stopLimitPrice` is its trigger and `price` the limit it then places
 * (docs/bridge-protocol.md, "Prices of a pending order"): "trigger 1.095 → limit 1.0935".
 */
function orderPrice(orderType, limitOrStop, trigger) {
  if (orderType === 'stop_limit' && typeof trigger === 'number') return `trigger ${price(trigger)} → limit ${price(limitOrStop)}`;
  return price(limitOrStop);
}

export const ORDER_COLUMNS = ['Ticket', 'Symbol', 'Order', 'Volume', 'Price', 'SL', 'TP', 'Placed', 'Expires'];
export function orderCells(o) {
  const type = `${o.side} ${ORDER_TYPES[o.orderType] ?? 'order'}`;
  const at = orderPrice(o.orderType, o.price, o.stopLimitPrice);
  return [o.ticket, o.symbol, type, lots(o.volume), at, price(o.sl), price(o.tp), o.placedAt ?? null, o.expiresAt ?? 'good till cancelled'];
}

export const TRADE_COLUMNS = ['Trade', 'Symbol', 'Side', 'Volume', 'Open price', 'Status', 'Closed', 'Close price', 'P&L (net)', 'Management'];
/** A trade's row: a pending order's price is its order's (a buy limit at 1.075); the lots are those closed once closed. */
export function tradeCells(t, currency, time) {
  const volume = t.status === 'closed' ? t.closedVolume : t.volume;
  const settled = ['closed', 'expired', 'cancelled'].includes(t.status);
  const opened =
    typeof t.openPrice === 'number'
      ? price(t.openPrice)
      : typeof t.orderPrice === 'number'
        ? `${ORDER_TYPES[t.orderType] ?? 'order'} ${t.orderType === 'stop_limit' && typeof t.stopLimitPrice === 'number' ? '' : 'at '}${orderPrice(t.orderType, t.orderPrice, t.stopLimitPrice)}`
        : '—';
  const pnl = t.status === 'closed' || t.closedVolume > 0 ? money(netProfit(t), currency) : '—';
  return [
    t.tradeId,
    t.symbol,
    t.side ?? '—',
    lots(volume),
    opened,
    tradeStatusText(t),
    settled ? (t.closedAt ?? null) : null,
    price(t.closePrice),
    pnl,
    managementText(t.management, { time }) ?? '—',
  ];
}

/** The P&L's words for a screen reader and a colour-blind eye alike: gain / loss / flat. */
export const pnlKind = (n) => (n > 0 ? 'gain' : n < 0 ? 'loss' : 'flat');

// ---- charts: geometry only (viewBox units); the page draws it as SVG ----------------------------------------------

export const CHART = { width: 640, height: 220, left: 64, right: 12, top: 12, bottom: 28 };

/** Round tick values covering [min, max]: 1, 2 or 5 times a power of ten. */
export function niceTicks(min, max, count = 5) {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toFixed(10)));
  return ticks;
}

function yScale(min, max) {
  const span = max - min || Math.abs(max) || 1;
  const lo = max === min ? min - span / 2 : min;
  const hi = max === min ? max + span / 2 : max;
  const h = CHART.height - CHART.top - CHART.bottom;
  return { lo, hi, y: (v) => CHART.top + h - ((v - lo) / (hi - lo)) * h };
}

/**
 * The equity curve: one path per series (equity, balance) over time. `points` [{at, balance, equity}] oldest first
 * (sorted here anyway). Answers null when there is nothing to draw.
 */
export function equityChart(points) {
  const ps = points
    .map((p) => ({ t: Date.parse(p.at), balance: p.balance, equity: p.equity }))
    .filter((p) => Number.isFinite(p.t) && Number.isFinite(p.balance) && Number.isFinite(p.equity))
    .sort((a, b) => a.t - b.t);
  if (ps.length === 0) return null;
  const values = ps.flatMap((p) => [p.balance, p.equity]);
  const { lo, hi, y } = yScale(Math.min(...values), Math.max(...values));
  const t0 = ps[0].t;
  const t1 = ps[ps.length - 1].t;
  const w = CHART.width - CHART.left - CHART.right;
  const x = (t) => CHART.left + (t1 === t0 ? w / 2 : ((t - t0) / (t1 - t0)) * w);
  const path = (key) => ps.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t).toFixed(1)},${y(p[key]).toFixed(1)}`).join(' ');
  const first = ps[0];
  const last = ps[ps.length - 1];
  return {
    equity: path('equity'),
    // A single sample is a point, not a line: the page marks it so it can be seen.
    dot: ps.length === 1 ? { x: Number(x(t0).toFixed(1)), y: Number(y(first.equity).toFixed(1)) } : null,
    balance: path('balance'),
    yTicks: niceTicks(lo, hi).map((v) => ({ v, y: Number(y(v).toFixed(1)) })),
    xLabels: [
      { t: new Date(t0).toISOString(), x: CHART.left },
      { t: new Date(t1).toISOString(), x: CHART.width - CHART.right },
    ],
    summary: {
      from: new Date(t0).toISOString(),
      to: new Date(t1).toISOString(),
      first: first.equity,
      last: last.equity,
      low: Math.min(...ps.map((p) => p.equity)),
      high: Math.max(...ps.map((p) => p.equity)),
      count: ps.length,
    },
  };
}

/** The daily P&L bars: a gain above the zero line, a loss below it (so the sign is in the shape, not only the colour). */
export function dailyChart(days) {
  const ds = days.filter((d) => typeof d.day === 'string' && Number.isFinite(d.profit));
  if (ds.length === 0) return null;
  const values = ds.map((d) => d.profit);
  const { lo, hi, y } = yScale(Math.min(0, ...values), Math.max(0, ...values));
  const w = CHART.width - CHART.left - CHART.right;
  const slot = w / ds.length;
  // A few days do not make fat slabs: a bar is at most 48 units wide, centred in its day's slot.
  const width = Math.max(1, Math.min(48, slot - Math.min(4, slot * 0.2)));
  const zero = y(0);
  const bars = ds.map((d, i) => {
    const top = Math.min(y(d.profit), zero);
    return {
      day: d.day,
      profit: d.profit,
      kind: pnlKind(d.profit),
      x: Number((CHART.left + i * slot + (slot - width) / 2).toFixed(1)),
      y: Number(top.toFixed(1)),
      width: Number(width.toFixed(1)),
      // A flat day still shows as a hairline, so every day of the range is visibly there.
      height: Number(Math.max(1, Math.abs(y(d.profit) - zero)).toFixed(1)),
    };
  });
  return { bars, zero: Number(zero.toFixed(1)), yTicks: niceTicks(lo, hi).map((v) => ({ v, y: Number(y(v).toFixed(1)) })) };
}
