// The owners' dashboard: every page is a view of the owner API (/v1/owner/...), nothing it does that the API cannot.
// Text from the server is only ever set as text (textContent), never parsed as HTML.
'use strict';

import { ApiError, api, errorText, h, page, session } from './dom.js?v=__VERSION__';
import { setupPage, signInPage } from './sign-in-pages.js?v=__VERSION__';
import { accountPage, accountsPage, auditPage } from './account-pages.js?v=__VERSION__';
import { credentialsPage } from './credentials-page.js?v=__VERSION__';
import { callbacksPage, signalPage, signalsPage } from './activity-pages.js?v=__VERSION__';
import { ctraderCallbackPage } from './ctrader-pages.js?v=__VERSION__';

// ---- routing -----------------------------------------------------------------------------------------------------

const ROUTES = [
  [/^\/dashboard\/accounts\/([^/]+)$/, (m) => accountPage(decodeURIComponent(m[1]))],
  [/^\/dashboard\/credentials$/, credentialsPage],
  [/^\/dashboard\/signals$/, signalsPage],
  [/^\/dashboard\/signals\/([^/]+)$/, (m) => signalPage(decodeURIComponent(m[1]))],
  [/^\/dashboard\/callbacks$/, callbacksPage],
  [/^\/dashboard\/audit$/, auditPage],
  [/^\/dashboard\/ctrader\/callback$/, ctraderCallbackPage],
  [/^\/dashboard\/?$/, accountsPage],
  [/^\/dashboard\/accounts\/?$/, accountsPage],
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
