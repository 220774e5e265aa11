// The trade after the order: an account's open positions and pending orders (with the data's age), its day against
// the loss guards, its equity curve and daily P&L, its closed trades; and the trades one signal opened. Views of the
// owner API (docs/trades.md); the words and the chart geometry come from trade-model.js, this file only draws them.
// Charts are SVG drawn here (no library, nothing inline: the CSP allows no inline script or style), each with a text
// summary and its figures as a table, so no reader depends on the picture.
'use strict';

import { ApiError, api, errorText, h, refreshWhileShown, when } from './dom.js?v=__VERSION__';
import {
  CHART,
  ORDER_COLUMNS,
  POSITION_COLUMNS,
  TRADE_COLUMNS,
  ageText,
  chartTitle,
  dailyChart,
  equityChart,
  floatingProfit,
  money,
  netProfit,
  orderCells,
  originText,
  pnlKind,
  positionCells,
  tickText,
  tradeCells,
} from './trade-model.js?v=__VERSION__';
import { CLOSE_COLUMNS, closeCells, closesTotalText, dailyLossGauge, drawdownGauge, realizedText } from './trade-day.js?v=__VERSION__';

const BOOK_REFRESH_MS = 5000;
/** The breakeven's time in management lines, on the reader's clock (the page's other times are too). */
const clock = (iso) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const SVG = 'http://www.w3.org/2000/svg';

let charts = 0;

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/** A cell: an ISO time shown in the reader's locale (in a <time>), anything else as text. */
const cell = (v) =>
  v === null || v === undefined ? h('td', {}, '—') : /^\d{4}-\d\d-\d\dT/.test(v) ? h('td', {}, h('time', { datetime: v }, when(v))) : h('td', {}, v);

function table(caption, columns, rows, empty) {
  if (rows.length === 0) return h('p', {}, empty);
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h('tbody', {}, rows),
  );
}

const failed = (what, err) =>
  h(
    'p',
    { role: 'status' },
    `${what}: `,
    err instanceof ApiError && err.status === 404 ? 'not available on this server yet' : err instanceof ApiError ? errorText(err) : String(err),
  );

// ---- the book -----------------------------------------------------------------------------------------------------

function bookView(book, account, currency) {
  if (!book.reportedByBridge)
    return h(
      'p',
      {},
      `Positions and orders are not reported by this bridge (version ${book.bridgeVersion ?? account.bridge?.version ?? 'unknown'}): ` +
        'a bridge that announces trade events (protocol 1.5) reports them.',
    );
  const age = ageText(book.ageSeconds);
  return h(
    'div',
    {},
    h(
      'p',
      { class: age.stale ? 'stale' : 'hint' },
      `As reported by the bridge ${age.text}`,
      book.asOf ? [' (', h('time', { datetime: book.asOf }, when(book.asOf)), ')'] : '',
      age.stale ? ' — stale: the bridge has not reported for a while, these may have changed.' : '',
      book.truncated ? ' Only the first 1,000 are listed.' : '',
    ),
    table(
      'Open positions',
      POSITION_COLUMNS,
      book.positions.map((p) =>
        h(
          'tr',
          {},
          positionCells(p, currency, clock).map((v, i) => (i === 8 ? h('td', { class: pnlKind(floatingProfit(p) ?? 0) }, v) : cell(v))),
        ),
      ),
      'No open position.',
    ),
    table(
      'Pending orders (placed, waiting for their price)',
      ORDER_COLUMNS,
      book.orders.map((o) => h('tr', {}, orderCells(o).map(cell))),
      'No pending order.',
    ),
  );
}

// ---- the day's guards -----------------------------------------------------------------------------------------------

function gaugeView(g) {
  const id = `gauge-${++charts}`;
  if (g.value === null) return h('p', { class: 'gauge unknown' }, h('strong', {}, g.label), ': ', g.text);
  return h(
    'div',
    { class: `gauge ${g.level}` },
    h('label', { for: id }, g.label),
    h('meter', { id, min: 0, max: 1, low: 0.8, high: 0.99, optimum: 0, value: g.value, 'aria-describedby': `${id}-text` }, `${g.percent} %`),
    h('span', { id: `${id}-text` }, g.text),
  );
}

function dayView(day, currency) {
  const gauges = [dailyLossGauge(day, currency), drawdownGauge(day, currency)].filter(Boolean);
  const realized = realizedText(day, currency);
  return h(
    'div',
    {},
    h('p', {}, realized.lead, h('span', { class: pnlKind(day.realizedProfit) }, realized.amount), realized.note),
    gauges.length ? gauges.map(gaugeView) : h('p', { class: 'hint' }, 'No daily loss limit and no max drawdown set (Risk settings below).'),
  );
}

