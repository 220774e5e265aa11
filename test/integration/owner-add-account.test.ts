import { randomBytes } from 'node:crypto';
import { startPaperTerminal, startStack, type Fixture, type Stack } from '../helpers/stack';
import { asBrowser, ownerKeyFile, setUpOwner, signedInOwner, type OwnerBrowser } from '../helpers/owner';
import { adminCliJson } from '../helpers/admin';
import { post } from '../../support/http';
import { waitFor } from '../../support/infra';
import { LONGEST_POLL_MS } from '../helpers/long-poll';

/**
 * An owner adds an account over HTTP (POST /v1/owner/accounts) against the real Redis and Temporal: validation names
 * the field, the account is locked until its bridge's first hello, another owner cannot see it, it is audited, and
 * the per-owner cap holds under parallel adds with nothing half-made. Then the account page's bridge state: online
 * while a real paper bridge long-polls, offline within 15 s of it stopping, "waiting for the bridge with the new
 * token" after a rotation, and the last refused call (old token 401, wrong platform 400, too old 412).
 */
let stack: Stack;
let a: Fixture;
let b: Fixture;
let browserA: OwnerBrowser;
let browserB: OwnerBrowser;
const url = (p: string) => `${stack.ingress.url}${p}`;
const hello = (token: string, body: Record<string, unknown> = {}) =>
  post(url('/bridge/v1/hello'), { platform: 'mt5', bridgeVersion: '2.0.0', ...body }, { authorization: `Bearer ${token}` });

