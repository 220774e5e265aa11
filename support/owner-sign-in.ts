import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { generateSync } from 'otplib';
import { adminCliJson } from './admin-cli';
import { post, send, type HttpResult } from './http';
import { waitFor } from './infra';

/** An owner as a browser holds one: the session cookie and its CSRF token, and what the owner knows. */
export interface OwnerBrowser {
  owner: string;
  password: string;
  seed: string;
  cookie: string;
  csrf: string;
}

/** A file with a fresh 32-byte key, as OWNER_SECRETS_KEY_FILE names. */
export function ownerKeyFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'owner-key-'));
  const file = path.join(dir, 'key');
  fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return file;
}

/** The code of the authenticator app `steps` 30-second steps from now (the service takes −1, 0 and +1, each once). */
export function totp(seed: string, steps = 0): string {
  return generateSync({ secret: seed, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
}

export function cookieOf(res: HttpResult): string {
  const set = res.headers.get('set-cookie') ?? '';
  return set.split(';')[0]!;
}

/** The operator's `owner create`, then the owner's setup (password and the code of the step before this one). */
export async function setUpOwner(ingressUrl: string, redisUrl: string, owner: string): Promise<OwnerBrowser> {
  const created = await adminCliJson<{ setupLink: string }>(['owner', 'create', owner], redisUrl);
  const token = created.setupLink.split('#')[1]!;
  const begun = await post(`${ingressUrl}/v1/owner/setup/begin`, { token });
  if (begun.status !== 200) throw new Error(`setup/begin: ${begun.status} ${begun.text}`);
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const seed = begun.body.totpSeed as string;
  // The previous step's code (leaving this step's and the next for later sign-ins), sent at least 5 s before the step
  // turns: past the turn it would be two steps old, and refused.
  await waitFor('a TOTP step with 5 s left', async () => (30_000 - (Date.now() % 30_000) >= 5_000 ? true : undefined), 10_000);
  const done = await post(`${ingressUrl}/v1/owner/setup/complete`, { token, password, code: totp(seed, -1) });
  if (done.status !== 201) throw new Error(`setup/complete: ${done.status} ${done.text}`);
  return { owner, password, seed, cookie: cookieOf(done), csrf: done.body.csrfToken as string };
}

/** A request as the signed-in browser makes it (cookie, and the CSRF token on changes). */
export function asBrowser(b: OwnerBrowser, method: string, url: string, body?: unknown): Promise<HttpResult> {
  return send(method, url, body, { cookie: b.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': b.csrf }) });
}
