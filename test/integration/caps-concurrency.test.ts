import { newCredential } from '../../src/registry/credentials';
import { MAX_API_KEYS_PER_OWNER } from '../../src/owners/api-keys';
import { MAX_SECRETS_PER_OWNER, MAX_TOKENS_PER_OWNER } from '../../src/owners/credentials';
import { postFrom as postFromWithin, type HttpResult } from '../../support/http';

/** A request of a concurrent burst: on a loaded machine an answer may take more than the usual 10 s; it is still an answer. */
const postFrom = (from: string, url: string, body: unknown) => postFromWithin(from, url, body, {}, 60_000);
import { waitFor } from '../../support/infra';
import { giveBackSlot, takeSlot, type Cap } from '../../src/ratelimit/caps';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { asBrowser, ownerKeyFile, setUpOwner, totp, type OwnerBrowser } from '../helpers/owner';

/**
 * Issue 25 findings 1 and 6: every cap holds under concurrency. Each test sends its requests at once (Promise.all over
 * HTTP, against the real Redis) and requires exactly the cap to pass: a cap read before the work and charged after it
 * let 171 of 200 concurrent wrong sign-ins through a cap of 20, and a count read before the insert let 40 parallel
 * creations make 36 API keys against a cap of 20.
 */
const SIGN_IN_MAX = 20;
const PREAUTH_MAX = 300;
const CALLBACKS_MAX = 5;

let stack: Stack;
let fixture: Fixture;
let browser: OwnerBrowser;
const url = (p: string) => `${stack.ingress.url}${p}`;

