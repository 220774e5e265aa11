import { Redis } from 'ioredis';
import { readDoor } from '../../src/signals/door';
import { RedisPendingStarts } from '../../src/signals/pending-starts';
import { startWorker, type RunningWorker } from '../../src/worker';
import { freePort, startRedis, waitFor, type RedisServer } from '../../support/infra';
import { get, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { temporalClient, workflowResult, type TemporalView } from '../helpers/temporal';

/**
 * The door against the real Temporal and Redis (src/signals/door.ts): it refuses only what Redis cannot hold. Signals
 * whose workflows nobody supervises (no worker) keep being accepted and handed to their bridge; a Redis near its
 * maxmemory shuts it; a Redis that cannot be read fails it closed.
 */
const buy = (f: Fixture) => ({ secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
/** Past the old door's 10 s supervision lag, which shut it with more than 40 unsupervised commands. */
const UNSUPERVISED_MS = 11_000;

describe('the door: a slow or stopped supervision does not refuse trades', () => {
  let stack: Stack;
  let f: Fixture;
  let worker: RunningWorker | undefined;
  let temporal: TemporalView;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
    temporal = await temporalClient();
    f = await seedOwner(stack.registry, [{}, {}]);
  });
  afterAll(async () => {
    await worker?.shutdown();
    await stack?.stop();
    await temporal?.close();
  });

  test('when 50 signals wait unsupervised for 11 s (no worker), then new ones are still 202 and every order was handed out; a worker then supervises each to its end', async () => {
    const bridges = f.accounts.map((a) => new ScriptedTerminal(stack.ingress.url, a.bridgeToken));
    await Promise.all(bridges.map((b) => b.hello()));
    const url = (i: number) => `${stack.ingress.url}/webhook/custom/${f.accounts[i % 2]!.id}`;
    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => post(url(i), buy(f))));
    const burstAt = Date.now();
    expect(burst.map((a) => (a.status === 202 ? 202 : `${a.status} ${a.text}`))).toEqual(Array(50).fill(202));
    const handed = (await Promise.all(bridges.map((b) => b.nextCommands(25, 10_000)))).flat();
    expect(handed.map((c) => c.signalId).sort()).toEqual(burst.map((a) => a.body.signalId as string).sort());

    await waitFor(
      'the burst to be unsupervised past the old lag',
      async () => Date.now() - burstAt >= UNSUPERVISED_MS || undefined,
      UNSUPERVISED_MS + 2_000,
      100,
    );
    const later = await post(url(0), buy(f));
    expect({ status: later.status, body: later.body }).toEqual({
      status: 202,
      body: { success: true, signalId: expect.any(String), correlationId: expect.any(String), accountsResolved: 1 },
    });
    const ready = await get(`${stack.ingress.adminUrl}/readyz`);
    expect(ready.body).toMatchObject({ status: 'ready', door: 'open' });

    // The bridges fill everything, the later signal's order too; then a worker supervises each signal to its end.
    const laterCommand = await bridges[0]!.nextCommands(1, 10_000);
    expect(laterCommand.map((c) => c.signalId)).toEqual([later.body.signalId]);
    for (const [i, bridge] of bridges.entries()) {
      const mine = [...handed, ...laterCommand].filter((c) => c.accountId === f.accounts[i]!.id);
      await bridge.report(mine.map((c, n) => ({ commandId: c.commandId, status: 'filled', ticket: `${i + 1}${n}`, price: 1.1 })));
    }
    worker = await startWorker(stack.config);
    for (const id of [...burst.map((a) => a.body.signalId as string), later.body.signalId as string])
      await workflowResult(temporal.client, `signal/${id}`, 60_000);
  }, 120_000);
});

describe('the door: Redis that cannot take the write', () => {
  let redis: RedisServer;
  let stack: Stack;
  let f: Fixture;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    stack = await startStack({ worker: false, env: { REDIS_URL: redis.url }, tuning: { door: { refreshMs: 20 } } });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    await stack?.stop();
    admin?.disconnect();
    await redis?.stop();
  });

  test('when Redis is at 90 % of its maxmemory, then new signals get 503 backpressure with Retry-After 30 and nothing is written; with room again, 202', async () => {
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))![1]);
    const keysBefore = await admin.dbsize();
    await admin.config('SET', 'maxmemory', String(Math.ceil(used / 0.95)));
    try {
      const refused = await waitFor(
        'the door to read the memory',
        async () => {
          const res = await post(url, buy(f));
          return res.status === 503 ? res : undefined;
        },
        5_000,
        20,
      );
      expect(refused.body).toEqual({ error: 'System under high load, retry later', backpressure: true });
      expect(refused.headers.get('retry-after')).toBe('30');
      const ready = await get(`${stack.ingress.adminUrl}/readyz`);
      expect(ready.body.door).toBe('redis_memory');
      // Only the refusals' own counters may have been written (the route limiter); no signal, number or command.
      const starts = stack.config.temporal.taskQueue;
      expect(await admin.exists(`es:start-inputs:{${starts}}`, `es:seq:{${f.accounts[0]!.id}}`, `es:bq:{${f.accounts[0]!.id}}`)).toBe(0);
      expect(await admin.dbsize()).toBeLessThanOrEqual(keysBefore + 3);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    const reopened = await waitFor(
      'the door to open with room again',
      async () => {
        const res = await post(url, buy(f));
        return res.status === 202 ? res : undefined;
      },
      5_000,
      20,
    );
    expect(reopened.body.success).toBe(true);
  });

  test('when Redis cannot be read at all, then the reading fails, so the door fails closed', async () => {
    const down = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    down.on('error', () => undefined);
    try {
      await expect(readDoor(down, new RedisPendingStarts(down, 'nowhere', undefined), Date.now(), 0)).rejects.toThrow();
    } finally {
      down.disconnect();
    }
  });
});
