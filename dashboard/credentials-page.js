// The owner's webhook secrets, API tokens and owner API keys: made, linked to accounts, unlinked, revoked.
// A secret's or a token's accounts change in place (PUT /v1/owner/{secrets|tokens}/{id}/accounts): the value stays.
'use strict';

import { api, deleteButton, field, form, h, page, shownOnce, when } from './dom.js?v=__VERSION__';

/** An account as a person knows it: its name, the id after it in small text (the id alone when it has no name). */
const accountLabel = (a) => (a.name ? [a.name, ' ', h('small', { class: 'hint' }, a.id)] : [a.id]);

/** Checkboxes of the owner's accounts, by name; `checked`: the ids ticked at first. */
function accountPicker(legend, accounts, checked = []) {
  return h(
    'fieldset',
    {},
    h('legend', {}, legend),
    accounts.map((a) => h('label', {}, h('input', { type: 'checkbox', name: 'accounts', value: a.id, checked: checked.includes(a.id) }), ...accountLabel(a))),
  );
}

const KINDS = {
  secret: { path: 'secrets', noun: 'webhook secret', shown: 'Webhook secret' },
  token: { path: 'tokens', noun: 'API token', shown: 'API token' },
};

/** One secret's or token's row: its accounts by name, a form to change them, and Revoke. */
function grantRow(kind, g, accounts) {
  const { path, noun } = KINDS[kind];
  const byId = new Map(accounts.map((a) => [a.id, a]));
  // By name, in alphabetical order: the same list reads the same whichever order the accounts were linked in.
  const namesOf = (ids) =>
    ids
      .map((id) => byId.get(id)?.name ?? id)
      .sort((x, y) => x.localeCompare(y))
      .join(', ');
  const names = namesOf(g.accounts);
  const status = h('p', { role: 'status' });
  return h(
    'tr',
    {},
    h('td', {}, h('code', {}, g.id)),
    h('td', {}, names),
    h(
      'td',
      {},
      form(
        { 'aria-label': `Accounts of ${noun} ${g.id}`, class: 'relink' },
        [accountPicker(`Accounts ${noun} ${g.id} reaches`, accounts, g.accounts)],
        'Save accounts',
        async (data) => {
          const saved = await api('PUT', `/v1/owner/${path}/${encodeURIComponent(g.id)}/accounts`, { accounts: data.getAll('accounts') });
          status.textContent = `Saved: ${noun} ${g.id} now reaches ${namesOf(saved.accounts)}. Its value is unchanged.`;
        },
      ),
      status,
    ),
    h('td', {}, deleteButton('Revoke', `Revoke ${kind} ${g.id}`, `/v1/owner/${path}/${g.id}`, credentialsPage)),
  );
}

function grantSection(kind, list, accounts, heading, hint) {
  const { path, noun, shown } = KINDS[kind];
  const out = h('div');
  return h(
    'section',
    {},
    h('h2', {}, heading),
    h('p', { class: 'hint' }, hint),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Id', 'Accounts', 'Link or unlink accounts', ''].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        list.map((g) => grantRow(kind, g, accounts)),
      ),
    ),
    form({ 'aria-label': `New ${noun}` }, [accountPicker(`Accounts the ${noun} reaches`, accounts)], `Create ${noun}`, async (data) => {
      const made = await api('POST', `/v1/owner/${path}`, { accounts: data.getAll('accounts') });
      out.replaceChildren(shownOnce(shown, made.value));
    }),
    out,
  );
}

export async function credentialsPage() {
  const [{ accounts }, { secrets }, { tokens }, { apiKeys }] = await Promise.all(
    ['accounts', 'secrets', 'tokens', 'api-keys'].map((p) => api('GET', `/v1/owner/${p}`)),
  );
  const key = h('div');
  page(
    'Secrets and tokens',
    grantSection(
      'secret',
      secrets,
      accounts,
      'Webhook secrets',
      'A secret sends signals to the accounts it links. A new account joins an existing secret here (Save accounts): the alerts that use the secret need no change.',
    ),
    grantSection('token', tokens, accounts, 'API tokens', 'A token reads the outcomes of the accounts it grants (GET /v1/signals/{id}).'),
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
            deleteButton('Revoke', `Revoke API key ${k.name}`, `/v1/owner/api-keys/${k.id}`, credentialsPage),
          ),
        ),
      ),
      form({ 'aria-label': 'New API key' }, [field('Name', { name: 'name', required: true, maxlength: 64 })], 'Create API key', async (data) => {
        const made = await api('POST', '/v1/owner/api-keys', { name: data.get('name') });
        key.replaceChildren(shownOnce('API key', made.value));
      }),
      key,
    ),
  );
}
