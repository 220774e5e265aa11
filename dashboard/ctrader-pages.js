// Connect with cTrader: the button, the page cTrader sends the owner back to, and the account's link on its page.
// The tokens never reach the browser: the server exchanges the code and keeps them sealed.
'use strict';

import { api, form, h, page, session } from './dom.js?v=__VERSION__';

// The state is also kept in this tab, for an authorisation page that does not send it back; the server checks it either way.
const STATE_KEY = 'ctrader-connect-state';

async function connect() {
  const { authorizeUrl } = await api('POST', '/v1/owner/ctrader/authorizations');
  sessionStorage.setItem(STATE_KEY, new URL(authorizeUrl).searchParams.get('state') ?? '');
  location.assign(authorizeUrl);
}

/** The "Connect with cTrader" section of the accounts page, when the operator set it up. */
export async function connectSection() {
  const { connectEnabled } = await api('GET', '/v1/owner/ctrader');
  if (!connectEnabled) return null;
  return h(
    'section',
    { 'aria-labelledby': 'ctrader-connect' },
    h('h2', { id: 'ctrader-connect' }, 'cTrader'),
    h('p', { class: 'hint' }, 'Sign in at cTrader, allow this service to trade, and pick the accounts to link. Nothing to install.'),
    form({ 'aria-label': 'Connect with cTrader' }, [], 'Connect with cTrader', connect),
  );
}

const describe = (a) => `${a.environment === 'live' ? 'Live' : 'Demo'} · ${a.broker ?? 'broker unknown'} · account ${a.traderLogin ?? a.ctidTraderAccountId}`;

/** /dashboard/ctrader/callback: the code and state cTrader sent back, exchanged by the server; then the owner's pick. */
export async function ctraderCallbackPage() {
  const query = new URLSearchParams(location.search);
  const code = query.get('code');
  const state = query.get('state') ?? sessionStorage.getItem(STATE_KEY);
  sessionStorage.removeItem(STATE_KEY);
  // The code is spent once used: keep it out of the history and of a reload.
  history.replaceState(null, '', '/dashboard/ctrader/callback');
  if (!code || !state) {
    const why = query.get('error_description') ?? query.get('error') ?? 'cTrader sent no authorisation code back.';
    return page('cTrader not connected', h('p', { role: 'alert' }, why), h('p', {}, h('a', { href: '/dashboard' }, 'Back to your accounts')));
  }
  const me = await api('GET', '/v1/owner/session');
  session.csrf = me.csrfToken;
  const offer = await api('POST', '/v1/owner/ctrader/callback', { code, state });
  const result = h('div');
  page(
    'Link cTrader accounts',
    h('p', {}, 'cTrader gave access to these accounts. Pick the ones this service should trade.'),
    form(
      { 'aria-label': 'Pick cTrader accounts' },
      [
        h(
          'fieldset',
          {},
          h('legend', {}, 'Accounts'),
          offer.accounts.map((a) =>
            h(
              'label',
              {},
              h('input', { type: 'checkbox', name: 'accounts', value: String(a.ctidTraderAccountId) }),
              a.linkedTo ? `${describe(a)} (linked as ${a.linkedTo}: gets the new authorisation)` : describe(a),
            ),
          ),
        ),
      ],
      'Link selected accounts',
      async (data) => {
        const { linked } = await api('POST', '/v1/owner/ctrader/links', { connection: offer.connection, accounts: data.getAll('accounts').map(Number) });
        result.replaceChildren(
          h('p', { role: 'status' }, 'Linked. The connector starts trading them within seconds; each page shows when its bridge is online.'),
          h(
            'ul',
            {},
            linked.map((l) => h('li', {}, h('a', { href: `/dashboard/accounts/${encodeURIComponent(l.accountId)}` }, l.accountId), ` (${l.environment})`)),
          ),
        );
      },
    ),
    result,
  );
}

/** On an account's page: which cTrader account it is, and what to do when cTrader no longer takes its authorisation. */
export function ctraderLink(a) {
  if (!a.ctrader) return null;
  const c = a.ctrader;
  return h(
    'section',
    { 'aria-labelledby': 'ctrader-link' },
    h('h2', { id: 'ctrader-link' }, 'cTrader'),
    h('p', {}, `${describe({ ...c, broker: c.broker })}, linked ${new Date(c.linkedAt).toLocaleString()}`),
    c.needsReauthorisation
      ? [
          h(
            'p',
            { role: 'alert', class: 'rejected' },
            `Needs re-authorisation: cTrader no longer accepts this service's access (${c.needsReauthorisation.reason}, since ${new Date(c.needsReauthorisation.since).toLocaleString()}). ` +
              'It cannot trade until you connect it again.',
          ),
          form({ 'aria-label': 'Authorise cTrader again' }, [], 'Connect with cTrader again', connect),
        ]
      : null,
  );
}
