import fs from 'node:fs';
import path from 'node:path';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { asBrowser, ownerKeyFile, setUpOwner, type OwnerBrowser } from '../helpers/owner';
import { ScriptedTerminal } from '../helpers/terminal';
import { iniSettings, unpack } from '../helpers/mt5-package';
import { get, post } from '../../support/http';
import { REPO_ROOT } from '../../support/infra';
import { CURRENT_BRIDGE_VERSION } from '../../src/domain/capabilities';
import { BRIDGE_PROTOCOL_VERSION } from '../../src/domain/bridge-protocol';
import { findMt5PackageDir, loadMt5Package } from '../../src/downloads/mt5-package';

/**
 * The MT5 bridge package over HTTP against the real Redis and Temporal: the public downloads, and the owner's
 * personal copy (POST /v1/owner/accounts/{id}/mt5-package): the config holds this service's URL and a new token
 * that works while the old one stops; another owner's account is 404 and keeps its token; a cTrader account is 409;
 * CSRF as every change; audited. And the 412 that names the version to install.
 */
let stack: Stack;
let a: Fixture;
let b: Fixture;
let browserA: OwnerBrowser;
const url = (p: string) => `${stack.ingress.url}${p}`;
const work = path.join(REPO_ROOT, '.run', `mt5-package-it-${process.pid}`);
const version = CURRENT_BRIDGE_VERSION.mt5;
const PUBLIC_URL = 'https://signals.example.net';

/** A POST as the signed-in browser, the answer's bytes kept (the zip). */
async function download(browser: OwnerBrowser, accountId: string, csrf = browser.csrf) {
  const res = await fetch(url(`/v1/owner/accounts/${encodeURIComponent(accountId)}/mt5-package`), {
    method: 'POST',
    headers: { cookie: browser.cookie, 'x-csrf-token': csrf },
    signal: AbortSignal.timeout(10_000),
  });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(body.toString()) : undefined };
}

const helloWith = (token: string) =>
  post(url('/bridge/v1/hello'), { platform: 'mt5', bridgeVersion: version, capabilities: [] }, { authorization: `Bearer ${token}` });

