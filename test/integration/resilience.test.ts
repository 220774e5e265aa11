import net from 'node:net';
import { Redis } from 'ioredis';
import { startIngress, type Ingress } from '../../src/server';
import { startWorker, type RunningWorker } from '../../src/worker';
import { RedisRegistry } from '../../src/registry/registry';
import { freePort, startRedis, waitFor, type RedisServer } from '../../support/infra';
import { get, post, seedOwner, startStack, testConfig, type Stack } from '../helpers/stack';
import { testEnv } from '../../support/env';
import { INDEXED_VALUE_TYPES, SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';
import { ScriptedTerminal } from '../helpers/terminal';
import { signalKeys } from '../../src/redis-keys';
import { reportedStatus } from '../helpers/poll';
import { temporalClient } from '../helpers/temporal';

/** The service's deadline for a Redis command or a Temporal call, set long here: see each test. */
const LONG_DEADLINE_MS = 20_000;

const buy = (secret: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = Date.now();
  const value = await fn();
  return { ms: Date.now() - started, value };
}

describe('when Redis fails, the guards fail closed and the service recovers by itself', () => {
  let redisServer: RedisServer;
  let ingress: Ingress;
  let redis: Redis;
  let registry: RedisRegistry;
  beforeAll(async () => {
    redisServer = await startRedis();
    // A long command timeout: an answer long before it did not wait for Redis (no bound on how fast it is).
    const config = testConfig({ REDIS_URL: redisServer.url, REDIS_COMMAND_TIMEOUT_MS: String(LONG_DEADLINE_MS) });
    ingress = await startIngress(config);
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    registry = new RedisRegistry(redis);
  });
  afterAll(async () => {
    await ingress?.close();
    redis?.disconnect();
    await redisServer?.stop();
  });

  test('when Redis stops, then submits and polls answer 503 service_unavailable with Retry-After without waiting for Redis; when it is back, then 202 again', async () => {
    const f = await seedOwner(registry);
    const url = `${ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    expect((await post(url, buy(f.secret))).status).toBe(202);

    await redisServer.stop();
    const { ms, value: down } = await timed(() => post(url, buy(f.secret)));
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ error: 'service_unavailable', retryAfterSeconds: expect.any(Number) });
    expect(down.headers.get('retry-after')).toBe(String(down.body.retryAfterSeconds));
    expect(ms).toBeLessThan(LONG_DEADLINE_MS / 2);
    const poll = await timed(() => get(`${ingress.url}/v1/signals/sig_0123456789abcdef0123456789abcdef`, { authorization: `Bearer ${f.token}` }));
    expect(poll.value.status).toBe(503);
    expect(poll.ms).toBeLessThan(LONG_DEADLINE_MS / 2);
    console.log(`503 with Redis down: submit ${Math.round(ms)} ms, poll ${Math.round(poll.ms)} ms`);
    expect((await get(`${ingress.url}/healthz`)).status).toBe(200);
    expect((await get(`${ingress.adminUrl}/readyz`)).status).toBe(503);

    await redisServer.start();
    const g = await waitFor('the registry to be writable again', async () => seedOwner(registry).catch(() => undefined), 10_000);
    const back = await waitFor(
      'the ingress to recover without a restart',
      async () => {
        const res = await post(`${ingress.url}/webhook/custom/${g.accounts[0]!.id}`, buy(g.secret));
        return res.status === 202 ? res : undefined;
      },
      10_000,
    );
    expect(back.body.success).toBe(true);
  });
});

describe('when the ingress starts while Redis is down', () => {
  test('then it starts, answers 503 service_unavailable, and serves once Redis is up', async () => {
    const redisServer = await startRedis();
    await redisServer.stop();
    const ingress = await startIngress(testConfig({ REDIS_URL: redisServer.url }));
    try {
      const res = await post(`${ingress.url}/webhook/custom`, buy('whsec_anything_anything_anything'));
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('service_unavailable');
      await redisServer.start();
      const redis = new Redis(redisServer.url);
      const f = await seedOwner(new RedisRegistry(redis));
      redis.disconnect();
      await waitFor(
        'the ingress to serve',
        async () => (await post(`${ingress.url}/webhook/custom/${f.accounts[0]!.id}`, buy(f.secret))).status === 202,
        10_000,
      );
    } finally {
      await ingress.close();
      await redisServer.stop();
    }
  });
});

describe('when Temporal is unreachable', () => {
  let ingress: Ingress;
  let redis: Redis;
  let taskQueue: string;
  beforeAll(async () => {
    const dead = await freePort();
    // A long Temporal deadline: an answer long before it waited for nothing of Temporal's.
    const config = testConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${dead}`, TEMPORAL_START_TIMEOUT_MS: String(LONG_DEADLINE_MS) });
    taskQueue = config.temporal.taskQueue;
    ingress = await startIngress(config);
    redis = new Redis(testEnv().redisUrl);
  });
  afterAll(async () => {
    await ingress?.close();
    redis?.disconnect();
  });

  test('then a signal is still accepted at once (202), with and without a key, its order goes to the bridge, and its start waits in Redis for Temporal', async () => {
    const f = await seedOwner(new RedisRegistry(redis));
    const bridge = new ScriptedTerminal(ingress.url, f.accounts[0]!.bridgeToken);
    await bridge.hello();
    const url = `${ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const plain = await timed(() => post(url, buy(f.secret)));
    const keyed = await timed(() => post(url, buy(f.secret), { 'x-idempotency-key': 'temporal-away' }));
    for (const r of [plain, keyed]) {
      expect(r.value.status).toBe(202);
      expect(r.value.body).toMatchObject({ success: true, signalId: expect.stringMatching(/^sig_/), accountsResolved: 1 });
      // Nothing of the answer waited for Temporal: no connection attempt, no start deadline.
      expect(r.ms).toBeLessThan(LONG_DEADLINE_MS / 2);
    }
    const ids = [plain.value.body.signalId as string, keyed.value.body.signalId as string];
    const commands = await bridge.nextCommands(2, 10_000);
    expect(commands.map((c) => c.signalId)).toEqual(ids);
    // The same key again: the same signal, from Redis's window, with Temporal still away.
    const replay = await post(url, buy(f.secret), { 'x-idempotency-key': 'temporal-away' });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.signalId).toBe(ids[1]);
    // Each start is recorded in Redis until Temporal takes it (the starter keeps trying).
    const inputs = signalKeys.pendingStarts(taskQueue).inputs;
    expect(await Promise.all(ids.map((id) => redis.hexists(inputs, `default|${id}`)))).toEqual([1, 1]);
    // The operator sees the backlog the outage leaves: /readyz names Temporal down and counts the starts waiting.
    const ready = await get(`${ingress.adminUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ checks: { redis: 'ok', 'temporal:default': 'down' }, pendingStarts: { pending: expect.any(Number) } });
    expect((ready.body as { pendingStarts: { pending: number } }).pendingStarts.pending).toBeGreaterThanOrEqual(2);
  });
});

