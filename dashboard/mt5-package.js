// An MT5 account's bridge package, ready to run: the service's own zip with this service's address and a NEW bridge
// token written into its es-mt5-bridge.ini (POST /v1/owner/accounts/{id}/mt5-package; docs/mt5-bridge.md).
'use strict';

import { ApiError, api, errorText, form, h, session } from './dom.js?v=__VERSION__';

async function currentVersion(out, account) {
  try {
    const res = await fetch('/downloads/mt5-bridge/latest.json', { credentials: 'same-origin' });
    const latest = await res.json();
    if (!res.ok) throw new ApiError(res.status, latest);
    const running = account.bridge.version;
    out.textContent =
      `The current MT5 bridge is ${latest.version}. ` +
      (running === null
        ? 'No bridge has connected to this account yet.'
        : account.bridge.update
          ? `This account's bridge is ${running}: ${account.bridge.update}. Download and start the new one to update it.`
          : `This account's bridge is ${running}.`);
  } catch (err) {
    out.textContent = err instanceof ApiError ? `The package cannot be downloaded now: ${errorText(err)}` : String(err);
  }
}

/** A warning before the download when the package's config would hold an address another PC cannot reach. */
async function addressWarning(slot) {
  try {
    const { warning } = await api('GET', '/v1/owner/mt5-package');
    if (warning) slot.replaceChildren(h('p', { class: 'rejected', id: 'mt5-address-warning' }, warning));
  } catch {
    // The download's own refusal says what is wrong.
  }
}

/**
 * The "MT5 bridge" section of an account's page; nothing for an account of another platform. `tokenReplaced` runs
 * after a download: the zip holds the account's new bridge token, so no token shown before it works any more.
 */
export function mt5PackageSection(account, tokenReplaced = () => undefined) {
  if (account.platform !== 'mt5') return null;
  const version = h('p', { id: 'mt5-bridge-version' }, 'Reading the current version…');
  const done = h('p', { role: 'status' });
  const warning = h('div', { role: 'alert' });
  void currentVersion(version, account);
  void addressWarning(warning);
  return h(
    'section',
    { 'aria-labelledby': 'mt5-bridge-heading' },
    h('h2', { id: 'mt5-bridge-heading' }, 'MT5 bridge'),
    version,
    warning,
    h(
      'p',
      { class: 'hint' },
      'The bridge runs on the Windows PC of your MT5 terminal. The download is ready to run: unpack it and double-click start-bridge.cmd; ' +
        'its es-mt5-bridge.ini holds this service’s address and the account’s bridge token.',
    ),
    form(
      { 'aria-label': 'Download the MT5 bridge' },
      [
        h(
          'p',
          { class: 'hint' },
          'Each download makes a new bridge token, in the zip only: the previous token, and a bridge still running with it, stop at once. Keep the zip like a password.',
        ),
      ],
      'Download the MT5 bridge',
      async () => {
        const res = await fetch(`/v1/owner/accounts/${encodeURIComponent(account.id)}/mt5-package`, {
          method: 'POST',
          headers: { 'x-csrf-token': session.csrf ?? '' },
          credentials: 'same-origin',
        });
        if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
        const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'mt5-bridge.zip';
        const url = URL.createObjectURL(await res.blob());
        const link = h('a', { href: url, download: name, hidden: true });
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
        done.textContent =
          `Downloaded ${name}: it holds the account's new bridge token, and every earlier token stopped working. ` +
          'Unpack it on the PC of your MT5 terminal and start start-bridge.cmd; this page shows the bridge online once it has said hello.';
        await tokenReplaced();
      },
    ),
    done,
  );
}