// ---- charts -------------------------------------------------------------------------------------------------------

function axis(yTicks) {
  return yTicks.map((t) => [
    svg('line', { class: 'grid', x1: CHART.left, x2: CHART.width - CHART.right, y1: t.y, y2: t.y }),
    svg('text', { class: 'tick', x: CHART.left - 6, y: t.y + 4, 'text-anchor': 'end' }, tickText(t.v)),
  ]);
}

function figure(title, summary, picture, figures) {
  const id = `chart-${++charts}`;
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', { id }, title),
    picture ? h('div', {}, picture) : null,
    h('p', { id: `${id}-summary` }, summary),
    h('details', {}, h('summary', {}, `${title}: the figures`), figures),
  );
}

function equityView(equity) {
  const currency = equity.currency ?? '';
  const c = equityChart(equity.points);
  if (!c) return figure(chartTitle('Equity curve', currency), 'No account figures sampled yet (the bridge reports them every minute).', null, h('p', {}, 'None.'));
  const s = c.summary;
  const summary = `Equity from ${money(s.first, currency, false)} to ${money(s.last, currency, false)} between ${when(s.from)} and ${when(s.to)}; low ${money(s.low, currency, false)}, high ${money(s.high, currency, false)} (${s.count === 1 ? 'one sample' : `${s.count} samples`}). Solid line: equity; dashed line: balance.`;
  const picture = svg(
    'svg',
    { viewBox: `0 0 ${CHART.width} ${CHART.height}`, role: 'img', 'aria-label': `Equity curve. ${summary}`, class: 'plot' },
    axis(c.yTicks),
    c.xLabels.map((l, i) => svg('text', { class: 'tick', x: l.x, y: CHART.height - 8, 'text-anchor': i === 0 ? 'start' : 'end' }, when(l.t))),
    svg('path', { class: 'balance', d: c.balance }),
    svg('path', { class: 'equity', d: c.equity }),
    c.dot ? svg('circle', { class: 'equity-dot', cx: c.dot.x, cy: c.dot.y, r: 4 }) : null,
  );
  const rows = equity.points.slice(-200).map((p) => h('tr', {}, cell(p.at), h('td', {}, money(p.balance, '', false)), h('td', {}, money(p.equity, '', false))));
  return figure(chartTitle('Equity curve', currency), summary, picture, table('Equity samples (the last 200)', ['At', 'Balance', 'Equity'], rows, 'None.'));
}

function dailyView(day, currency) {
  const title = chartTitle('Daily P&L', currency, day.timeZone);
  // Thirty days of 0 are no picture: an account that closed nothing says so.
  const c = (day.days ?? []).some((d) => d.profit !== 0) ? dailyChart(day.days) : null;
  if (!c) return figure(title, 'No realized P&L in the last 30 days: no trade closed.', null, h('p', {}, 'None.'));
  const total = c.bars.reduce((sum, b) => sum + b.profit, 0);
  const summary = `${c.bars.length} days, ${c.bars.filter((b) => b.kind === 'gain').length} with a gain and ${c.bars.filter((b) => b.kind === 'loss').length} with a loss; total ${money(total, currency)}. Bars above the line are gains, below it losses.`;
  const picture = svg(
    'svg',
    { viewBox: `0 0 ${CHART.width} ${CHART.height}`, role: 'img', 'aria-label': `Daily P&L. ${summary}`, class: 'plot' },
    axis(c.yTicks),
    c.bars.map((b) =>
      svg('rect', { class: `bar ${b.kind}`, x: b.x, y: b.y, width: b.width, height: b.height }, svg('title', {}, `${b.day}: ${money(b.profit, currency)}`)),
    ),
    svg('line', { class: 'zero', x1: CHART.left, x2: CHART.width - CHART.right, y1: c.zero, y2: c.zero }),
    svg('text', { class: 'tick', x: CHART.left, y: CHART.height - 8 }, c.bars[0].day),
    svg('text', { class: 'tick', x: CHART.width - CHART.right, y: CHART.height - 8, 'text-anchor': 'end' }, c.bars[c.bars.length - 1].day),
  );
  const rows = c.bars.map((b) => h('tr', {}, h('td', {}, b.day), h('td', { class: b.kind }, money(b.profit, currency))));
  return figure(
    title,
    summary,
    picture,
    table('Realized P&L per day, commission and swap included', ['Day', 'P&L'], rows, 'None.'),
  );
}

// ---- trades -------------------------------------------------------------------------------------------------------