/** A TCP forwarder that can be switched on and off: a region whose Temporal comes and goes. */
async function switchableProxy(port: number, target: { host: string; port: number }) {
  let server: net.Server | undefined;
  const sockets = new Set<net.Socket>();
  return {
    async on() {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const close = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', close).on('close', close);
        upstream.on('error', close).on('close', close);
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    },
    async off() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
}

describe('execution regions', () => {
  const t = () => testEnv();
  let worker: RunningWorker;
  let ingress: Ingress;
  let redis: Redis;
  let proxy: Awaited<ReturnType<typeof switchableProxy>>;
  let taskQueue: string;

  beforeAll(async () => {
    const env = t();
    const { connection, close } = await temporalClient({ address: env.temporalAddress });
    await connection.workflowService
      .registerNamespace({ namespace: 'region-c', workflowExecutionRetentionPeriod: { seconds: 86400 as unknown as import('long') } })
      .catch(() => undefined);
    await waitFor(
      'namespace region-c',
      async () =>
        connection.workflowService.describeNamespace({ namespace: 'region-c' }).then(
          () => true,
          () => false,
        ),
      20_000,
    );
    await connection.operatorService
      .addSearchAttributes({
        namespace: 'region-c',
        searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((a) => [a.name, INDEXED_VALUE_TYPES[a.type]])),
      })
      .catch(() => undefined);
    await close();
    const [host, port] = env.temporalAddress.split(':');
    const proxyPort = await freePort();
    proxy = await switchableProxy(proxyPort, { host: host!, port: Number(port) });
    const regions = (cAddress: string) =>
      JSON.stringify([
        { name: 'default', address: env.temporalAddress, namespace: env.temporalNamespace },
        { name: 'b', address: env.temporalAddress, namespace: env.temporalNamespaceB },
        { name: 'c', address: cAddress, namespace: 'region-c' },
      ]);
    const base = testConfig();
    taskQueue = base.temporal.taskQueue;
    worker = await startWorker(testConfig({ TEMPORAL_TASK_QUEUE: base.temporal.taskQueue, TEMPORAL_REGIONS: regions(env.temporalAddress) }));
    ingress = await startIngress(testConfig({ TEMPORAL_TASK_QUEUE: base.temporal.taskQueue, TEMPORAL_REGIONS: regions(`127.0.0.1:${proxyPort}`) }));
    redis = new Redis(env.redisUrl);
  });
  afterAll(async () => {
    await ingress?.close();
    await worker?.shutdown();
    await proxy?.off();
    redis?.disconnect();
  });

  test('when one region of three is down, then 202 all the same: every bridge gets its order at once, and the down region supervises its account once it is back', async () => {
    const f = await seedOwner(new RedisRegistry(redis), [{ region: 'default' }, { region: 'b' }, { region: 'c' }]);
    const terminals = f.accounts.map((a) => new ScriptedTerminal(ingress.url, a.bridgeToken));
    await Promise.all(terminals.map((x) => x.hello()));
    const url = `${ingress.url}/webhook/custom`;

    const accepted = await post(url, buy(f.secret), { 'x-idempotency-key': 'regions-1' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ success: true, signalId: expect.stringMatching(/^sig_/), correlationId: expect.any(String), accountsResolved: 3 });
    const signalId = accepted.body.signalId as string;

    // All three bridges get the command, the down region's too: the order never waits for Temporal.
    for (const [i, terminal] of terminals.entries()) {
      const [c] = await terminal.nextCommands(1);
      expect(c!.signalId).toBe(signalId);
      await terminal.report([{ commandId: c!.commandId, status: 'filled', ticket: `T${i}` }]);
    }
    // The live regions record their outcomes; region c's start waits in Redis.
    const inputs = signalKeys.pendingStarts(taskQueue).inputs;
    expect(await redis.hexists(inputs, `c|${signalId}`)).toBe(1);

    // The region comes back: the start is made from its record, and its account workflow adopts the fill.
    await proxy.on();
    await waitFor('region c to start the signal from its record', async () => (await redis.hexists(inputs, `c|${signalId}`)) === 0, 30_000, 100);
    const seen = await reportedStatus(ingress.url, f.token, signalId, { count: 3 });
    expect(seen.accounts.map((a) => [a.accountId, a.outcome, a.ticket])).toEqual(expect.arrayContaining(f.accounts.map((a, i) => [a.id, 'filled', `T${i}`])));
    // Replays change nothing: the same signal, and no bridge has a second command.
    const replay = await post(url, buy(f.secret), { 'x-idempotency-key': 'regions-1' });
    expect(replay.status).toBe(202);
    expect(replay.body.signalId).toBe(signalId);
    expect(await Promise.all(terminals.map(async (x) => (await x.commands(0)).length))).toEqual([0, 0, 0]);
  });
});

