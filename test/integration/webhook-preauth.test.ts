import { createHash, randomBytes } from 'node:crypto';
import { newCredential } from '../../src/registry/credentials';
import { postFrom } from '../../support/http';
import { seedOwner, startStack, type Stack } from '../helpers/stack';

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
      env: {
        ROUTE_LIMIT_MAX: String(ROUTE_MAX),
        ROUTE_LIMIT_WINDOW_MS: '60000',
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
    // Capped before any lookup, even with a real secret: this address has used up its tries.
    expect((await postFrom(attacker, url(target), signal(owner.secret))).status).toBe(429);

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
