// What happened on the owner's accounts: the signal log, one signal's timeline, the callbacks.
'use strict';

import { signalTradesSection } from './trade-pages.js?v=__VERSION__';
import { ApiError, api, deleteButton, errorText, field, form, h, outcomeCell, page, present, shownOnce, when } from './dom.js?v=__VERSION__';

export async function signalsPage() {
  const params = new URLSearchParams(location.search);
  const query = new URLSearchParams([...params].filter(([, v]) => v !== ''));
  for (const k of ['from', 'to']) if (query.has(k)) query.set(k, new Date(query.get(k)).toISOString());
  // The log and the account list are asked for at once: the page waits for the slower, not for both in turn.
  const first = api('GET', `/v1/owner/signals?${query}`);
  first.catch(() => undefined);
  const { accounts } = await api('GET', '/v1/owner/accounts');
  const select = (label, name, options, labels = {}) =>
    field(label, { tag: 'select', name }, undefined, [
      h('option', { value: '' }, 'any'),
      options.map((o) => h('option', { value: o, selected: params.get(name) === o }, labels[o] ?? o)),
    ]);
  const filters = h(
    'form',
    { class: 'inline', method: 'get', action: '/dashboard/signals', 'aria-label': 'Filter signals' },
    select(
      'Account',
      'accountId',
      accounts.map((a) => a.id),
      Object.fromEntries(accounts.map((a) => [a.id, a.name ? `${a.name} (${a.id})` : a.id])),
    ),
    field('Action', { name: 'action', value: params.get('action') ?? '', size: 14 }),
    field('Symbol', { name: 'symbol', value: params.get('symbol') ?? '', size: 10 }),
    select('Outcome', 'outcome', ['filled', 'done', 'rejected', 'pending'], { filled: 'filled (or placed: a pending order)' }),
    field('From', { name: 'from', type: 'datetime-local', value: params.get('from') ?? '' }),
    field('To', { name: 'to', type: 'datetime-local', value: params.get('to') ?? '' }),
    h('button', { type: 'submit' }, 'Filter'),
  );
  const log = h('div', { 'aria-live': 'polite' });
  page('Signals', filters, log);
  await renderLog(log, params, query, first);
}

/** The log itself; the first page is read again every few seconds while the tab is visible (new signals, outcomes). */

