// Adding an account, and connecting its bridge: the account page's "Bridge" section (its state, refreshed every few
// seconds), the bridge token shown once, and how to connect this account on its platform (CONNECT_SECTIONS).
'use strict';

import { api, form, h, refreshWhileShown, shownOnce, when } from './dom.js?v=__VERSION__';
import { control } from './form-controls.js?v=__VERSION__';

const REFRESH_MS = 2000;
const seconds = (ms) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

/**
 * How to connect an account's bridge, one function per platform: (account, token) → nodes. `token` is the bridge
 * token when this page has just made it (shown once), else null. Each platform's own section (the MT5 package, the
 * cTrader sign-in) replaces its entry here.
 */
const CONNECT_SECTIONS = {
  mt5: (a, token) => [
    h('h3', {}, 'Connect MetaTrader 5'),
    h(
      'ol',
      {},
      h('li', {}, 'Download the MT5 bridge (below): its configuration already holds this service’s address and a new bridge token.'),
      h('li', {}, 'On the Windows machine where the MT5 terminal runs, unzip it and run start-bridge.cmd (docs/mt5-bridge.md).'),
      h('li', {}, 'This page turns online when the bridge has said hello; the account is unlocked then.'),
    ),
    h(
      'p',
      { class: 'hint' },
      'A bridge you installed already takes the token as ',
      h('code', {}, `set ES_BRIDGE_TOKEN=${token ?? 'brg_…'}`),
      ' then ',
      h('code', {}, `es-mt5-bridge --url ${location.origin}`),
      '.',
    ),
  ],
  ctrader: (a, token, { ctraderConnect }) => [
    h('h3', {}, 'Connect cTrader'),
    ...(ctraderConnect
      ? [
          h(
            'ol',
            {},
            h(
              'li',
              {},
              'On Accounts, Connect with cTrader: sign in at cTrader, allow access and pick your trading account. The service links it and its cTrader connector trades it; nothing runs on your machine (docs/ctrader-connector.md).',
            ),
            h('li', {}, 'This page turns online when the connector has said hello for it; the account is unlocked then.'),
          ),
        ]
      : [
          h(
            'p',
            { id: 'ctrader-not-configured' },
            'Connect with cTrader is not offered here: this service has no cTrader Open API application configured. ',
            'Whoever runs the service (you, when you host it yourself) registers one with Spotware and gives it to the service: ',
            h('a', { href: '/docs/guides/ctrader-connector.md' }, 'the steps, in docs/ctrader-connector.md'),
            ' ("For a self-hoster: registering an Open API application"). Then Connect with cTrader appears on Accounts.',
          ),
          h(
            'p',
            { class: 'hint' },
            'Or run a cTrader connector with this account in its credentials file: its bridge token ',
            h('code', {}, token ?? 'brg_…'),
            ' (a new one from New bridge token above), the cTrader account number and account id ',
            h('code', {}, a.id),
            '. This page turns online when the connector has said hello for it.',
          ),
        ]),
  ],
};

/**
 * The bridge token, where it goes, and how this platform connects (`token` only right after it was made);
 * `ctraderConnect`: whether this service offers Connect with cTrader (GET /v1/owner/ctrader).
 */
export function connectSection(a, token, { ctraderConnect = false } = {}) {
  const how = CONNECT_SECTIONS[a.platform];
  return h(
    'section',
    { 'aria-label': 'Connect the bridge', id: 'connect' },
    h('h2', {}, 'Connect the bridge'),
    token ? shownOnce('Bridge token', token) : null,
    token ? h('p', { class: 'hint' }, 'It is shown only now: put it in the bridge’s configuration as below, never in a signal or a chart.') : null,
    how ? how(a, token, { ctraderConnect }) : null,
  );
}

/** What the page says of the bridge now: online or not, and why not; refreshed while the page is shown. */
export function bridgeState(a) {
  const b = a.bridge;
  const state = b.online ? h('span', { class: 'online' }, 'online') : h('span', { class: 'offline' }, 'offline');
  const lines = [
    h(
      'p',
      { id: 'bridge-state' },
      'Bridge ',
      state,
      ` · last seen ${when(b.lastSeenAt)} · version ${b.version ?? 'unknown'} · platform ${a.platform} · ${a.status}`,
    ),
  ];
  const say = (text) => lines.push(h('p', { class: 'bridge-why' }, text));
  if (b.connection === 'waiting_for_bridge') say('Waiting for its bridge: no bridge has called with this account’s token yet.');
  if (b.connection === 'waiting_for_new_token') say('Waiting for the bridge with the new token: a bridge still using the old one is refused (401).');
  if (b.connection === 'no_token') say('No bridge token: make one below, then give it to the bridge.');
  if (a.lockedUntilBridge) say('Locked for trading until its bridge says hello for the first time; that hello unlocks it.');
  if (!b.online && b.connection === 'connected') say(`Offline: no call from the bridge in the last ${seconds(b.onlineWithinMs)}.`);
  if (!b.online && a.status === 'active')
    say(
      `Signals sent now are still accepted (202) and wait in the account’s queue for the bridge: a market entry up to ` +
        `${seconds(b.waits.marketEntryMs)}, any other command up to ${seconds(b.waits.otherMs)}. One no bridge has taken by then ` +
        'is withdrawn and ends rejected bridge_offline; nothing is placed.',
    );
  const r = b.lastRefusal;
  if (r) lines.push(h('p', { class: 'bridge-refusal' }, `Last refused call: ${r.status} ${refusalText(r)} (${when(r.at)}).`));
  return h('div', { 'aria-live': 'polite' }, lines);
}

function refusalText(r) {
  if (r.reason === 'old_token') return 'a bridge called with this account’s previous token; stop it, or restart it with the new one';
  if (r.reason === 'bridge_too_old') return `the bridge is too old for a signal: ${r.message}; install the newer bridge`;
  if (r.reason === 'wrong_platform') return `the bridge’s hello: ${r.message}`;
  return `the bridge’s call: ${r.message}`;
}

/** Re-reads the account every REFRESH_MS while `slot` is on the page, and redraws only the bridge's state. */
export function keepFresh(slot, id) {
  refreshWhileShown(slot, REFRESH_MS, async () => slot.replaceChildren(bridgeState(await api('GET', `/v1/owner/accounts/${encodeURIComponent(id)}`))));
}

/** The "Add an account" form of the accounts page; a new account's page opens with its bridge token shown once. */
export function addAccountForm(open) {
  return form(
    { 'aria-label': 'Add an account' },
    [
      h('h2', {}, 'Add an account'),
      control('name', 'Name', '', { required: true, maxlength: 64, hint: 'What you call it, e.g. "IC Markets live"' }),
      control('platform', 'Platform', 'mt5', {
        tag: 'select',
        options: [
          ['mt5', 'MetaTrader 5'],
          ['ctrader', 'cTrader'],
        ],
      }),
      control('type', 'Type', 'standard', {
        tag: 'select',
        options: [
          ['standard', 'Standard (takes signals)'],
          ['copy_master', 'Copy master (takes no signals)'],
        ],
      }),
      h('p', { class: 'hint' }, 'The account is locked for trading until its bridge connects; the next page shows how.'),
    ],
    'Add account',
    async (data) => {
      const made = await api('POST', '/v1/owner/accounts', { name: data.get('name'), platform: data.get('platform'), type: data.get('type') });
      history.pushState({}, '', `/dashboard/accounts/${encodeURIComponent(made.account.id)}`);
      await open(made.account.id, made.bridgeToken);
    },
  );
}
