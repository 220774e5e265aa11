import { createHash, randomBytes } from 'node:crypto';
import { newCredential } from '../../src/registry/credentials';
import { postFrom as postFromWithin, type HttpResult } from '../../support/http';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/** A request of a concurrent burst: on a loaded machine an answer may take more than the usual 10 s; it is still an answer. */
const postFrom = (from: string, url: string, body: unknown) => postFromWithin(from, url, body, {}, 60_000);

/**
 * Issue 12 item 4: nobody can spend an account's or a secret's limiter budget without its secret, and nothing an
 * unauthenticated caller sends names a Redis key. The trader posts from 127.0.0.1, attackers from other loopback
 * addresses, so the service sees them as different clients.
 */
const TRADER = '127.0.0.1';
const ROUTE_MAX = 120;
const PREAUTH_MAX = 200;

describe('the webhook before authentication', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      worker: false,
      tuning: { limits: { route: { max: ROUTE_MAX, windowMs: 60_000 } } },
      env: {
        WEBHOOK_PREAUTH_IP_MAX: String(PREAUTH_MAX),
        WEBHOOK_PREAUTH_IP_WINDOW_MS: '60000',
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const url = (accountId?: string) => `${stack.ingress.url}/webhook/custom${accountId === undefined ? '' : `/${encodeURIComponent(accountId)}`}`;
  // A close_all needs no idempotency key and no worker answers it here: the 202 needs only Temporal to take the start.
  const signal = (secret?: unknown) => ({ ...(secret === undefined ? {} : { secret }), action: 'close_all' });

  async function allKeys(): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await stack.redis.scan(cursor, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  }

  test(`when ${ROUTE_MAX + 10} unauthenticated POSTs hit an account's URL, then the owner's valid signal still gets 202; past ${PREAUTH_MAX} the sender gets the route limiter's 429`, async () => {
    const owner = await seedOwner(stack.registry);
    const other = await seedOwner(stack.registry);
    const target = owner.accounts[0]!.id;
    const attacker = '127.0.0.2';
    const attempts = [
      () => signal(), // no secret
      () => signal(newCredential('whsec')), // a secret that does not exist
      () => signal(other.secret), // a real secret of another owner, which does not link this account
      () => signal('short'), // not even the shape of a secret
    ];
    const statuses: Record<number, number> = {};
    for (let i = 0; i < ROUTE_MAX + 10; i++) {
      const res = await postFrom(attacker, url(target), attempts[i % attempts.length]!());
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
    expect(statuses).toEqual({ 401: ROUTE_MAX + 10 });

    const valid = await postFrom(TRADER, url(target), signal(owner.secret));
    expect(valid.status).toBe(202);

    // The same address keeps failing: once its failures fill the pre-auth cap, it gets the route limiter's body.
    let last;
    for (let i = ROUTE_MAX + 10; i < PREAUTH_MAX; i++) last = await postFrom(attacker, url(target), signal(newCredential('whsec')));
    expect(last!.status).toBe(401);
    const capped = await postFrom(attacker, url(target), signal(newCredential('whsec')));
    expect(capped.status).toBe(429);
    expect(capped.body).toEqual({ error: 'Rate limit exceeded', limit: PREAUTH_MAX, windowMs: 60000 });
    expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(0);
    // Only failures are capped: a real secret from the same address is still accepted.
    expect((await postFrom(attacker, url(target), signal(owner.secret))).status).toBe(202);

    // The owner, from its own address, is untouched by all of it.
    expect((await postFrom(TRADER, url(target), signal(owner.secret))).status).toBe(202);
  });

  test('when random account ids and secrets are posted, then Redis gets no key named after any of them, only one key of pre-auth slots for the address', async () => {
    const prefix = stack.config.limits.keyPrefix;
    const attacker = '127.0.0.3';
    const before = new Set((await allKeys()).filter((k) => k.startsWith(prefix)));
    const ids = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? `acc-probe-${randomBytes(6).toString('hex')}` : `{probe}${randomBytes(6).toString('hex')}*`,
    );
    const secrets = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? newCredential('whsec') : `probe-${randomBytes(120).toString('hex')}`));
    for (let i = 0; i < ids.length; i++) {
      expect((await postFrom(attacker, url(ids[i]), signal(secrets[i]))).status).toBe(401);
      expect((await postFrom(attacker, url(), signal(secrets[i]))).status).toBe(401);
    }

    const after = await allKeys();
    const hashes = secrets.map((s) => createHash('sha256').update(s).digest('hex'));
    const named = after.filter((k) => [...ids, ...secrets, ...hashes].some((s) => k.includes(s)));
    expect(named).toEqual([]);
    const added = after.filter((k) => k.startsWith(prefix) && !before.has(k));
    expect(added).toEqual([`${prefix}preauth-slots:{${attacker}}`]);
  });
});