beforeAll(async () => {
  stack = await startStack({ env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false', PUBLIC_URL } });
  a = await seedOwner(stack.registry, [{}, { platform: 'ctrader' }, { bridgeVersion: '1.9.0' }]);
  b = await seedOwner(stack.registry, [{}]);
  browserA = await setUpOwner(stack.ingress.url, stack.config.redis.url, a.owner);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('the public downloads', () => {
  test('when the current package is asked for, at its stable and its versioned URL, then both are the zip make dist built', async () => {
    const built = loadMt5Package(findMt5PackageDir(path.join(REPO_ROOT, 'src', 'downloads'))!);
    const latest = await get(url('/downloads/mt5-bridge/latest.json'));
    expect(latest.status).toBe(200);
    expect(latest.body).toEqual({
      version,
      file: `mt5-bridge-${version}.zip`,
      url: `/downloads/mt5-bridge/mt5-bridge-${version}.zip`,
      sha256: built.manifest.sha256,
    });
    for (const p of ['/downloads/mt5-bridge/latest.zip', latest.body.url as string]) {
      const res = await fetch(url(p));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/zip');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="mt5-bridge-${version}.zip"`);
      expect(Buffer.from(await res.arrayBuffer()).equals(built.zip)).toBe(true);
    }
    expect((await get(url('/downloads/mt5-bridge/mt5-bridge-1.0.0.zip'))).status).toBe(404);
  });
});

describe('the personal package of an MT5 account', () => {
  test('when the owner downloads it, then its config holds this service’s URL and a new token: hello works with it, the old token no longer', async () => {
    const account = a.accounts[0]!;
    expect((await helloWith(account.bridgeToken)).status).toBe(200);
    const res = await download(browserA, account.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="mt5-bridge-${version}-${account.id}.zip"`);
    const { dir, files } = unpack(res.body, path.join(work, 'personal'));
    expect(Object.keys(files).sort()).toEqual([
      'README.txt',
      'es-mt5-bridge.ini',
      `es_mt5_bridge-${version}-py3-none-any.whl`,
      'start-bridge.cmd',
      'start-bridge.ps1',
    ]);
    const settings = iniSettings(path.join(dir, 'es-mt5-bridge.ini'));
    expect(settings.url).toBe(PUBLIC_URL);
    expect(settings.token).toMatch(/^brg_[A-Za-z0-9_-]{43}$/);
    expect(settings.token).not.toBe(account.bridgeToken);
    expect((await helloWith(settings.token!)).status).toBe(200);
    expect((await helloWith(account.bridgeToken)).status).toBe(401);

    // A second download replaces the token of the first.
    const again = iniSettings(path.join(unpack((await download(browserA, account.id)).body, path.join(work, 'again')).dir, 'es-mt5-bridge.ini'));
    expect(again.token).not.toBe(settings.token);
    expect((await helloWith(settings.token!)).status).toBe(401);
    expect((await helloWith(again.token!)).status).toBe(200);

    const audit = await asBrowser(browserA, 'GET', url('/v1/owner/audit'));
    const entries = (audit.body.entries as { action: string; accountId?: string; detail: unknown }[]).filter((e) => e.action === 'mt5_package.download');
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ accountId: account.id, detail: { version, bridgeToken: 'replaced' } });
    expect(JSON.stringify(audit.body)).not.toContain(again.token);
  });

  test('when the account is another owner’s or unknown, then 404 and its token keeps working', async () => {
    for (const id of [b.accounts[0]!.id, 'acc-nobody', 'x'.repeat(65)]) {
      const res = await download(browserA, id);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: 'No such account' });
    }
    expect((await helloWith(b.accounts[0]!.bridgeToken)).status).toBe(200);
  });

  test('when the account is a cTrader account, then 409 naming why, and its token is kept', async () => {
    const res = await download(browserA, a.accounts[1]!.id);
    expect(res.status).toBe(409);
    expect(res.json.error).toMatch(/is a ctrader account: the MT5 bridge package is for MT5 accounts/);
    const ctrader = new ScriptedTerminal(stack.ingress.url, a.accounts[1]!.bridgeToken, 'ctrader', '1.3.0');
    expect(await ctrader.hello()).toEqual({ accountId: a.accounts[1]!.id, protocolVersion: BRIDGE_PROTOCOL_VERSION, serverTime: expect.any(String) });
  });

  test('when a browser session sends no CSRF token, then 403 and nothing changes', async () => {
    const account = a.accounts[2]!;
    const res = await download(browserA, account.id, '');
    expect(res.status).toBe(403);
    expect((await helloWith(account.bridgeToken)).status).toBe(200);
  });
});

describe('the 412 names the version to install', () => {
  test('when an MT5 account’s bridge is too old for the action, then the 412 says which bridge version runs it', async () => {
    const f = await seedOwner(stack.registry, [{ bridgeVersion: '1.9.0' }, { venue: { stopLimit: false, modifyPending: true } }]);
    const stopLimit = { secret: f.secret, action: 'buy_stop_limit', symbol: 'EURUSD', volume: 0.1, price: 1.2, stopLimitPrice: 1.21 };
    const old = await post(url(`/webhook/custom/${f.accounts[0]!.id}`), stopLimit);
    expect(old.status).toBe(412);
    expect(old.body).toEqual({
      error: expect.stringContaining(`install the MT5 bridge ${version}`),
      correlationId: expect.any(String),
      installBridgeVersion: version,
    });
    // The venue lacks the order type: no bridge would help, and none is named.
    const venue = await post(url(`/webhook/custom/${f.accounts[1]!.id}`), stopLimit);
    expect(venue.status).toBe(412);
    expect(venue.body.installBridgeVersion).toBeUndefined();
  });
});
