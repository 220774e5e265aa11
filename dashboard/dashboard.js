// The owners' dashboard: every page is a view of the owner API (/v1/owner/...), nothing it does that the API cannot.
// Text from the server is only ever set as text (textContent), never parsed as HTML.
'use strict';

const main = document.getElementById('main');
const session = { owner: null, csrf: null };

/** An element with attributes (on* handlers as listeners) and children (strings become text). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && session.csrf) headers['x-csrf-token'] = session.csrf;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401 && !['/dashboard/setup', '/dashboard/sign-in'].includes(location.pathname)) location.assign('/dashboard/sign-in');
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

function errorText(err) {
  const details = err.body?.details?.map((d) => `${d.path ? `${d.path}: ` : ''}${d.message}`).join('; ');
  return [err.body?.message ?? err.message, details].filter(Boolean).join(' — ');
}

/** A form whose submit runs `action`; a refusal is shown in its alert region, and nothing is lost from the inputs. */
function form(attrs, fields, submitLabel, action) {
  const alert = h('p', { role: 'alert' });
  const el = h('form', { ...attrs, novalidate: true }, fields, h('div', {}, h('button', { type: 'submit' }, submitLabel)), alert);
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    alert.textContent = '';
    try {
      await action(new FormData(el), el);
    } catch (err) {
      alert.textContent = err instanceof ApiError ? errorText(err) : String(err);
    }
  });
  return el;
}

let fields = 0;
/** A labelled input (or textarea); a hint is tied to it by aria-describedby, so the label stays the field's name. */
function field(label, attrs, hint, children = []) {
  const id = `field-${++fields}`;
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null,
    h(attrs.tag ?? 'input', { ...attrs, tag: undefined, id, 'aria-describedby': hint ? `${id}-hint` : undefined }, children),
  );
}
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const shownOnce = (label, value) => h('div', {}, h('p', {}, `${label} — shown once, copy it now:`), h('output', { class: 'once' }, value));

/** Nodes to insert: arrays flattened, absent parts (null, undefined) left out. */
const present = (parts) => parts.flat(Infinity).filter((p) => p !== null && p !== undefined);

function page(title, ...content) {
  document.title = `${title} · External Signals`;
  main.replaceChildren(h('h1', {}, title), ...present(content));
  main.focus();
}

function outcomeCell(a) {
  if (a.outcome === 'filled' || a.outcome === 'done') return h('span', { class: a.outcome }, a.ticket ? `${a.outcome} · ticket ${a.ticket}` : a.outcome);
  if (a.outcome === 'rejected') return h('span', { class: 'rejected' }, `rejected · ${a.reason}`);
  return h('span', { class: 'pending' }, 'pending');
}

// ---- pages -------------------------------------------------------------------------------------------------------