/**
 * Limits that do not refuse genuine bursts: at a bar close TradingView posts every trader's alerts from a handful of addresses at the same
 * second. Only failures are charged to an address, after they failed, checked and charged in one step; a request
 * that authenticates takes nothing from the cap, however many are in flight. The per-address connection cap and the
 * in-flight cap keep their defaults here: a thousand good alerts from one address fit them.
 */
describe('the pre-auth cap at a bar close', () => {
  const FAILURES_MAX = 5;
  const GOOD = 1000;
  let stack: Stack;
  let f: Fixture;
  let other: Fixture;
  beforeAll(async () => {
    stack = await startStack({
      worker: false,
      env: {
        WEBHOOK_PREAUTH_IP_MAX: String(FAILURES_MAX),
        WEBHOOK_PREAUTH_IP_WINDOW_MS: '600000',
      },
    });
    f = await seedOwner(stack.registry);
    other = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const url = () => `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
  const good = () => ({ secret: f.secret, action: 'close_all' });
  // The failures of today, each a 401: no secret, one that does not exist, another owner's (it does not link the account).
  const bad = (i: number) =>
    [{ action: 'close_all' }, { secret: newCredential('whsec'), action: 'close_all' }, { secret: other.secret, action: 'close_all' }][i % 3]!;
  const times = <T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: n }, (_, i) => make(i)));
  const tally = (results: readonly HttpResult[]) => results.reduce<Record<number, number>>((out, r) => ({ ...out, [r.status]: (out[r.status] ?? 0) + 1 }), {});

  test(`when ${GOOD} authenticated alerts come from one address at once, with a failure cap of ${FAILURES_MAX}, then every one is answered 202 and none is charged`, async () => {
    const from = '127.0.2.1';
    const answers = await times(GOOD, () => postFrom(from, url(), good()));
    expect(tally(answers)).toEqual({ 202: GOOD });
    // The address's whole failure budget is still there.
    const failures = [];
    for (let i = 0; i <= FAILURES_MAX; i++) failures.push((await postFrom(from, url(), bad(i))).status);
    expect(failures).toEqual([...Array<number>(FAILURES_MAX).fill(401), 429]);
  }, 120_000);

  test(`when bad secrets come from one address one by one, then exactly ${FAILURES_MAX} are answered 401 and the rest 429 with Retry-After; a broken body counts`, async () => {
    const from = '127.0.2.2';
    const statuses = [];
    for (let i = 0; i < FAILURES_MAX + 5; i++) statuses.push((await postFrom(from, url(), bad(i))).status);
    expect(statuses).toEqual([...Array<number>(FAILURES_MAX).fill(401), ...Array<number>(5).fill(429)]);
    const capped = await postFrom(from, url(), bad(1));
    expect(capped.body).toEqual({ error: 'Rate limit exceeded', limit: FAILURES_MAX, windowMs: 600000 });
    expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(0);

    // A body too broken to hold a secret is a failure too.
    const broken = '127.0.2.3';
    for (let i = 0; i < FAILURES_MAX - 1; i++) expect((await postFrom(broken, url(), bad(i))).status).toBe(401);
    expect((await postFrom(broken, url(), '{"secret": ')).status).toBe(400);
    expect((await postFrom(broken, url(), bad(0))).status).toBe(429);
  });

  test(`when 300 bad secrets come from one address at once, then exactly ${FAILURES_MAX} are answered 401 and the rest 429`, async () => {
    const flood = await times(300, (i) => postFrom('127.0.2.4', url(), bad(i)));
    expect(tally(flood)).toEqual({ 401: FAILURES_MAX, 429: 300 - FAILURES_MAX });
    expect(flood.find((r) => r.status === 429)!.body).toEqual({ error: 'Rate limit exceeded', limit: FAILURES_MAX, windowMs: 600000 });
  }, 120_000);

  test('when failures from an address go past its cap, then its good requests are still answered 202, and good requests never fill the cap', async () => {
    const from = '127.0.2.5';
    const flood = await times(100, (i) => postFrom(from, url(), bad(i)));
    expect(tally(flood)).toEqual({ 401: FAILURES_MAX, 429: 100 - FAILURES_MAX });
    // Other traders' alerts from the same address (TradingView's) are not refused for those failures.
    expect(tally(await times(50, () => postFrom(from, url(), good())))).toEqual({ 202: 50 });

    // Failures and good alerts of one address interleaved: only the failures count.
    const mixed = '127.0.2.6';
    for (let i = 0; i < FAILURES_MAX - 1; i++) expect((await postFrom(mixed, url(), bad(i))).status).toBe(401);
    expect(tally(await times(200, () => postFrom(mixed, url(), good())))).toEqual({ 202: 200 });
    expect((await postFrom(mixed, url(), bad(1))).status).toBe(401);
    expect((await postFrom(mixed, url(), bad(2))).status).toBe(429);
  }, 120_000);
});
