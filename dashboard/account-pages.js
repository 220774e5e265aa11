// The owner's accounts, credentials and audit log.
'use strict';

import { api, form, h, page, when } from './dom.js?v=__VERSION__';
import { riskSection } from './risk-form.js?v=__VERSION__';
import { tradesSection } from './trade-pages.js?v=__VERSION__';
import { money } from './trade-model.js?v=__VERSION__';
import { mt5PackageSection } from './mt5-package.js?v=__VERSION__';
import { connectSection as ctraderConnectSection, ctraderLink } from './ctrader-pages.js?v=__VERSION__';
import { addAccountForm, bridgeState, connectSection, keepFresh } from './account-connect.js?v=__VERSION__';

export async function accountsPage() {
  const [{ accounts }, connect] = await Promise.all([api('GET', '/v1/owner/accounts'), ctraderConnectSection()]);
  const rows = accounts.map((a) =>
    h(
      'tr',
      {},
      h('td', {}, h('a', { href: `/dashboard/accounts/${encodeURIComponent(a.id)}` }, a.name ?? a.id)),
      h('td', {}, a.platform),
      h('td', {}, a.lockedUntilBridge ? 'locked until its bridge connects' : a.status),
      h(
        'td',
        {},
        h('span', { class: a.bridge.online ? 'online' : 'offline' }, a.bridge.online ? 'online' : 'offline'),
        ` · last seen ${when(a.bridge.lastSeenAt)}`,
      ),
      h('td', {}, a.bridge.version ?? '—'),
      h('td', {}, a.figures ? money(a.figures.equity, a.figures.currency, false) : '—'),
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
    connect,
    addAccountForm(accountPage),
  );
}

/** One account: its bridge's state (kept fresh), how to connect it, its figures, its risk settings. `token`: just made. */
export async function accountPage(id, token = null) {
  const [a, { connectEnabled: ctraderConnect }] = await Promise.all([
    api('GET', `/v1/owner/accounts/${encodeURIComponent(id)}`),
    api('GET', '/v1/owner/ctrader'),
  ]);
  const how = { ctraderConnect };
  const state = h('div', {}, bridgeState(a));
  const connect = h('div', {}, connectSection(a, token, how));
  keepFresh(state, a.id);
  page(
    a.name ? `Account ${a.name}` : `Account ${a.id}`,
    h('p', {}, 'Account id ', h('code', {}, a.id), ' (the webhook URL’s last part: /webhook/custom/', a.id, ')'),
    h(
      'section',
      {},
      h('h2', {}, 'Bridge'),
      state,
      a.figures
        ? h(
            'p',
            {},
            `Balance ${money(a.figures.balance, '', false)}, equity ${money(a.figures.equity, '', false)}, free margin ${money(a.figures.freeMargin, a.figures.currency, false)} (at ${when(a.figures.at)})`,
          )
        : null,
      a.stopOut
        ? h(
            'p',
            {},
            `Stopped out at ${when(a.stopOut.trippedAt)}: equity ${a.stopOut.equity} ${a.stopOut.currency}, peak ${a.stopOut.peak}; ` +
              `${a.stopOut.closed} closed, ${a.stopOut.cancelled} cancelled, ${a.stopOut.failed} failed`,
          )
        : null,
      form(
        { 'aria-label': 'New bridge token' },
        [
          h(
            'p',
            { class: 'hint', id: 'new-token-hint' },
            'A new bridge token stops the old one at once: the running bridge is refused until it is restarted with the new one. ' +
              'In the demo (make start) too: put the new token in demo/registry.json as this account’s bridgeToken and run make start again.',
          ),
        ],
        'New bridge token (restart the bridge with it)',
        async () => {
          const made = await api('POST', `/v1/owner/accounts/${encodeURIComponent(a.id)}/bridge-token`);
          connect.replaceChildren(connectSection(a, made.value, how));
          state.replaceChildren(bridgeState(await api('GET', `/v1/owner/accounts/${encodeURIComponent(a.id)}`)));
        },
      ),
    ),
    tradesSection(a),
    connect,
    mt5PackageSection(a, async () => {
      connect.replaceChildren(connectSection(a, null, how));
      state.replaceChildren(bridgeState(await api('GET', `/v1/owner/accounts/${encodeURIComponent(a.id)}`)));
    }),
    ctraderLink(a),
    riskSection(a),
  );
}

export async function auditPage() {
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