async function setupPage() {
  const token = location.hash.slice(1);
  let begun;
  try {
    begun = await api('POST', '/v1/owner/setup/begin', { token });
  } catch (err) {
    page('Set up your sign-in', h('p', { role: 'alert' }, errorText(err)));
    return;
  }
  page(
    'Set up your sign-in',
    h('p', {}, `Owner: ${begun.owner}. Scan the code with your authenticator app (or type the key), then choose a password.`),
    h('img', { class: 'qr', src: begun.totpQr, alt: 'QR code for your authenticator app' }),
    h('p', {}, 'Key: ', h('code', { id: 'totp-seed' }, begun.totpSeed)),
    form(
      { 'aria-label': 'Set up' },
      [
        field('Password', { name: 'password', type: 'password', autocomplete: 'new-password', required: true, minlength: 12 }, 'At least 12 characters'),
        field('Password again', { name: 'again', type: 'password', autocomplete: 'new-password', required: true }),
        field('Code from the app', { name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', required: true, pattern: '[0-9]{6}' }),
      ],
      'Finish setup',
      async (data) => {
        if (data.get('password') !== data.get('again')) throw new Error('The two passwords differ');
        await api('POST', '/v1/owner/setup/complete', { token, password: data.get('password'), code: data.get('code') });
        location.assign('/dashboard');
      },
    ),
  );
}

function signInPage() {
  page(
    'Sign in',
    form(
      { 'aria-label': 'Sign in' },
      [
        field('Owner', { name: 'owner', autocomplete: 'username', required: true }),
        field('Password', { name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
        field('Code from the app', { name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', required: true }),
      ],
      'Sign in',
      async (data) => {
        await api('POST', '/v1/owner/session', { owner: data.get('owner'), password: data.get('password'), code: data.get('code') });
        location.assign('/dashboard');
      },
    ),
  );
}

async function accountsPage() {
  const { accounts } = await api('GET', '/v1/owner/accounts');
  const rows = accounts.map((a) =>
    h(
      'tr',
      {},
      h('td', {}, h('a', { href: `/dashboard/accounts/${encodeURIComponent(a.id)}` }, a.id)),
      h('td', {}, a.platform),
      h('td', {}, a.status),
      h(
        'td',
        {},
        h('span', { class: a.bridge.online ? 'online' : 'offline' }, a.bridge.online ? 'online' : 'offline'),
        ` · last seen ${when(a.bridge.lastSeenAt)}`,
      ),
      h('td', {}, a.bridge.version ?? '—'),
      h('td', {}, a.figures ? `${a.figures.equity} ${a.figures.currency}` : '—'),
    ),
  );
  page(
    'Accounts',
    h(
      'table',
      {},
      h('caption', { class: 'hint' }, 'Your trading accounts and their bridges'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Account', 'Platform', 'Status', 'Bridge', 'Bridge version', 'Equity'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

async function accountPage(id) {
  const a = await api('GET', `/v1/owner/accounts/${encodeURIComponent(id)}`);
  const json = (v) => JSON.stringify(v, null, 2);
  const parse = (text, what) => {
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${what} is not valid JSON`);
    }
  };
  const tokenOut = h('div');
  page(
    `Account ${a.id}`,
    h(
      'section',
      {},
      h('h2', {}, 'Bridge'),
      h(
        'p',
        {},
        `${a.platform} · ${a.status} · bridge ${a.bridge.online ? 'online' : 'offline'}, last seen ${when(a.bridge.lastSeenAt)}, version ${a.bridge.version ?? 'unknown'}`,
      ),
      a.figures
        ? h(
            'p',
            {},
            `Balance ${a.figures.balance}, equity ${a.figures.equity}, free margin ${a.figures.freeMargin} ${a.figures.currency} (at ${when(a.figures.at)})`,
          )
        : null,
      form({ 'aria-label': 'New bridge token' }, [h('p', { class: 'hint' }, 'A new bridge token stops the old one at once.')], 'New bridge token', async () => {
        const made = await api('POST', `/v1/owner/accounts/${encodeURIComponent(a.id)}/bridge-token`);
        tokenOut.replaceChildren(shownOnce('Bridge token', made.value));
      }),
      tokenOut,
    ),
    h(
      'section',
      {},
      h('h2', {}, 'Risk rules and symbols'),
      form(
        { 'aria-label': 'Risk rules and symbols' },
        [
          field('Risk settings (JSON)', { tag: 'textarea', name: 'risk', spellcheck: 'false' }, 'Sizing, max volume, loss guards: docs/risk-sizing.md'),
          field('Symbol map (JSON)', { tag: 'textarea', name: 'symbols', spellcheck: 'false' }),
        ],
        'Save',
        async (data, el) => {
          const saved = await api('PATCH', `/v1/owner/accounts/${encodeURIComponent(a.id)}`, {
            risk: parse(data.get('risk'), 'Risk settings'),
            symbols: parse(data.get('symbols'), 'Symbol map'),
          });
          el.querySelector('[role=alert]').textContent = '';
          el.elements.risk.value = json(saved.risk);
          el.append(h('p', { role: 'status' }, 'Saved: the next signal uses these settings.'));
        },
      ),
    ),
  );
  main.querySelector('textarea[name=risk]').value = json(a.risk);
  main.querySelector('textarea[name=symbols]').value = json(a.symbols);
}

async function credentialsPage() {
  const [{ accounts }, { secrets }, { tokens }, { apiKeys }] = await Promise.all(
    ['accounts', 'secrets', 'tokens', 'api-keys'].map((p) => api('GET', `/v1/owner/${p}`)),
  );
  const picker = (legend) =>
    h(
      'fieldset',
      {},
      h('legend', {}, legend),
      accounts.map((a) => h('label', {}, h('input', { type: 'checkbox', name: 'accounts', value: a.id }), a.id)),
    );
  const out = { secret: h('div'), token: h('div'), key: h('div') };
  const grantTable = (kind, path, list) =>
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Id', 'Accounts', ''].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        list.map((g) =>
          h(
            'tr',
            {},
            h('td', {}, h('code', {}, g.id)),
            h('td', {}, g.accounts.join(', ')),
            h(
              'td',
              {},
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  'aria-label': `Revoke ${kind} ${g.id}`,
                  onclick: async () => {
                    await api('DELETE', `/v1/owner/${path}/${g.id}`);
                    await credentialsPage();
                  },
                },
                'Revoke',
              ),
            ),
          ),
        ),
      ),
    );
  const create = (kind, path, target) =>
    form({ 'aria-label': `New ${kind}` }, [picker(`Accounts the ${kind} reaches`)], `Create ${kind}`, async (data) => {
      const made = await api('POST', `/v1/owner/${path}`, { accounts: data.getAll('accounts') });
      target.replaceChildren(shownOnce(kind === 'webhook secret' ? 'Webhook secret' : 'API token', made.value));
    });
  page(
    'Secrets and tokens',
    h(
      'section',
      {},
      h('h2', {}, 'Webhook secrets'),
      h('p', { class: 'hint' }, 'A secret sends signals to the accounts it links.'),
      grantTable('secret', 'secrets', secrets),
      create('webhook secret', 'secrets', out.secret),
      out.secret,
    ),
    h(
      'section',
      {},
      h('h2', {}, 'API tokens'),
      h('p', { class: 'hint' }, 'A token reads the outcomes of the accounts it grants (GET /v1/signals/{id}).'),
      grantTable('token', 'tokens', tokens),
      create('API token', 'tokens', out.token),
      out.token,
    ),
    h(
      'section',
      {},
      h('h2', {}, 'Owner API keys'),
      h('p', { class: 'hint' }, 'For scripts and n8n: everything this dashboard does, as Authorization: Bearer oak_…'),
      h(
        'ul',
        {},
        apiKeys.map((k) =>
          h(
            'li',
            {},
            h('code', {}, k.id),
            ` ${k.name} · ${when(k.createdAt)} `,
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Revoke API key ${k.name}`,
                onclick: async () => {
                  await api('DELETE', `/v1/owner/api-keys/${k.id}`);
                  await credentialsPage();
                },
              },
              'Revoke',
            ),
          ),
        ),
      ),
      form({ 'aria-label': 'New API key' }, [field('Name', { name: 'name', required: true, maxlength: 64 })], 'Create API key', async (data) => {
        const made = await api('POST', '/v1/owner/api-keys', { name: data.get('name') });
        out.key.replaceChildren(shownOnce('API key', made.value));
      }),
      out.key,
    ),
  );
}

async function signalsPage() {
  const params = new URLSearchParams(location.search);
  const query = new URLSearchParams([...params].filter(([, v]) => v !== ''));
  for (const k of ['from', 'to']) if (query.has(k)) query.set(k, new Date(query.get(k)).toISOString());
  // The log and the account list are asked for at once: the page waits for the slower, not for both in turn.
  const first = api('GET', `/v1/owner/signals?${query}`);
  first.catch(() => undefined);
  const { accounts } = await api('GET', '/v1/owner/accounts');
  const select = (label, name, options) =>
    field(label, { tag: 'select', name }, undefined, [
      h('option', { value: '' }, 'any'),
      options.map((o) => h('option', { value: o, selected: params.get(name) === o }, o)),
    ]);
  const filters = h(
    'form',
    { class: 'inline', method: 'get', action: '/dashboard/signals', 'aria-label': 'Filter signals' },
    select(
      'Account',
      'accountId',
      accounts.map((a) => a.id),
    ),
    field('Action', { name: 'action', value: params.get('action') ?? '', size: 14 }),
    field('Symbol', { name: 'symbol', value: params.get('symbol') ?? '', size: 10 }),
    select('Outcome', 'outcome', ['filled', 'done', 'rejected', 'pending']),
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
          s.accounts.map((a) => h('li', {}, `${a.accountId}: `, outcomeCell(a))),
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

async function signalPage(id) {
  const s = await api('GET', `/v1/owner/signals/${encodeURIComponent(id)}`);
  page(
    `Signal ${s.action} ${s.symbol ?? ''}`.trim(),
    h('p', {}, h('code', {}, s.signalId), ` · received ${when(s.receivedAt)}`),
    s.accounts.map((a) =>
      h(
        'section',
        {},
        h('h2', {}, a.accountId),
        h(
          'ol',
          {},
          h('li', {}, `accepted ${when(a.accepted.at)}`),
          h('li', {}, a.delivered ? `delivered to the bridge ${when(a.delivered.at)}` : 'not delivered to the bridge yet'),
          h('li', {}, outcomeCell(a.outcome), a.outcome.at ? ` ${when(a.outcome.at)}` : ''),
        ),
      ),
    ),
  );
}

async function callbacksPage() {
  const [{ callbacks }, { attempts }] = await Promise.all([api('GET', '/v1/owner/callbacks'), api('GET', '/v1/owner/callbacks/attempts')]);
  const out = h('div');
  page(
    'Callbacks',
    h(
      'section',
      {},
      h('h2', {}, 'Endpoints'),
      h('p', { class: 'hint' }, 'Every outcome of your accounts is POSTed to each endpoint, signed as Standard Webhooks says.'),
      h(
        'ul',
        {},
        callbacks.map((c) =>
          h(
            'li',
            {},
            h('code', {}, c.url),
            ` (${c.id}) `,
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Remove ${c.url}`,
                onclick: async () => {
                  await api('DELETE', `/v1/owner/callbacks/${c.id}`);
                  await callbacksPage();
                },
              },
              'Remove',
            ),
          ),
        ),
      ),
      form({ 'aria-label': 'New callback endpoint' }, [field('URL', { name: 'url', type: 'url', required: true })], 'Add endpoint', async (data) => {
        const made = await api('POST', '/v1/owner/callbacks', { url: data.get('url') });
        out.replaceChildren(shownOnce('Signing secret', made.secret));
      }),
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

async function auditPage() {
  const { entries } = await api('GET', '/v1/owner/audit?limit=200');
  page(
    'Audit log',
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['When', 'By', 'What', 'Account', 'Detail'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        entries.map((e) =>
          h(
            'tr',
            {},
            h('td', {}, when(e.at)),
            h('td', {}, e.by),
            h('td', {}, e.action),
            h('td', {}, e.accountId ?? ''),
            h('td', {}, h('code', {}, JSON.stringify(e.detail ?? {}))),
          ),
        ),
      ),
    ),
  );
}

// ---- routing -----------------------------------------------------------------------------------------------------

const ROUTES = [
  [/^\/dashboard\/accounts\/([^/]+)$/, (m) => accountPage(decodeURIComponent(m[1]))],
  [/^\/dashboard\/credentials$/, credentialsPage],
  [/^\/dashboard\/signals$/, signalsPage],
  [/^\/dashboard\/signals\/([^/]+)$/, (m) => signalPage(decodeURIComponent(m[1]))],
  [/^\/dashboard\/callbacks$/, callbacksPage],
  [/^\/dashboard\/audit$/, auditPage],
  [/^\/dashboard\/?$/, accountsPage],
];

async function start() {
  const path = location.pathname;
  if (path === '/dashboard/setup') return setupPage();
  if (path === '/dashboard/sign-in') return signInPage();
  // Who is signed in (and the CSRF token for changes) is asked for beside the page's own reads, not before them:
  // a page's buttons act only after a click, by when the session has long answered.
  const me = api('GET', '/v1/owner/session').then((answer) => {
    session.owner = answer.owner;
    session.csrf = answer.csrfToken;
    document.getElementById('owner').textContent = answer.owner;
    document.getElementById('nav').hidden = false;
  });
  me.catch(() => undefined);
  for (const a of document.querySelectorAll('nav a'))
    if (a.getAttribute('href') === path || (path.startsWith(a.getAttribute('href') + '/') && a.getAttribute('href') !== '/dashboard'))
      a.setAttribute('aria-current', 'page');
  document.getElementById('sign-out').addEventListener('click', async () => {
    await api('DELETE', '/v1/owner/session');
    location.assign('/dashboard/sign-in');
  });
  const route = ROUTES.find(([re]) => re.test(path));
  if (!route) return page('Not found', h('p', {}, h('a', { href: '/dashboard' }, 'Back to your accounts')));
  try {
    await Promise.all([me, route[1](path.match(route[0]))]);
  } catch (err) {
    page('Something went wrong', h('p', { role: 'alert' }, err instanceof ApiError ? errorText(err) : String(err)));
  }
}

start();