function tradeRow(t, currency, onSignalPage = false) {
  const cells = tradeCells(t, currency, clock);
  return h(
    'tr',
    {},
    onSignalPage ? h('td', {}, h('a', { href: `/dashboard/accounts/${encodeURIComponent(t.accountId)}` }, t.accountId)) : null,
    cells.map((v, i) => (i === 8 && v !== '—' ? h('td', { class: pnlKind(netProfit(t)) }, v) : cell(v))),
    onSignalPage ? null : h('td', {}, t.signalId ? h('a', { href: `/dashboard/signals/${encodeURIComponent(t.signalId)}` }, 'a signal') : originText(t)),
  );
}

/** Today's closes, partial ones too, and the line that reconciles them with the day's realized P&L. */
function closesView(day, currency) {
  const rows = (day.closes ?? []).map((c) =>
    h(
      'tr',
      {},
      closeCells(c, currency).map((v, i) => (i === 7 ? h('td', { class: pnlKind(c.profit) }, v) : cell(v))),
    ),
  );
  return [
    table(`Today's closes (${day.day}, ${day.timeZone}), partial closes included, newest first (P&L net of commission and swap)`, CLOSE_COLUMNS, rows, 'No close today.'),
    h('p', { class: 'hint' }, closesTotalText(day, currency)),
  ];
}

function tradesView(list, currency) {
  return table(
    'Closed trades, newest first (P&L net of commission and swap)',
    [...TRADE_COLUMNS, 'Opened by'],
    list.trades.map((t) => tradeRow(t, currency)),
    'No closed trade yet.',
  );
}

/**
 * The account page's "Trades" section: drawn at once with placeholders, filled as each read answers (one slow read
 * does not hold the others); the book is read again every few seconds while the page is shown.
 */
export function tradesSection(account) {
  const id = encodeURIComponent(account.id);
  const slots = {
    book: h('div', { 'aria-live': 'polite' }, 'Loading…'),
    day: h('div', {}, 'Loading…'),
    charts: h('div', {}),
    closes: h('div', {}, 'Loading…'),
    trades: h('div', {}, 'Loading…'),
  };
  const fallbackCurrency = account.figures?.currency ?? '';
  const equity = api('GET', `/v1/owner/accounts/${id}/equity`);
  equity.catch(() => undefined);
  const currency = equity.then((e) => e.currency ?? fallbackCurrency).catch(() => fallbackCurrency);
  const fill = (slot, what, read) =>
    read().then(
      (nodes) => slot.replaceChildren(...[nodes].flat()),
      (err) => slot.replaceChildren(failed(what, err)),
    );
  const drawBook = async () => bookView(await api('GET', `/v1/owner/accounts/${id}/book`), account, await currency);
  fill(slots.book, 'Positions and orders', drawBook).then(() =>
    refreshWhileShown(slots.book, BOOK_REFRESH_MS, async () => slots.book.replaceChildren(await drawBook())),
  );
  const day = api('GET', `/v1/owner/accounts/${id}/day`);
  day.catch(() => undefined);
  fill(slots.day, "Today's figures", async () => dayView(await day, await currency));
  fill(slots.charts, 'Charts', async () => [equityView(await equity), dailyView(await day, await currency)]);
  fill(slots.closes, "Today's closes", async () => closesView(await day, await currency));
  fill(slots.trades, 'Closed trades', async () => tradesView(await api('GET', `/v1/owner/accounts/${id}/trades?status=closed&limit=50`), await currency));
  return h(
    'section',
    { class: 'trades' },
    h('h2', {}, 'Trades'),
    h('h3', {}, 'Open positions and pending orders'),
    slots.book,
    h('h3', {}, 'Today against the loss guards'),
    slots.day,
    h('h3', {}, 'Equity and daily P&L'),
    slots.charts,
    h('h3', {}, 'Closed trades'),
    slots.closes,
    slots.trades,
  );
}

/** One signal's page: every trade it opened, on every account of the owner, and how each ended. */
export function signalTradesSection(signalId, words = {}) {
  const slot = h('div', {}, 'Loading…');
  // The signal's page says which trades these are (an exit's closed them) and why there is none (a rejected signal's).
  const { caption = 'Trades this signal opened and how each ended (P&L net of commission and swap)', empty = 'No trade reported for this signal (yet).' } =
    words;
  api('GET', `/v1/owner/signals/${encodeURIComponent(signalId)}/trades`).then(
    ({ trades }) =>
      slot.replaceChildren(
        table(
          caption,
          ['Account', ...TRADE_COLUMNS],
          trades.map((t) => tradeRow(t, '', true)),
          empty,
        ),
      ),
    (err) => slot.replaceChildren(failed('Its trades', err)),
  );
  return h('section', { class: 'trades' }, h('h2', {}, 'Its trades'), slot);
}