async function renderLog(container, params, query, first) {
  const log = await (first ?? api('GET', `/v1/owner/signals?${query}`));
  const rows = log.signals.map((s) =>
    h(
      'tr',
      {},
      h('td', {}, h('a', { href: `/dashboard/signals/${s.signalId}` }, when(s.receivedAt))),
      h('td', {}, s.action),
      h('td', {}, s.symbol ?? '—'),
      h(
        'td',
        {},
        h(
          'ul',
          {},
          s.accounts.map((a) => h('li', {}, `${a.accountId}: `, outcomeCell(s.action, a))),
        ),
      ),
    ),
  );
  const older = new URLSearchParams(params);
  if (log.nextPageToken) older.set('pageToken', log.nextPageToken);
  container.replaceChildren(
    ...present([
      h(
        'table',
        { id: 'signals' },
        h('caption', { class: 'hint' }, 'Newest first'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Received', 'Action', 'Symbol', 'Accounts'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h('tbody', {}, rows),
      ),
      rows.length === 0 ? h('p', {}, 'No signals match.') : null,
      log.nextPageToken ? h('p', {}, h('a', { href: `/dashboard/signals?${older}` }, 'Older signals')) : null,
    ]),
  );
  if (!params.has('pageToken') && container.isConnected) {
    setTimeout(() => {
      if (document.visibilityState === 'visible') renderLog(container, params, query).catch(() => undefined);
      else document.addEventListener('visibilitychange', () => renderLog(container, params, query).catch(() => undefined), { once: true });
    }, 3000);
  }
}

/** An entry (it opens a trade); every other action acts on trades already there (docs/actions.md). */
const opensTrades = (action) => /^(buy|sell)(_limit|_stop|_stop_limit)?$/.test(action);

/** Whether the command reached a bridge, in words that fit its outcome (a rejected one never waits for "yet"). */
function deliveryLine(a) {
  if (a.delivered) return `delivered to the bridge ${when(a.delivered.at)}`;
  if (a.outcome.outcome === 'rejected') return 'never delivered to a bridge: it was rejected before any bridge took it';
  if (a.outcome.outcome === 'pending') return 'not delivered to the bridge yet';
  return 'delivered to the bridge (the time is no longer kept)';
}

/**
 * A signal sent a moment ago is listed once Temporal's visibility has it (a second or so after its start, which comes
 * after its 202): until then its page says so and looks again, for up to half a minute, rather than "not found".
 */
const SIGNAL_LOOK_EVERY_MS = 1000;
const SIGNAL_LOOKS = 30;

export async function signalPage(id, looks = 0) {
  const here = location.pathname;
  let s;
  try {
    s = await api('GET', `/v1/owner/signals/${encodeURIComponent(id)}`);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404 || looks >= SIGNAL_LOOKS) throw err;
    if (looks === 0) page('Signal', h('p', { role: 'status' }, 'Looking for this signal: one sent just now is listed here within seconds.'));
    setTimeout(() => {
      if (location.pathname !== here) return;
      signalPage(id, looks + 1).catch((e) => page('Something went wrong', h('p', { role: 'alert' }, e instanceof ApiError ? errorText(e) : String(e))));
    }, SIGNAL_LOOK_EVERY_MS);
    return;
  }
  const allRejected = s.accounts.every((a) => a.outcome.outcome === 'rejected');
  const words = opensTrades(s.action)
    ? { empty: allRejected ? 'No trade: the signal was rejected on every account.' : undefined }
    : {
        caption: 'Trades this signal closed or changed, and how each ended (P&L net of commission and swap)',
        empty: allRejected ? 'No trade: the signal was rejected on every account.' : 'No trade reported as closed or changed by this signal (yet).',
      };
  page(
    `Signal ${s.action} ${s.symbol ?? ''}`.trim(),
    h('p', {}, h('code', {}, s.signalId), ` · received ${when(s.receivedAt)}`),
    s.sent ? h('p', { id: 'signal-sent' }, `Sent: ${sentLine(s.action, s.symbol, s.sent)}`) : null,
    s.accounts.map((a) =>
      h(
        'section',
        {},
        h('h2', {}, a.accountId),
        h(
          'ol',
          {},
          h('li', {}, `accepted ${when(a.accepted.at)}`),
          h('li', {}, deliveryLine(a)),
          h('li', {}, outcomeCell(s.action, a.outcome), a.outcome.at ? ` ${when(a.outcome.at)}` : ''),
          a.execution ? h('li', {}, executionLine(a.execution)) : null,
        ),
      ),
    ),
    signalTradesSection(s.signalId, words),
  );
}

/** What the signal asked for, as the trader wrote it: lots, prices, stops, and its trade management. */
function sentLine(action, symbol, sent) {
  const parts = [[action, symbol].filter(Boolean).join(' ')];
  const add = (label, v, unit = '') => (v === undefined || v === null ? null : parts.push(`${label} ${v}${unit}`));
  add('volume', sent.volume, ' lots');
  add('price', sent.price);
  add('stop-limit trigger', sent.stopLimitPrice);
  add('SL', sent.sl);
  add('TP', sent.tp);
  add('SL', sent.slPips, ' pips');
  add('TP', sent.tpPips, ' pips');
  add('position', sent.positionId);
  add('order', sent.orderId);
  add('close', sent.partialVolume, ' lots');
  add('expiry', sent.expiry ? when(sent.expiry) : null);
  add('side', sent.side);
  add('only', sent.pnl);
  add('trailing stop', sent.trailDistancePips, ' pips');
  add('trailing from', sent.trailTriggerPips, ' pips in profit');
  add('trailing step', sent.trailStepPips, ' pips');
  add('breakeven at', sent.breakevenTriggerPips, ' pips in profit');
  add('breakeven offset', sent.breakevenOffsetPips, ' pips');
  add('max spread', sent.maxSpreadPips, ' pips');
  if (sent.closeOpposite) parts.push('closes opposite positions first');
  if (Array.isArray(sent.takeProfits) && sent.takeProfits.length > 0)
    parts.push(`take-profit levels ${sent.takeProfits.map((l) => `${l.tpPips !== undefined ? `${l.tpPips} pips` : l.tp}: ${l.closePercent} %`).join(', ')}`);
  return parts.join(' · ');
}

