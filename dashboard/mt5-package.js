// An MT5 account's bridge package, ready to run: the service's own zip with this service's address and a NEW bridge
// token written into its es-mt5-bridge.ini (POST /v1/owner/accounts/{id}/mt5-package; docs/mt5-bridge.md).
'use strict';

import { ApiError, errorText, form, h, session } from './dom.js?v=__VERSION__';

/** Whether `a` (x.y.z) is older than `b`. */
const older = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
};

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
        : older(running, latest.version)
          ? `This account's bridge is ${running}: download and start the new one to update it.`
          : `This account's bridge is ${running}.`);
  } catch (err) {
    out.textContent = err instanceof ApiError ? `The package cannot be downloaded now: ${errorText(err)}` : String(err);
  }
}

/** The "MT5 bridge" section of an account's page; nothing for an account of another platform. */
export function mt5PackageSection(account) {
  if (account.platform !== 'mt5') return null;
  const version = h('p', { id: 'mt5-bridge-version' }, 'Reading the current version…');
  const done = h('p', { role: 'status' });
  void currentVersion(version, account);
  return h(
    'section',
    { 'aria-labelledby': 'mt5-bridge-heading' },
    h('h2', { id: 'mt5-bridge-heading' }, 'MT5 bridge'),
    version,
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
        done.textContent = `Downloaded ${name}. Unpack it on the PC of your MT5 terminal and start start-bridge.cmd; this page shows the bridge online once it has said hello.`;
      },
    ),
    done,
  );
}