describe('when Temporal answers slower than the ingress deadline', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { TEMPORAL_START_TIMEOUT_MS: '15' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('then no signal runs whose answer said it was not accepted: every started signal was answered with its signalId', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    // Bursts of 30 until one gets a 202: on a loaded machine 15 ms can be too short for any start at all, and a round
    // in which nothing started cannot show a start answered "not accepted". Every round's answers are checked.
    const answers: Awaited<ReturnType<typeof post>>[] = [];
    await waitFor(
      'a burst in which some signal is accepted',
      async () => {
        const round = await Promise.all(Array.from({ length: 30 }, () => post(url, buy(f.secret))));
        answers.push(...round);
        return round.some((a) => a.status === 202) || undefined;
      },
      30_000,
      200,
    );
    const answeredIds = new Set(answers.filter((a) => a.body?.signalId).map((a) => a.body.signalId as string));
    const acceptedIds = answers.filter((a) => a.status === 202).map((a) => a.body.signalId as string);
    for (const a of answers) {
      // Exactly one of three answers: a 202; a pollable 503 (its start may have happened: success false, with its
      // signalId); a plain 503 backpressure (it did not). Which one each request gets is the 15 ms deadline's doing.
      const pollable = { success: false, signalId: expect.stringMatching(/^sig_/), correlationId: a.headers.get('x-request-id'), accountsResolved: 1 };
      const expected =
        a.status === 202
          ? { status: 202, body: { ...pollable, success: true } }
          : a.body?.signalId
            ? { status: 503, body: pollable }
            : { status: 503, body: { error: 'System under high load, retry later', backpressure: true } };
      expect({ status: a.status, body: a.body }).toEqual(expected);
    }
    const { client, close } = await temporalClient();
    try {
      const list = async () => {
        const ids: string[] = [];
        for await (const w of client.workflow.list({ query: `TaskQueue = "${stack.config.temporal.taskQueue}" AND WorkflowType = "signalWorkflow"` })) {
          ids.push(w.workflowId.replace(/^signal\//, ''));
        }
        return ids.sort();
      };
      // Visibility lags the starts: wait until it lists every 202 and two readings agree, so a start that timed out
      // at the ingress but happened in Temporal has had its chance to show up.
      let previous: string[] | undefined;
      const started = await waitFor(
        'visibility to settle',
        async () => {
          const ids = await list();
          const settled = acceptedIds.every((id) => ids.includes(id)) && previous !== undefined && previous.join() === ids.join();
          previous = ids;
          return settled ? ids : undefined;
        },
        15_000,
        500,
      );
      // Not vacuous: with every answer a plain 503 nothing started and the check below would hold of nothing.
      expect(started.length).toBeGreaterThan(0);
      for (const id of started) expect(answeredIds.has(id)).toBe(true);
      // What the caller was told it can do: poll each signal it was given an id for, and find it. With 15 ms for each
      // Temporal read a poll may answer 500/503 "safe to retry" on a busy machine; the caller retries, so does this.
      for (const id of started) {
        await waitFor(
          `signal ${id} to be pollable`,
          async () => {
            const poll = await get(`${stack.ingress.url}/v1/signals/${id}`, { authorization: `Bearer ${f.token}` });
            expect([id, [200, 500, 503]]).toEqual([id, expect.arrayContaining([poll.status])]);
            return poll.status === 200 || undefined;
          },
          15_000,
          100,
        );
      }
    } finally {
      await close();
    }
  });
});
