import { get, post, seedOwner, startStack, type Stack } from '../helpers/stack';

/** Every status code of spec §4.1/§7 on the webhook, each with the body shape of §2.5. */
describe('webhook contract', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  const url = (accountId?: string) => `${stack.ingress.url}/webhook/custom${accountId ? `/${accountId}` : ''}`;
  const buy = (secret: string, extra: Record<string, unknown> = {}) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, ...extra });

  test('when TradingView posts JSON as text/plain, then it is accepted', async () => {
    const f = await seedOwner(stack.registry);
    const res = await fetch(url(f.accounts[0]!.id), {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: JSON.stringify(buy(f.secret)),
    });
    expect(res.status).toBe(202);
  });

  test('when the body is exactly 64 KB it passes; one byte more is 413 with a correlationId', async () => {
    const f = await seedOwner(stack.registry);
    // Padded with JSON whitespace: meta is bounded to 4 KB, so no field can carry the bulk of a valid 64 KB body.
    const sized = (bytes: number) => {
      const skeleton = JSON.stringify(buy(f.secret));
      return `${skeleton.slice(0, -1)}${' '.repeat(bytes - skeleton.length)}}`;
    };
    const exact = sized(65_536);
    expect(Buffer.byteLength(exact)).toBe(65_536);
    expect((await post(url(f.accounts[0]!.id), exact)).status).toBe(202);
    const over = sized(65_537);
    expect(Buffer.byteLength(over)).toBe(65_537);
    const res = await post(url(f.accounts[0]!.id), over);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: expect.stringMatching(/64 KB/), correlationId: res.headers.get('x-request-id') });
  });

  test.each([
    ['malformed JSON', '{"secret": "x", '],
    ['a top-level array', '[]'],
    ['a top-level string', '"buy"'],
    ['null', 'null'],
    ['an empty body', ''],
  ])('when the body is %s, then 400 without a correlationId', async (_name, body) => {
    const res = await post(url(), body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
    expect(res.body.correlationId).toBeUndefined();
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  test('when an unknown top-level field is sent, then 400 names it', async () => {
    const f = await seedOwner(stack.registry);
    const res = await post(url(f.accounts[0]!.id), buy(f.secret, { lots: 1 }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/lots/);
  });

  test('when volume is above 100 lots, then 400; at 100 it is accepted', async () => {
    const f = await seedOwner(stack.registry);
    expect((await post(url(f.accounts[0]!.id), buy(f.secret, { volume: 100.01 }))).status).toBe(400);
    expect((await post(url(f.accounts[0]!.id), buy(f.secret, { volume: 100 }))).status).toBe(202);
  });

  test('when the per-account URL names an unknown account or one the secret does not link, then 401 (no existence leak)', async () => {
    const f = await seedOwner(stack.registry);
    const other = await seedOwner(stack.registry);
    const unknown = await post(url('acc-does-not-exist'), buy(f.secret));
    const unlinked = await post(url(other.accounts[0]!.id), buy(f.secret));
    expect(unknown.status).toBe(401);
    expect(unlinked.status).toBe(401);
    expect(unknown.body.error).toBe(unlinked.body.error);
    expect(unlinked.body.correlationId).toBe(unlinked.headers.get('x-request-id'));
  });

  test('when the account is locked or not entitled, then 403', async () => {
    const f = await seedOwner(stack.registry, [{ status: 'locked' }, { entitled: false }]);
    for (const a of f.accounts) {
      const res = await post(url(a.id), buy(f.secret));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: expect.any(String), correlationId: res.headers.get('x-request-id') });
    }
  });

  test('when the account is a copy-only master, then 409', async () => {
    const f = await seedOwner(stack.registry, [{ type: 'copy_master' }]);
    const res = await post(url(f.accounts[0]!.id), buy(f.secret));
    expect(res.status).toBe(409);
    expect(res.body.correlationId).toBe(res.headers.get('x-request-id'));
  });

  test('when the bridge is too old for a stop-limit entry, or the venue has none, then 412; a recent bridge is 202', async () => {
    const f = await seedOwner(stack.registry, [{ bridgeVersion: '1.9.0' }, { venue: { stopLimit: false, modifyPending: true } }, { bridgeVersion: '2.0.0' }]);
    const stopLimit = { secret: f.secret, action: 'buy_stop_limit', symbol: 'EURUSD', volume: 0.1, price: 1.2, stopLimitPrice: 1.21 };
    const old = await post(url(f.accounts[0]!.id), stopLimit);
    expect(old.status).toBe(412);
    expect(old.body.error).toMatch(/update the bridge/);
    expect((await post(url(f.accounts[1]!.id), stopLimit)).status).toBe(412);
    expect((await post(url(f.accounts[2]!.id), stopLimit)).status).toBe(202);
    // On the broadcast URL the accounts that cannot run it are skipped.
    const broadcast = await post(url(), stopLimit);
    expect(broadcast.status).toBe(202);
    expect(broadcast.body.accountsResolved).toBe(1);
  });

  test('when the registry holds a corrupt record, then 500 with a correlationId and no internals', async () => {
    const f = await seedOwner(stack.registry);
    await stack.redis.set(`es:account:${f.accounts[0]!.id}`, '{not json');
    // Other test files list every account of the shared Redis: leave no corrupt record behind.
    const res = await post(url(f.accounts[0]!.id), buy(f.secret)).finally(() =>
      stack.redis.multi().del(`es:account:${f.accounts[0]!.id}`).srem('es:accounts', f.accounts[0]!.id).exec(),
    );
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: expect.stringMatching(/safe to retry/), correlationId: res.headers.get('x-request-id') });
    expect(res.text).not.toMatch(/JSON|stack|at /);
  });

  test('when an X-Request-ID is sent, then it is echoed and used as the correlationId; a malformed one is replaced', async () => {
    const f = await seedOwner(stack.registry);
    const res = await post(url(f.accounts[0]!.id), buy(f.secret), { 'x-request-id': 'tv-alert-42' });
    expect(res.headers.get('x-request-id')).toBe('tv-alert-42');
    expect(res.body.correlationId).toBe('tv-alert-42');
    const bad = await post(url(f.accounts[0]!.id), buy(f.secret), { 'x-request-id': 'x'.repeat(300) });
    expect(bad.headers.get('x-request-id')).toMatch(/^req_/);
  });

  test('when an unknown path is requested, then 404 JSON', async () => {
    const res = await get(`${stack.ingress.url}/nope`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found' });
  });
});
