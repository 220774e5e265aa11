import path from 'node:path';
import { startRedis, waitFor, type RedisServer } from '../../support/infra';
import { ensureBuilt, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import {
  commandIdOf,
  httpGet,
  httpPost,
  importRegistry,
  makeRegistry,
  ordersByCommand,
  pollUntilReported,
  runBounded,
  scenarioDir,
  tally,
  waitForOrders,
  writeRegistryFile,
} from './kit';
import { MARKET_FILL } from '../helpers/poll-items';

/**
 * Fault injection: Redis (registry, limiter counters, bridge queues) goes away while the ingress, the worker and the
 * paper bridge run, and comes back empty (the scenario's redis-server has no persistence, like a cache node that was
 * replaced). The scenario has a redis-server of its own, so the run's shared one is never stopped. Temporal is the
 * run's shared server (it stays up).
 */

const OUTAGE_REQUESTS = 20;

const reg = makeRegistry('rdown', 2);
const [mt5] = reg.accounts as [(typeof reg.accounts)[0]];

describe('Redis stops while the service runs, and comes back empty', () => {
  let redis: RedisServer | undefined;
  let stack: ProcessStack | undefined;
  let env: Record<string, string>;
  let registryFile: string;
  let ledgerFile: string;

  beforeAll(async () => {
    ensureBuilt();
    const dir = scenarioDir(reg.tag);
    ledgerFile = path.join(dir, 'ledger.jsonl');
    registryFile = writeRegistryFile(dir, 'registry.json', reg);
    redis = await startRedis();
    env = serviceEnv({ REDIS_URL: redis.url });
    await importRegistry(registryFile, env);
    // Short long-polls, so the bridge finds out about the outage within seconds rather than at the end of a 20 s poll.
    stack = await startProcessStack({ registryFile, ledgerFile, env: { REDIS_URL: redis.url }, bridgeArgs: ['--wait-ms', '2000'] });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  const describeAll = () =>
    stack!
      .all()
      .map((p) => p.describe())
      .join('\n');
  const buy = (i: number) => ({ secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01, idempotencyKey: `${reg.tag}-${i}` });

  async function acceptedAndFilled(i: number, deadlineMs: number) {
    // Bounded: the ingress reconnects to Redis by itself (backoff up to 1 s); until then it fails closed.
    const res = await waitFor(
      'a signal to be accepted (202)',
      async () => {
        const r = await httpPost(`${stack!.ingress.url}/webhook/custom/${mt5.id}`, buy(i));
        if (r.status !== 202 && r.status !== 503) throw new Error(`webhook answered ${r.status}: ${r.text}`);
        return r.status === 202 ? r : undefined;
      },
      deadlineMs,
      100,
    );
    const signalId = res.body.signalId as string;
    const commandId = commandIdOf(signalId, mt5.id);
    await waitForOrders(ledgerFile, [commandId], 30_000, describeAll);
    const outcome = await pollUntilReported(() => stack!.ingress.url, reg.token, [signalId], { deadlineMs: 30_000, describe: describeAll });
    const orders = ordersByCommand(ledgerFile).get(commandId)!;
    expect(orders.map((l) => l.op)).toEqual(['open']);
    expect(outcome.get(signalId)?.accounts).toEqual([
      { accountId: mt5.id, outcome: 'filled', ticket: orders[0]!.ticket, reason: null, occurredAt: expect.any(String), ...MARKET_FILL },
    ]);
    return signalId;
  }

  test(
    'when Redis stops, then every webhook answer is 503 service_unavailable with Retry-After while Redis is still down and no process crashes; ' +
      'when it starts again empty and the registry is re-imported, then a new signal gets 202 and is filled without any restart',
    async () => {
      const before = await acceptedAndFilled(0, 10_000);

      await redis!.stop();
      const outageStarted = Date.now();
      // Mixed requests, as callers would send them: per-account and broadcast URLs, with and without a key.
      const answers = await runBounded({
        count: OUTAGE_REQUESTS,
        concurrency: 2,
        deadlineMs: 30_000,
        send: (i) => ({
          meta: null,
          request: () =>
            i % 2 === 0
              ? httpPost(`${stack!.ingress.url}/webhook/custom/${mt5.id}`, buy(100 + i))
              : httpPost(`${stack!.ingress.url}/webhook/custom`, { secret: reg.secret, action: 'sell', symbol: 'GBPUSD', volume: 0.01 }),
        }),
      });
      const poll = await httpGet(`${stack!.ingress.url}/v1/signals/${before}`, { authorization: `Bearer ${reg.token}` });
      const health = await httpGet(`${stack!.ingress.url}/healthz`);
      const ready = await httpGet(`${stack!.ingress.adminUrl}/readyz`);

      // Every process noticed the outage and is still running: the bridge cannot say hello or poll, the worker's
      // Redis connection logs it, and nothing exited.
      await waitFor(
        'the bridge and the worker to notice that Redis is gone',
        async () =>
          stack!.bridge.jsonLines('stderr').some((l) => l.event === 'connection_error' && Date.parse(String(l.time)) >= outageStarted) &&
          stack!.worker.jsonLines('stdout').some((l) => l.msg === 'redis unavailable'),
        15_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${describeAll()}`);
      });
      for (const p of stack!.all()) expect({ name: p.name, running: p.running, spawns: p.spawns }).toEqual({ name: p.name, running: true, spawns: 1 });

      console.log(
        `[fault] Redis outage: ${answers.length} webhook answers ${JSON.stringify(tally(answers, (a) => a.status))} in ` +
          `${Math.min(...answers.map((a) => a.ms))}-${Math.max(...answers.map((a) => a.ms))} ms; poll ${poll.status}; ` +
          `healthz ${health.status}, readyz ${ready.status}`,
      );
      expect(answers).toHaveLength(OUTAGE_REQUESTS);
      for (const a of answers) {
        expect({ i: a.index, status: a.status, body: a.body, retryAfter: a.headers?.get('retry-after') }).toEqual({
          i: a.index,
          status: 503,
          body: { error: 'service_unavailable', retryAfterSeconds: 5 },
          retryAfter: '5',
        });
      }
      expect({ status: poll.status, body: poll.body, retryAfter: poll.headers.get('retry-after') }).toEqual({
        status: 503,
        body: { error: 'service_unavailable', retryAfterSeconds: 5 },
        retryAfter: '5',
      });
      expect(health.status).toBe(200);
      expect(ready.status).toBe(503);

      // Fail closed means answered while Redis is still down: every answer above was awaited before the restart
      // below, so a request that waited for Redis to come back would never have been answered (the test fails on
      // its timeout), and one that gave up another way would not carry the exact 503 body checked above.
      // Redis comes back empty: the operator re-imports the registry with the admin CLI.
      await redis!.start();
      await importRegistry(registryFile, env);
      const after = await acceptedAndFilled(1, 15_000);
      expect(after).not.toBe(before);
      for (const p of stack!.all()) expect({ name: p.name, running: p.running, spawns: p.spawns }).toEqual({ name: p.name, running: true, spawns: 1 });
      // Nothing sent during the outage reached the broker.
      expect(ordersByCommand(ledgerFile).size).toBe(2);
    },
    120_000,
  );
});
