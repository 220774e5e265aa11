import { createHash } from 'node:crypto';
import { waitFor } from '../../support/infra';
import type { ServiceProcess } from '../../support/processes';
import { hellos, startConnectWorld, startLinkedConnector, type ConnectWorld } from '../helpers/ctrader-connect';
import { asBrowser, setUpOwner, type OwnerBrowser } from '../helpers/owner';
import { send } from '../../support/http';
import { pollUntilReported, post, seedOwner } from '../helpers/stack';

/**
 * Connect with cTrader over HTTP (docs/owners.md): the owner API's state / callback / link steps against the
 * stand-in for Spotware's granting-access page and token endpoint and the Open API double, the connector picking the
 * linked account up while it runs, and every bad input refused with nothing half-made.
 */

describe('Connect with cTrader', () => {
  let w: ConnectWorld;
  let owner: OwnerBrowser;
  let connector: ServiceProcess;
  const url = (p: string) => `${w.stack.ingress.url}${p}`;

  beforeAll(async () => {
    w = await startConnectWorld({ ctraderOAuth: { timeoutMs: 5000 }, owners: { accountCap: 3 } });
    owner = await setUpOwner(w.stack.ingress.url, w.stack.config.redis.url, `owner-ct-${Date.now().toString(36)}`);
    connector = await startLinkedConnector(w, 'connect');
  }, 90_000);

  afterAll(async () => {
    await connector?.stop();
    await w?.stop();
  });

  /** Begin as `who`; the state is read from the authorisation URL, as the stand-in would receive it. */
  async function begin(who: OwnerBrowser) {
    const res = await asBrowser(who, 'POST', url('/v1/owner/ctrader/authorizations'));
    expect(res.status).toBe(201);
    const authorize = new URL(res.body.authorizeUrl as string);
    return { authorize, state: authorize.searchParams.get('state')! };
  }

  /** The trader's "Allow access" on the stand-in's page, for these accounts: where the browser is sent back. */
  async function allow(state: string, ctids: number[]) {
    const form = new URLSearchParams({ redirect_uri: w.standin.redirectUrl, state });
    for (const c of ctids) form.append('ctid', String(c));
    const res = await fetch(`${w.standin.url}/my/settings/openapi/grantingaccess/allow`, { method: 'POST', body: form, redirect: 'manual' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    return { code: back.searchParams.get('code')!, state: back.searchParams.get('state')! };
  }

  const callback = (who: OwnerBrowser, body: unknown) => asBrowser(who, 'POST', url('/v1/owner/ctrader/callback'), body);
  const accountIds = async (who: OwnerBrowser) =>
    ((await asBrowser(who, 'GET', url('/v1/owner/accounts'))).body.accounts as { id: string }[]).map((a) => a.id).sort();

  let used: { code: string; state: string };

  test('when the owner authorises demo and live and picks demo, then the demo account is linked, the connector runs it and a signal fills', async () => {
    const { authorize, state } = await begin(owner);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(w.standin.authorizeUrl);
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      client_id: w.clientId,
      redirect_uri: w.standin.redirectUrl,
      scope: 'trading',
      product: 'web',
      state,
    });
    const page = await fetch(authorize);
    expect(page.status).toBe(200);
    used = await allow(state, [w.demoCtid, w.liveCtid]);
    expect(used.state).toBe(state);

    const listed = await callback(owner, used);
    expect(listed.status).toBe(200);
    expect(listed.body.accounts).toEqual([
      { ctidTraderAccountId: w.demoCtid, environment: 'demo', traderLogin: 5_550_001, broker: 'Demo Markets', linkedTo: null },
      { ctidTraderAccountId: w.liveCtid, environment: 'live', traderLogin: 5_550_002, broker: 'Live Markets', linkedTo: null },
    ]);
    // The exchange as Spotware documents it, server-side; no token in the answer to the browser.
    const exchange = w.standin.tokenRequests.at(-1)!;
    expect(exchange).toEqual({
      grant_type: 'authorization_code',
      code: used.code,
      redirect_uri: w.standin.redirectUrl,
      client_id: w.clientId,
      client_secret: w.clientSecret,
    });
    const granted = w.double.currentTokens(w.demoCtid);
    expect(listed.text).not.toContain(granted.accessToken);
    expect(listed.text).not.toContain(granted.refreshToken);
    expect(await accountIds(owner)).toEqual([]);

    const linked = await asBrowser(owner, 'POST', url('/v1/owner/ctrader/links'), { connection: listed.body.connection, accounts: [w.demoCtid] });
    expect(linked.status).toBe(201);
    expect(linked.body).toEqual({ linked: [{ accountId: `ctrader-${w.demoCtid}`, ctidTraderAccountId: w.demoCtid, environment: 'demo', created: true }] });
    const id = `ctrader-${w.demoCtid}`;

    // Sealed at rest: no token in any of the service's cTrader keys.
    const keys = await w.stack.redis.keys('es:ctrader:*');
    for (const k of keys) {
      const dump = JSON.stringify((await w.stack.redis.type(k)) === 'hash' ? await w.stack.redis.hgetall(k) : await w.stack.redis.get(k).catch(() => ''));
      expect(dump).not.toContain(granted.accessToken);
      expect(dump).not.toContain(granted.refreshToken);
    }

    // Picked up without a restart: hello, then online on the owner's page.
    await waitFor('the connector to say hello for the linked account', async () => (hellos(connector, id) > 0 ? true : undefined), 20_000);
    const account = await waitFor(
      'the account online',
      async () => {
        const a = await asBrowser(owner, 'GET', url(`/v1/owner/accounts/${id}`));
        return a.body.bridge?.online ? a.body : undefined;
      },
      15_000,
    );
    expect(account).toMatchObject({
      platform: 'ctrader',
      ctrader: { ctidTraderAccountId: w.demoCtid, environment: 'demo', traderLogin: 5_550_001, needsReauthorisation: null },
    });

    const secret = await asBrowser(owner, 'POST', url('/v1/owner/secrets'), { accounts: [id] });
    const token = await asBrowser(owner, 'POST', url('/v1/owner/tokens'), { accounts: [id] });
    const sent = await post(url(`/webhook/custom/${id}`), { secret: secret.body.value, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(sent.status).toBe(202);
    const outcome = await pollUntilReported(w.stack.ingress.url, sent.body.signalId, token.body.value, 1, 20_000);
    expect(outcome.accounts[0]).toMatchObject({ accountId: id, outcome: 'filled' });
    expect(connector.stdout() + connector.stderr()).not.toContain(w.double.currentTokens(w.demoCtid).refreshToken);
  }, 90_000);

  test('when the same state comes back again, then it is refused as used, and nothing more is linked', async () => {
    const again = await callback(owner, used);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/already used or is older than 10 minutes/);
  });

  test('when another session’s state comes back, then it is refused, and that state is spent', async () => {
    const other = await setUpOwner(w.stack.ingress.url, w.stack.config.redis.url, `owner-ct2-${Date.now().toString(36)}`);
    const { state } = await begin(other);
    const code = w.standin.issueCode([w.liveCtid]);
    const foreign = await callback(owner, { code, state });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatch(/started in another session/);
    const late = await callback(other, { code, state });
    expect(late.body.error).toMatch(/already used/);
    expect(await accountIds(other)).toEqual([]);
  }, 30_000);

  test('when the state has expired, then it is refused; a fresh state lives 10 minutes', async () => {
    const { state } = await begin(owner);
    const stateKey = `es:ctrader:oauth-state:${createHash('sha256').update(state).digest('hex')}`;
    const ttl = await w.stack.redis.ttl(stateKey);
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
    await w.stack.redis.pexpire(stateKey, 1);
    await waitFor('the state to expire', async () => ((await w.stack.redis.exists(stateKey)) === 0 ? true : undefined), 5_000);
    const res = await callback(owner, { code: w.standin.issueCode([w.liveCtid]), state });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/older than 10 minutes/);
  });

  test('when the code has expired, then the token endpoint’s 400 is a clear 400 and nothing is linked', async () => {
    const before = await accountIds(owner);
    const { state } = await begin(owner);
    w.standin.codeTtlMs = 0;
    const back = await allow(state, [w.liveCtid]).finally(() => (w.standin.codeTtlMs = 60_000));
    const res = await callback(owner, back);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/cTrader refused the authorisation code \(ACCESS_DENIED.*one minute/);
    expect(await accountIds(owner)).toEqual(before);
  });

  test('when the token endpoint does not answer, then 502 within the timeout and nothing is linked', async () => {
    const before = await accountIds(owner);
    const { state } = await begin(owner);
    const back = await allow(state, [w.liveCtid]);
    w.standin.hangTokenEndpoint = true;
    const asked = w.standin.tokenRequests.length;
    const res = await callback(owner, back).finally(() => (w.standin.hangTokenEndpoint = false));
    // The endpoint never answers: the 502 is the service's own deadline (it names it), after one request, not retries.
    expect(res.status).toBe(502);
    expect(res.body.error).toMatch(/did not answer within 5000 ms/);
    expect(w.standin.tokenRequests.length - asked).toBe(1);
    expect(await accountIds(owner)).toEqual(before);
  });

  test('when the trader allowed no account, then the empty list is a clear 400', async () => {
    const { state } = await begin(owner);
    const res = await callback(owner, await allow(state, []));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/gave access to no trading account/);
  });

  test('when an owner at the account cap links one more, or links an account linked to another owner, then 409 and nothing is made', async () => {
    const f = await seedOwner(w.stack.registry, [{}, {}, {}]);
    const full = await setUpOwner(w.stack.ingress.url, w.stack.config.redis.url, f.owner);
    const { state } = await begin(full);
    const listed = await callback(full, await allow(state, [w.demoCtid, w.liveCtid]));
    expect(listed.status).toBe(200);
    const atCap = await asBrowser(full, 'POST', url('/v1/owner/ctrader/links'), { connection: listed.body.connection, accounts: [w.liveCtid] });
    expect(atCap.status).toBe(409);
    expect(atCap.body.error).toMatch(/at most 3/);
    const taken = await asBrowser(full, 'POST', url('/v1/owner/ctrader/links'), { connection: listed.body.connection, accounts: [w.demoCtid] });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatch(/linked to another owner/);
    expect(await accountIds(full)).toEqual(f.accounts.map((a) => a.id).sort());
    expect(await w.stack.redis.exists(`es:account:ctrader-${w.liveCtid}`)).toBe(0);
  }, 30_000);

  test('when an owner API key starts the flow, then 403: the state is bound to a dashboard session', async () => {
    const key = await asBrowser(owner, 'POST', url('/v1/owner/api-keys'), { name: 'script' });
    const res = await send('POST', url('/v1/owner/ctrader/authorizations'), undefined, { authorization: `Bearer ${key.body.value}` });
    expect(res.status).toBe(403);
  });

  test('when the trader revokes access, then the account needs re-authorisation; connecting again clears it and the connector runs it again', async () => {
    const id = `ctrader-${w.demoCtid}`;
    const before = hellos(connector, id);
    w.double.revoke(w.demoCtid);
    const flagged = await waitFor(
      'needs re-authorisation on the account',
      async () => {
        const a = await asBrowser(owner, 'GET', url(`/v1/owner/accounts/${id}`));
        return a.body.ctrader?.needsReauthorisation ?? undefined;
      },
      20_000,
    );
    expect(flagged).toMatchObject({ reason: 'CH_ACCESS_TOKEN_INVALID' });

    const { state } = await begin(owner);
    const listed = await callback(owner, await allow(state, [w.demoCtid]));
    expect(listed.body.accounts).toEqual([expect.objectContaining({ ctidTraderAccountId: w.demoCtid, linkedTo: id })]);
    const relinked = await asBrowser(owner, 'POST', url('/v1/owner/ctrader/links'), { connection: listed.body.connection, accounts: [w.demoCtid] });
    expect(relinked.body.linked).toEqual([{ accountId: id, ctidTraderAccountId: w.demoCtid, environment: 'demo', created: false }]);
    const after = await asBrowser(owner, 'GET', url(`/v1/owner/accounts/${id}`));
    expect(after.body.ctrader.needsReauthorisation).toBeNull();
    await waitFor('the connector to run the account again', async () => (hellos(connector, id) > before ? true : undefined), 20_000);
  }, 60_000);
});