/** What the bridge said it did: the lots placed (sized by risk, the bridge's own) at what price, and its message. */
function executionLine(x) {
  const placed = x.volume !== null ? `${x.volume} lots${x.price !== null ? ` at ${x.price}` : ''}` : '';
  return [placed, x.message ?? ''].filter((part) => part !== '').join(' · ') || 'reported';
}

/** The event types an endpoint may choose: CALLBACK_EVENT_TYPES of src/domain/callback.ts (a unit test holds them equal). */
const CALLBACK_EVENT_TYPES = [
  ['signal.outcome', 'an entry’s outcome (filled or rejected)'],
  ['signal.exit_outcome', 'an exit’s outcome (done or rejected)'],
  ['position.opened', 'position opened'],
  ['position.modified', 'position modified'],
  ['position.closed', 'position closed (with P&L)'],
  ['order.placed', 'pending order placed'],
  ['order.triggered', 'pending order triggered'],
  ['order.expired', 'pending order expired'],
  ['order.cancelled', 'pending order cancelled'],
];

export async function callbacksPage() {
  const [{ callbacks }, { attempts }] = await Promise.all([api('GET', '/v1/owner/callbacks'), api('GET', '/v1/owner/callbacks/attempts')]);
  const out = h('div');
  page(
    'Callbacks',
    h(
      'section',
      {},
      h('h2', {}, 'Endpoints'),
      h(
        'p',
        { class: 'hint' },
        'Each event of your accounts is POSTed to each endpoint that wants it, signed as Standard Webhooks says: entries’ outcomes, ' +
          'exits’ outcomes (close, cancel, modify: done or rejected, which the status poll never reports) and what happened to your trades.',
      ),
      h(
        'ul',
        {},
        callbacks.map((c) =>
          h(
            'li',
            {},
            h('code', {}, c.url),
            ` (${c.id}) · ${c.eventTypes ? c.eventTypes.join(', ') : 'signal outcomes'} `,
            deleteButton('Remove', `Remove ${c.url}`, `/v1/owner/callbacks/${c.id}`, callbacksPage),
          ),
        ),
      ),
      form(
        { 'aria-label': 'New callback endpoint' },
        [
          field('URL', { name: 'url', type: 'url', required: true }),
          h(
            'fieldset',
            { class: 'days' },
            h('legend', {}, 'Events (none ticked: the signals’ outcomes, entries and exits; trade events only when ticked)'),
            CALLBACK_EVENT_TYPES.map(([type, text]) => h('label', {}, h('input', { type: 'checkbox', name: 'eventTypes', value: type }), text)),
          ),
        ],
        'Add endpoint',
        async (data) => {
          const eventTypes = data.getAll('eventTypes');
          const made = await api('POST', '/v1/owner/callbacks', { url: data.get('url'), ...(eventTypes.length > 0 ? { eventTypes } : {}) });
          out.replaceChildren(shownOnce('Signing secret', made.secret));
        },
      ),
      out,
    ),
    h(
      'section',
      {},
      h('h2', {}, 'Recent deliveries'),
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['When', 'Endpoint', 'Message (webhook-id)', 'Attempt', 'Result'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h(
          'tbody',
          {},
          attempts.map((a) =>
            h(
              'tr',
              {},
              h('td', {}, when(a.at)),
              h('td', {}, a.endpointId),
              h('td', {}, h('code', {}, a.messageId)),
              h('td', {}, String(a.attempt)),
              h(
                'td',
                { class: a.delivered ? 'filled' : 'rejected' },
                `${a.delivered ? 'delivered' : 'failed'}${a.status ? ` · HTTP ${a.status}` : ''}${a.error ? ` · ${a.error}` : ''} · ${a.durationMs} ms`,
              ),
            ),
          ),
        ),
      ),
    ),
  );
}
