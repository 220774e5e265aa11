import { post, get, seedOwner, startStack, type Stack } from '../helpers/stack';
import { hashCredential } from '../../src/registry/credentials';

/** Spec §8: the route limiter, the fairness throttle, and the poll's caps, each with its exact 429 body. */
describe('rate limits', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      tuning: {
        limits: {
          route: { max: 5, windowMs: 60_000 },
          fairnessAccount: { max: 3, windowMs: 60_000 },
          fairnessBroadcast: { max: 2, windowMs: 60_000 },
          pollAccount: { max: 3 },
          pollIp: { max: 1000 },
        },
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });
  const buy = (secret: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });

  test('when one account gets more signals than its fairness share, then 429 account_write with message and correlationId', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await post(url, buy(f.secret));
      statuses.push(last.status);
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
    expect(last!.body).toEqual({
      error: 'rate_limit_exceeded',
      scope: 'account_write',
      message: expect.any(String),
      limit: 3,
      windowMs: 60000,
      correlationId: last!.headers.get('x-request-id'),
    });
    expect(last!.headers.get('retry-after')).toBe('60');
  });

  test('when one owner broadcasts more than its share, then 429 broadcast', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const url = `${stack.ingress.url}/webhook/custom`;
    const statuses = [];
    let last;
    for (let i = 0; i < 3; i++) {
      last = await post(url, buy(f.secret));
      statuses.push(last.status);
    }
    expect(statuses).toEqual([202, 202, 429]);
    expect(last!.body).toMatchObject({ error: 'rate_limit_exceeded', scope: 'broadcast', correlationId: expect.any(String) });
  });

  test('when one target account gets more requests than the route limiter allows, then 429 with limit and windowMs, RateLimit headers and Retry-After, no correlationId', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    // Bad requests count too: the route limiter runs before validation.
    const statuses = [];
    let last;
    for (let i = 0; i < 6; i++) {
      last = await post(url, { secret: f.secret, action: 'nope' });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
    expect(last!.body).toEqual({ error: 'Rate limit exceeded', limit: 5, windowMs: 60000 });
    expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(last!.headers.get('ratelimit-policy') ?? last!.headers.get('ratelimit')).toBeTruthy();
  });

  test('when the broadcast URL is hammered with one secret, then the route limiter keys on that secret', async () => {
    const f = await seedOwner(stack.registry, [{}]);
    const g = await seedOwner(stack.registry, [{}]);
    const url = `${stack.ingress.url}/webhook/custom`;
    for (let i = 0; i < 5; i++) await post(url, { secret: f.secret, action: 'nope' });
    expect((await post(url, { secret: f.secret, action: 'nope' })).status).toBe(429);
    // Another secret from the same address is not affected.
    expect((await post(url, { secret: g.secret, action: 'nope' })).status).toBe(400);
  });

  test('when one account URL is hammered, then the route limiter keys on the account: the same secret elsewhere, and a second secret there, are counted apart', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [a, b] = [f.accounts[0]!.id, f.accounts[1]!.id];
    // A second secret of the same owner, linking account a too: the account's key comes before either secret's.
    const second = `whsec_${'s'.repeat(40)}${a.slice(-8)}`;
    await stack.registry.putSecret({ hash: hashCredential(second), owner: f.owner, accounts: [a] });
    const at = (id?: string) => `${stack.ingress.url}/webhook/custom${id ? `/${id}` : ''}`;
    for (let i = 0; i < 5; i++) expect((await post(at(a), { secret: f.secret, action: 'nope' })).status).toBe(400);
    const over = await post(at(a), { secret: second, action: 'nope' });
    expect({ status: over.status, body: over.body }).toEqual({ status: 429, body: { error: 'Rate limit exceeded', limit: 5, windowMs: 60000 } });
    // The secret's own budget (the broadcast URL) and its other account's are untouched.
    expect((await post(at(b), { secret: f.secret, action: 'nope' })).status).toBe(400);
    expect((await post(at(), { secret: f.secret, action: 'nope' })).status).toBe(400);
  });

  test('when an owner broadcasts past its share through two secrets, then the throttle keys on the owner, with its exact message; another owner is untouched', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const g = await seedOwner(stack.registry, [{}]);
    const second = `whsec_${'t'.repeat(40)}${f.owner.slice(-8)}`;
    await stack.registry.putSecret({ hash: hashCredential(second), owner: f.owner, accounts: f.accounts.map((x) => x.id) });
    const url = `${stack.ingress.url}/webhook/custom`;
    expect((await post(url, buy(f.secret))).status).toBe(202);
    expect((await post(url, buy(second))).status).toBe(202);
    const over = await post(url, buy(second));
    expect({ status: over.status, body: over.body }).toEqual({
      status: 429,
      body: {
        error: 'rate_limit_exceeded',
        scope: 'broadcast',
        message: 'Too many broadcast signals for this owner; slow down and retry later',
        limit: 2,
        windowMs: 60000,
        correlationId: over.headers.get('x-request-id'),
      },
    });
    expect((await post(url, buy(f.secret))).status).toBe(429);
    expect((await post(url, buy(g.secret))).status).toBe(202);
    // The per-account URL is another scope (account_write), keyed on the account.
    expect((await post(`${url}/${f.accounts[0]!.id}`, buy(f.secret))).status).toBe(202);
  });

  test('when a token polls more than the per-account read cap, then 429 account_read with limit and windowMs', async () => {
    const f = await seedOwner(stack.registry);
    const poll = () => get(`${stack.ingress.url}/v1/signals/sig_0123456789abcdef0123456789abcdef`, { authorization: `Bearer ${f.token}` });
    const statuses = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await poll();
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(last!.body).toEqual({ error: 'rate_limit_exceeded', scope: 'account_read', message: expect.any(String), limit: 3, windowMs: 60000 });
  });

  test('when two tokens read one account, then the read cap counts that account across both, in one window', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [a, b] = [f.accounts[0]!.id, f.accounts[1]!.id];
    const onlyB = 'tok_' + 'b'.repeat(40);
    await stack.registry.putToken({ hash: hashCredential(onlyB), owner: f.owner, accounts: [b], suspendedUntil: null });
    const poll = (token: string) => get(`${stack.ingress.url}/v1/signals/sig_0123456789abcdef0123456789abcdef`, { authorization: `Bearer ${token}` });
    expect((await poll(onlyB)).status).toBe(200);
    expect((await poll(onlyB)).status).toBe(200);
    // The token for both: a at 1, b at 3 (the limit), then b at 4.
    expect((await poll(f.token)).status).toBe(200);
    const over = await poll(f.token);
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ scope: 'account_read', limit: 3 });
    expect(a).not.toBe(b);
  });

  test('when a token is suspended, then 403 token_suspended with suspendedUntil; after it, the token works again', async () => {
    const f = await seedOwner(stack.registry);
    const until = new Date(Date.now() + 3600_000).toISOString();
    await stack.registry.putToken({ hash: hashCredential(f.token), owner: f.owner, accounts: [f.accounts[0]!.id], suspendedUntil: until });
    const res = await get(`${stack.ingress.url}/v1/signals/sig_0123456789abcdef0123456789abcdef`, { authorization: `Bearer ${f.token}` });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'token_suspended', suspendedUntil: until });
    await stack.registry.putToken({
      hash: hashCredential(f.token),
      owner: f.owner,
      accounts: [f.accounts[0]!.id],
      suspendedUntil: new Date(Date.now() - 1000).toISOString(),
    });
    expect((await get(`${stack.ingress.url}/v1/signals/sig_0123456789abcdef0123456789abcdef`, { authorization: `Bearer ${f.token}` })).status).toBe(200);
  });
});

describe('the poll pre-auth per-IP cap', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false, tuning: { limits: { pollIp: { max: 3, windowMs: 60_000 } } } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('when one address polls more than the cap, even without a token, then 429 scope ip', async () => {
    const statuses = [];
    let last;
    for (let i = 0; i < 4; i++) {
      last = await get(`${stack.ingress.url}/v1/signals/sig_x`);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(last!.body).toMatchObject({ error: 'rate_limit_exceeded', scope: 'ip' });
  });
});