beforeAll(async () => {
  const keyFile = ownerKeyFile();
  stack = await startStack({
    worker: false,
    env: {
      OWNER_SECRETS_KEY_FILE: keyFile,
      DASHBOARD_SECURE_COOKIES: 'false',
      WEBHOOK_PREAUTH_IP_MAX: String(PREAUTH_MAX),
      WEBHOOK_PREAUTH_IP_WINDOW_MS: '600000',
      // A thousand requests at once from one address fit the default per-address connection cap and in-flight cap
      // (2048 each), so what answers is the cap under test.
      CALLBACK_SECRET_KEY_FILE: keyFile,
      CALLBACK_ALLOWED_ORIGINS: 'http://127.0.0.1:9',
      CALLBACK_ALLOW_HTTP: 'true',
    },
    tuning: { owners: { signInIp: { max: SIGN_IN_MAX } }, callbacks: { maxEndpointsPerOwner: CALLBACKS_MAX } },
  });
  fixture = await seedOwner(stack.registry, [{}]);
  browser = await setUpOwner(stack.ingress.url, stack.config.redis.url, fixture.owner);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

function tally(results: readonly HttpResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

const times = <T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

describe('pre-auth caps (finding 1)', () => {
  it(`200 concurrent wrong sign-ins from one address: exactly ${SIGN_IN_MAX} × 401, the rest 429`, async () => {
    const attempts = await times(200, () =>
      postFrom('127.0.1.1', url('/v1/owner/session'), { owner: fixture.owner, password: 'a-wrong-password-guess', code: '000000' }),
    );
    expect(tally(attempts)).toEqual({ 401: SIGN_IN_MAX, 429: 200 - SIGN_IN_MAX });
    const capped = attempts.find((r) => r.status === 429)!;
    expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a sign-in that succeeds gives its slot back: the cap counts failures only', async () => {
    const from = '127.0.1.2';
    const failures = await times(SIGN_IN_MAX - 1, () =>
      postFrom(from, url('/v1/owner/session'), { owner: fixture.owner, password: 'wrong-wrong', code: '000000' }),
    );
    expect(tally(failures)).toEqual({ 401: SIGN_IN_MAX - 1 });
    const ok = await postFrom(from, url('/v1/owner/session'), { owner: fixture.owner, password: browser.password, code: totp(browser.seed, 0) });
    expect(ok.status).toBe(201);
    const last = await times(3, () => postFrom(from, url('/v1/owner/session'), { owner: fixture.owner, password: 'wrong-wrong', code: '000000' }));
    expect(tally(last)).toEqual({ 401: 1, 429: 2 });
  });

  it(`1,000 concurrent wrong-secret webhooks from one address: exactly ${PREAUTH_MAX} × 401, the rest 429; its good signals are not counted`, async () => {
    const from = '127.0.1.3';
    const target = fixture.accounts[0]!.id;
    // Good traffic from the same address first (a shared sender): each is let in, and charged nothing.
    const good = await times(10, () => postFrom(from, url(`/webhook/custom/${target}`), { secret: fixture.secret, action: 'close_all' }));
    expect(tally(good)).toEqual({ 202: 10 });
    const flood = await times(1000, () => postFrom(from, url(`/webhook/custom/${target}`), { secret: newCredential('whsec'), action: 'close_all' }));
    expect(tally(flood)).toEqual({ 401: PREAUTH_MAX, 429: 1000 - PREAUTH_MAX });
    expect(flood.find((r) => r.status === 429)!.body).toEqual({ error: 'Rate limit exceeded', limit: PREAUTH_MAX, windowMs: 600000 });
    // The owner, from its own address, is untouched.
    expect((await postFrom('127.0.1.4', url(`/webhook/custom/${target}`), { secret: fixture.secret, action: 'close_all' })).status).toBe(202);
  });
});

describe('per-owner count caps (finding 6)', () => {
  const create = (path: string, body: unknown) => asBrowser(browser, 'POST', url(path), body);

  it(`40 parallel API-key creations: exactly ${MAX_API_KEYS_PER_OWNER}`, async () => {
    const made = await times(40, (i) => create('/v1/owner/api-keys', { name: `key ${i}` }));
    expect(tally(made)).toEqual({ 201: MAX_API_KEYS_PER_OWNER, 400: 40 - MAX_API_KEYS_PER_OWNER });
    expect((await asBrowser(browser, 'GET', url('/v1/owner/api-keys'))).body.apiKeys).toHaveLength(MAX_API_KEYS_PER_OWNER);
    // A revoked key frees its slot, for one more.
    const id = made.find((r) => r.status === 201)!.body.id as string;
    expect((await asBrowser(browser, 'DELETE', url(`/v1/owner/api-keys/${id}`))).status).toBe(204);
    expect(tally(await times(3, (i) => create('/v1/owner/api-keys', { name: `again ${i}` })))).toEqual({ 201: 1, 400: 2 });
  });

  for (const [path, max] of [
    ['tokens', MAX_TOKENS_PER_OWNER],
    ['secrets', MAX_SECRETS_PER_OWNER],
  ] as const) {
    it(`150 parallel ${path}: exactly ${max}; a refused one is not left behind`, async () => {
      const list = async () => (await asBrowser(browser, 'GET', url(`/v1/owner/${path}`))).body[path] as { id: string }[];
      const before = await list(); // the fixture's own, made by the import
      const room = max - before.length;
      const made = await times(150, () => create(`/v1/owner/${path}`, { accounts: [fixture.accounts[0]!.id] }));
      expect(tally(made)).toEqual({ 201: room, 400: 150 - room });
      const listed = await list();
      expect(listed).toHaveLength(max);
      expect(new Set(listed.map((c) => c.id))).toEqual(
        new Set([...before.map((c) => c.id), ...made.filter((r) => r.status === 201).map((r) => r.body.id as string)]),
      );
      const id = listed[0]!.id;
      expect((await asBrowser(browser, 'DELETE', url(`/v1/owner/${path}/${id}`))).status).toBe(204);
      expect(tally(await times(3, () => create(`/v1/owner/${path}`, { accounts: [fixture.accounts[0]!.id] })))).toEqual({ 201: 1, 400: 2 });
    });
  }

  it(`20 parallel callback endpoints: exactly ${CALLBACKS_MAX}`, async () => {
    const made = await times(20, (i) => create('/v1/owner/callbacks', { url: `http://127.0.0.1:9/outcomes/${i}` }));
    expect(made.filter((r) => r.status === 201)).toHaveLength(CALLBACKS_MAX);
    expect((await asBrowser(browser, 'GET', url('/v1/owner/callbacks'))).body.callbacks).toHaveLength(CALLBACKS_MAX);
  });
});

describe('the one check-and-charge (takeSlot)', () => {
  it('a window slot given back after its window ended makes no room in the next window', async () => {
    const cap: Cap = { kind: 'window', key: `test-caps:{${fixture.owner}}`, max: 2, windowMs: 300 };
    const old = await takeSlot(stack.redis, cap);
    if (!old.taken) throw new Error('the first slot of a window is always free');
    await waitFor('the window to end', async () => ((await stack.redis.exists(cap.key)) === 0 ? true : undefined), 5_000);
    const next = await Promise.all([takeSlot(stack.redis, cap), takeSlot(stack.redis, cap), takeSlot(stack.redis, cap)]);
    expect(next.map((t) => t.taken)).toEqual([true, true, false]);
    await giveBackSlot(stack.redis, old.slot);
    expect((await takeSlot(stack.redis, cap)).taken).toBe(false);
  });
});
