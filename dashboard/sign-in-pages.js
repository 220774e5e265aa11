// Setting up a sign-in from the operator's link, and signing in.
'use strict';

import { api, errorText, field, form, h, page } from './dom.js?v=__VERSION__';

export async function setupPage() {
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
        field(
          'Password',
          { name: 'password', type: 'password', autocomplete: 'new-password', required: true, minlength: 12 },
          'At least 12 characters; not a common password, a sequence like 123456789012, or your owner id',
        ),
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

export function signInPage() {
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