beforeAll(async () => {
  stack = await startStack({ env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
  ({ f: a, browser: browserA } = await signedInOwner(stack, [{}]));
  ({ f: b, browser: browserB } = await signedInOwner(stack, [{}]));
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const addAccount = (browser: OwnerBrowser, body: unknown) => asBrowser(browser, 'POST', url('/v1/owner/accounts'), body);
const account = async (id: string, browser = browserA) => (await asBrowser(browser, 'GET', url(`/v1/owner/accounts/${id}`))).body;

describe('adding an account', () => {
  it('a refusal names each field that is wrong, and nothing is made', async () => {
    const before = (await asBrowser(browserA, 'GET', url('/v1/owner/accounts'))).body.accounts.length;
    const empty = await addAccount(browserA, {});
    expect(empty.status).toBe(400);
    expect(empty.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['name', 'platform']);
    const wrong = await addAccount(browserA, { name: 'x'.repeat(65), platform: 'mt4', type: 'gold' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details).toEqual(
      expect.arrayContaining([
        { path: 'name', message: 'a name of 1 to 64 characters' },
        { path: 'platform', message: 'mt5 or ctrader' },
        { path: 'type', message: 'standard or copy_master' },
      ]),
    );
    const extra = await addAccount(browserA, { name: 'n', platform: 'mt5', id: 'mine' });
    expect([extra.status, extra.body.details[0].path]).toEqual([400, 'id']);
    expect((await asBrowser(browserA, 'GET', url('/v1/owner/accounts'))).body.accounts.length).toBe(before);
  });

  it('makes a random id and a bridge token shown once; locked until its bridge says hello, which unlocks it; audited; 404 to another owner', async () => {
    const made = await addAccount(browserA, { name: 'My live MT5', platform: 'mt5' });
    expect(made.status).toBe(201);
    expect(made.headers.get('cache-control')).toBe('no-store');
    const { account: view, bridgeToken } = made.body as { account: { id: string }; bridgeToken: string };
    expect(view.id).toMatch(/^acc_[A-Za-z0-9_-]{16}$/);
    expect(bridgeToken).toMatch(/^brg_/);
    expect(made.body.account).toEqual(
      expect.objectContaining({ name: 'My live MT5', platform: 'mt5', type: 'standard', status: 'locked', lockedUntilBridge: true }),
    );
    expect(made.body.account.bridge).toEqual(expect.objectContaining({ online: false, hasToken: true, connection: 'waiting_for_bridge', lastRefusal: null }));
    expect(JSON.stringify(await account(view.id))).not.toContain(bridgeToken);

    // Another owner: not found, like an id that does not exist.
    for (const [method, path, body] of [
      ['GET', `/v1/owner/accounts/${view.id}`],
      ['PATCH', `/v1/owner/accounts/${view.id}`, { risk: { maxVolume: 1 } }],
      ['POST', `/v1/owner/accounts/${view.id}/bridge-token`],
    ] as const) {
      expect((await asBrowser(browserB, method, url(path), body)).status).toBe(404);
    }
    expect(JSON.stringify((await asBrowser(browserB, 'GET', url('/v1/owner/accounts'))).body)).not.toContain(view.id);

    const audit = await asBrowser(browserA, 'GET', url('/v1/owner/audit'));
    expect(audit.body.entries[0]).toEqual({
      at: expect.any(String),
      by: 'owner',
      action: 'account.create',
      accountId: view.id,
      detail: { name: 'My live MT5', platform: 'mt5', type: 'standard' },
    });

    // Locked: a signal for it is refused until its bridge has said hello.
    const secret = await asBrowser(browserA, 'POST', url('/v1/owner/secrets'), { accounts: [view.id] });
    const buy = () => post(url(`/webhook/custom/${view.id}`), { secret: secret.body.value, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect((await buy()).status).toBe(403);
    expect((await hello(bridgeToken, { platform: 'ctrader' })).status).toBe(400);
    expect((await account(view.id)).status).toBe('locked');
    expect((await hello(bridgeToken)).status).toBe(200);
    const after = await account(view.id);
    expect(after).toEqual(expect.objectContaining({ status: 'active', lockedUntilBridge: false }));
    expect(after.bridge).toEqual(
      expect.objectContaining({
        online: true,
        connection: 'connected',
        version: '2.0.0',
        lastRefusal: expect.objectContaining({ status: 400, reason: 'wrong_platform' }),
      }),
    );
    expect((await buy()).status).toBe(202);
  });

  it('an operator’s lock is final: a first hello no longer unlocks the account', async () => {
    const made = await addAccount(browserA, { name: 'kept locked', platform: 'mt5' });
    const id = made.body.account.id as string;
    await adminCliJson(['account', 'lock', id], stack.config.redis.url);
    expect((await hello(made.body.bridgeToken as string)).status).toBe(200);
    expect(await account(id)).toEqual(expect.objectContaining({ status: 'locked', lockedUntilBridge: false }));
  });

  it('an owner at the cap gets a clear 409 and nothing is made; parallel adds never pass the cap', async () => {
    const owner = `owner-cap-${randomBytes(4).toString('hex')}`;
    const capped = await setUpOwner(stack.ingress.url, stack.config.redis.url, owner);
    const set = await adminCliJson<{ accountCap: number }>(['owner', 'account-cap', owner, '3'], stack.config.redis.url);
    expect(set.accountCap).toBe(3);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => addAccount(capped, { name: `parallel ${i}`, platform: 'ctrader' })));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 201, ...Array<number>(7).fill(409)]);
    const refused = answers.find((r) => r.status === 409)!;
    expect(refused.body).toEqual({ error: expect.stringMatching(/the most allowed \(3\)/), limit: 3 });
    const listed = (await asBrowser(capped, 'GET', url('/v1/owner/accounts'))).body.accounts as { id: string }[];
    const made = answers.filter((r) => r.status === 201).map((r) => r.body.account.id as string);
    expect(listed.map((x) => x.id).sort()).toEqual(made.sort());
    // Nothing half-made: only the three accounts' tokens work, and only they are audited.
    const tokens = answers.filter((r) => r.status === 201).map((r) => r.body.bridgeToken as string);
    for (const t of tokens) expect((await hello(t, { platform: 'ctrader' })).status).toBe(200);
    const audit = (await asBrowser(capped, 'GET', url('/v1/owner/audit'))).body.entries as { action: string }[];
    expect(audit.filter((e) => e.action === 'account.create')).toHaveLength(3);
    const ids = await stack.redis.smembers(`es:owner-index:accounts:${owner}`);
    expect(ids.sort()).toEqual(made.sort());
    // The operator raises the cap: one more fits.
    await adminCliJson(['owner', 'account-cap', owner, '4'], stack.config.redis.url);
    expect((await addAccount(capped, { name: 'fourth', platform: 'mt5' })).status).toBe(201);
    expect((await addAccount(capped, { name: 'fifth', platform: 'mt5' })).status).toBe(409);
  });
});

describe('the account page’s bridge state', () => {
  it('online while the paper bridge long-polls; offline once it stops, before its long-poll would have ended', async () => {
    const made = await addAccount(browserA, { name: 'paper', platform: 'mt5' });
    const id = made.body.account.id as string;
    // Long-polls of 25 s (the longest the service allows): a bridge waiting in one is there.
    const { terminal } = await startPaperTerminal(stack, { id, bridgeToken: made.body.bridgeToken as string }, { waitMs: LONGEST_POLL_MS });
    try {
      await waitFor('the page to say online', async () => (await account(id)).bridge.online === true || undefined, 10_000);
      const since = Date.now();
      while (Date.now() - since < 12_000) {
        const bridge = (await account(id)).bridge;
        expect([bridge.online, bridge.connection]).toEqual([true, 'connected']);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await terminal.stop();
    }
    // Offline ONLINE_WITHIN_MS after its last call: waited for, until the bridge's own long-poll would have ended.
    // Counting that open poll as the bridge being there would keep it online past that.
    const stoppedAt = Date.now();
    await waitFor('the page to say offline', async () => (await account(id)).bridge.online === false || undefined, LONGEST_POLL_MS);
    console.log(`offline ${Date.now() - stoppedAt} ms after the bridge stopped`);
    const offline = (await account(id)).bridge;
    expect(offline).toEqual(expect.objectContaining({ connection: 'connected', lastSeenAt: expect.any(String) }));
  }, 60_000);

  it('a rotated token shows waiting for the bridge with the new token; the old token’s 401 is named on the page', async () => {
    const id = a.accounts[0]!.id;
    expect((await hello(a.accounts[0]!.bridgeToken)).status).toBe(200);
    expect((await account(id)).bridge).toEqual(expect.objectContaining({ online: true, connection: 'connected' }));
    const rotated = await asBrowser(browserA, 'POST', url(`/v1/owner/accounts/${id}/bridge-token`));
    expect((await account(id)).bridge).toEqual(expect.objectContaining({ online: false, connection: 'waiting_for_new_token', lastRefusal: null }));
    expect((await hello(a.accounts[0]!.bridgeToken)).status).toBe(401);
    expect((await account(id)).bridge.lastRefusal).toEqual({ status: 401, reason: 'old_token', message: expect.any(String), at: expect.any(String) });
    // A token that was never anyone's leaves no trace on any page.
    expect((await hello(`brg_${randomBytes(32).toString('base64url')}`)).status).toBe(401);
    expect((await hello(rotated.body.value as string)).status).toBe(200);
    expect((await account(id)).bridge).toEqual(expect.objectContaining({ online: true, connection: 'connected' }));

    // The account goes to another owner with a new token: the old owner's bridge never shows on the new owner's page.
    await adminCliJson(['account', 'set', id, '--owner', b.owner, '--new-bridge-token'], stack.config.redis.url);
    expect((await hello(rotated.body.value as string)).status).toBe(401);
    expect((await account(id, browserB)).bridge).toEqual(expect.objectContaining({ lastRefusal: null, connection: 'waiting_for_bridge' }));
  });

  it('a signal refused 412 for a bridge too old is named on the page; a signal to an offline bridge still gets its 202', async () => {
    const { f, browser: owner } = await signedInOwner(stack, [{ bridgeVersion: '1.9.0' }]);
    const id = f.accounts[0]!.id;
    const stopLimit = { secret: f.secret, action: 'buy_stop_limit', symbol: 'EURUSD', volume: 0.1, price: 1.2, stopLimitPrice: 1.21 };
    expect((await post(url(`/webhook/custom/${id}`), stopLimit)).status).toBe(412);
    const view = await account(id, owner);
    expect(view.bridge.lastRefusal).toEqual(expect.objectContaining({ status: 412, reason: 'bridge_too_old' }));
    expect(view.bridge).toEqual(expect.objectContaining({ online: false, waits: { marketEntryMs: 30_000, otherMs: 300_000 } }));
    expect((await post(url(`/webhook/custom/${id}`), { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 })).status).toBe(202);
  });
});
