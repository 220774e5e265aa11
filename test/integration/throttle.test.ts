import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { FIXED_WINDOW_HIT_EACH, RedisThrottle } from '../../src/ratelimit/fairness';
import { testEnv } from '../../support/env';

/**
 * The fixed-window counters against the real Redis: the poll's one-round-trip count over many accounts agrees with
 * counting them one by one, and survives a Redis that has forgotten its scripts without counting anyone twice.
 */
describe('the fairness throttle on Redis', () => {
  let redis: Redis;
  const limits = { max: 3, windowMs: 60_000 };
  const throttle = () => new RedisThrottle(redis, { account_write: limits, broadcast: limits, account_read: limits }, `test-throttle:${randomUUID()}:`);

  beforeAll(() => {
    redis = new Redis(testEnv().redisUrl, { connectionName: 'throttle-test' });
  });
  afterAll(async () => {
    await redis.quit();
  });

  test('when a poll counts many accounts at once, then each is counted once, in order, against its own window', async () => {
    const t = throttle();
    const accounts = Array.from({ length: 200 }, (_, i) => `acc-${i}`);
    await t.hit('account_read', 'acc-7');
    await t.hit('account_read', 'acc-7');
    await t.hit('account_read', 'acc-9');
    await t.hit('account_read', 'acc-9');
    await t.hit('account_read', 'acc-9');
    const hits = await t.hitEach('account_read', accounts);
    expect(hits).toHaveLength(200);
    expect(hits.filter((h) => !h.allowed)).toHaveLength(1);
    expect(hits[7]).toEqual({ allowed: true, limit: 3, windowMs: 60_000 }); // the third read of acc-7
    expect(hits[9]).toEqual({ allowed: false, limit: 3, windowMs: 60_000 }); // the fourth of acc-9
    // The counters are the same ones a single hit uses: acc-7 is now at its limit.
    expect((await t.hit('account_read', 'acc-7')).allowed).toBe(false);
    expect((await t.hit('account_read', 'acc-8')).allowed).toBe(true);
  });

  test('when Redis has forgotten the script (a restart), then it is loaded again and nobody is counted twice', async () => {
    const t = throttle();
    await redis.script('FLUSH');
    expect(await redis.script('EXISTS', createHash('sha1').update(FIXED_WINDOW_HIT_EACH).digest('hex'))).toEqual([0]);
    const first = await t.hitEach('account_read', ['a', 'b']);
    expect(first.map((h) => h.allowed)).toEqual([true, true]);
    await t.hitEach('account_read', ['a', 'b']);
    const third = await t.hitEach('account_read', ['a', 'b', 'c']);
    expect(third.map((h) => h.allowed)).toEqual([true, true, true]);
    const fourth = await t.hitEach('account_read', ['a', 'c']);
    expect(fourth.map((h) => h.allowed)).toEqual([false, true]);
  });

  test('when a token grants more accounts than one script run counts, then every one is counted once, in order', async () => {
    const t = throttle();
    const accounts = Array.from({ length: 1201 }, (_, i) => `acc-${i}`);
    await t.hit('account_read', 'acc-1100');
    await t.hit('account_read', 'acc-1100');
    await t.hit('account_read', 'acc-1100');
    const hits = await t.hitEach('account_read', accounts);
    expect(hits).toHaveLength(1201);
    expect(hits.flatMap((h, i) => (h.allowed ? [] : [i]))).toEqual([1100]);
    const again = await t.hitEach('account_read', accounts);
    expect(again.flatMap((h, i) => (h.allowed ? [] : [i]))).toEqual([1100]);
    // Each account was counted exactly twice: its third read passes, its fourth does not (first and last batch).
    for (const account of ['acc-0', 'acc-1200']) {
      expect((await t.hit('account_read', account)).allowed).toBe(true);
      expect((await t.hit('account_read', account)).allowed).toBe(false);
    }
  });

  test('when a token grants no account, then nothing is counted and nothing is refused', async () => {
    expect(await throttle().hitEach('account_read', [])).toEqual([]);
  });
});
