import type { Redis } from 'ioredis';
import { hashCredential } from '../../src/registry/credentials';
import { RedisRegistry } from '../../src/registry/registry';
import { aofState, startRedis, waitFor, type RedisServer } from '../../support/infra';
import { ensureBuilt, runAdminProcess, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import {
  buysAcrossAFault,
  expectEachAcceptedFilledOnce,
  httpGet,
  httpPost,
  importRegistry,
  makeRegistry,
  ordersByCommand,
  redisClient,
  retryUntilAccepted,
  scenarioFiles,
  tally,
  type BuyMeta,
  type Sent,
} from './kit';

/**
 * Fault injection: Redis is killed with SIGKILL (a crash, the OOM killer: no shutdown, no final write) while signals
 * flow through the real ingress, worker and paper bridge, and starts again on the same data, as `make start` and
 * docker-compose run it (append-only file, appendfsync everysec). Every signal that got a 202 must be executed once,
 * no more, and reported filled; the registry (accounts, secret, tokens, bridge tokens, and an operator's edit made just
 * before the crash) must be whole. The scenario has a redis-server of its own; Temporal is the run's shared server.
 */

/** Accepted signals before the crash, and after Redis is back, that make it "mid-load". */
const BEFORE_CRASH = 16;
const AFTER_RESTART = 16;
/** Past these, the load stops (bounded in count and time). */
const MAX_REQUESTS = 300;
const LOAD_DEADLINE_MS = 120_000;
/** From the last 202 to every order and every outcome; a deadline, not a performance target. */
const SETTLE_DEADLINE_MS = 120_000;

const reg = makeRegistry('rkill', 2);
const ids = reg.accounts.map((a) => a.id);

type Meta = BuyMeta;

/** What the service knows of this scenario's owner, read through the registry as the ingress reads it. */
async function registryView(redis: Redis, extraTokens: string[] = []) {
  const registry = new RedisRegistry(redis);
  return {
    accounts: await registry.getAccounts(ids),
    secret: await registry.authenticateSecret(reg.secret),
    secrets: await registry.findSecretsByHashPrefix(hashCredential(reg.secret)),
    token: await registry.authenticateToken(reg.token),
    extraTokens: await Promise.all(extraTokens.map((t) => registry.authenticateToken(t))),
    bridges: await Promise.all(reg.accounts.map(async (a) => (await registry.authenticateBridge(a.bridgeToken))?.id ?? null)),
  };
}

describe('Redis is killed with SIGKILL mid-load and starts again on its append-only file', () => {
  let redis: RedisServer | undefined;
  let stack: ProcessStack | undefined;
  let reader: Redis | undefined;
  let env: Record<string, string>;
  let ledgerFile: string;

  beforeAll(async () => {
    ensureBuilt();
    const files = scenarioFiles(reg);
    const registryFile = files.registryFile;
    ledgerFile = files.ledgerFile;
    redis = await startRedis({ durable: true });
    env = serviceEnv({ REDIS_URL: redis.url });
    await importRegistry(registryFile, env);
    // Short long-polls, so the bridge finds out about the crash within seconds rather than at the end of a 20 s poll.
    stack = await startProcessStack({ registryFile, ledgerFile, env: { REDIS_URL: redis.url }, bridgeArgs: ['--wait-ms', '2000'] });
    reader = redisClient(redis.url);
  }, 120_000);

  afterAll(async () => {
    reader?.disconnect();
    await stack?.stop();
    await redis?.stop();
  });

  test(
    `when Redis is killed with SIGKILL after ${BEFORE_CRASH} accepted signals and started again on the same data while the load goes on, ` +
      'then every accepted signal is executed exactly once and reported filled, and the registry, with an edit made just before the crash, is whole',
    async () => {
      const describeAll = () =>
        stack!
          .all()
          .map((p) => p.describe())
          .join('\n');
      const before = await registryView(reader!);
      expect(before.accounts.map((a) => a?.id)).toEqual(ids);
      expect(before.bridges).toEqual(ids);

      const buy = (m: Meta) => ({ secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01, idempotencyKey: m.key });
      const send = (m: Meta) => httpPost(`${stack!.ingress.url}/webhook/custom/${m.accountId}`, buy(m));

      // The crash, once the load is flowing: an operator edit (a new API token) lands, then SIGKILL, then, once the
      // callers have seen Redis gone, the same redis-server starts again on its files.
      const crash: { at?: number; restartedAt?: number; acceptedAtCrash?: number; ordersAtCrash?: number; token?: string } = {};
      const accepted = (all: readonly Sent<Meta>[], since = 0) => all.filter((a) => a.status === 202 && a.sentAt >= since).length;
      const crashAndRestart = async (all: readonly Sent<Meta>[]) => {
        const created = await runAdminProcess(['token', 'create', '--accounts', ids[0]!, '--json'], env);
        if (created.code !== 0) throw new Error(`admin token create exited ${created.code}: ${created.stderr}`);
        crash.token = (JSON.parse(created.stdout) as { token: string }).token;
        crash.acceptedAtCrash = accepted(all);
        crash.ordersAtCrash = ordersByCommand(ledgerFile).size;
        // everysec's window (docs/deployment.md): while a slow fsync runs, Redis answers writes before writing them to
        // its file. The kill comes at a moment when nothing acknowledged is held back, so what is checked is what the
        // service does with a Redis that kept every write it had written, not the length of that window.
        await waitFor('Redis to hold back no acknowledged write', async () => (await aofState(redis!.url)).pendingBytes === 0, 10_000, 20);
        crash.at = Date.now();
        await redis!.kill9();
        await waitFor('callers to be refused while Redis is down', async () => all.some((a) => a.sentAt >= crash.at! && a.status === 503), 15_000);
        await redis!.start();
        crash.restartedAt = Date.now();
      };

      const { answers } = await buysAcrossAFault({
        accountIds: ids,
        tag: reg.tag,
        ledgerFile,
        send,
        before: BEFORE_CRASH,
        after: AFTER_RESTART,
        maxRequests: MAX_REQUESTS,
        deadlineMs: LOAD_DEADLINE_MS,
        fault: crashAndRestart,
      });
      expect(crash.restartedAt).toBeDefined();

      // Callers retry every refusal with the same idempotency key until it is accepted (a replay if it was, after all).
      const retried = await retryUntilAccepted(answers, (r) => send(r.meta), { attempts: 20, deadlineMs: 60_000 });
      const final = answers.map((a) => retried.get(a.index) ?? a);
      const refusedFinally = final.filter((a) => a.status !== 202);
      expect(refusedFinally.map((a) => ({ index: a.index, status: a.status, body: a.body }))).toEqual([]);
      // During the crash the service refused (503, fail closed); it never answered anything else.
      expect(Object.keys(tally(answers, (a) => a.status)).sort()).toEqual(['202', '503']);

      const { signals, orders } = await expectEachAcceptedFilledOnce({
        final,
        ledgerFile,
        ingressUrl: () => stack!.ingress.url,
        token: reg.token,
        deadlineMs: SETTLE_DEADLINE_MS,
        describe: describeAll,
      });

      // The registry is whole, the operator's last edit included, and works: the new token reads its account's outcome.
      const after = await registryView(reader!, [crash.token!]);
      expect({ ...after, extraTokens: undefined }).toEqual({ ...before, extraTokens: undefined });
      expect(after.extraTokens).toEqual([expect.objectContaining({ accounts: [ids[0]] })]);
      const first = signals.find((s) => s.accountId === ids[0])!;
      expect((await httpGet(`${stack!.ingress.url}/v1/signals/${first.signalId}`, { authorization: `Bearer ${crash.token}` })).status).toBe(200);
      // Nothing had to be restarted but Redis.
      for (const p of stack!.all()) expect({ name: p.name, running: p.running, spawns: p.spawns }).toEqual({ name: p.name, running: true, spawns: 1 });

      console.log(
        `[fault] Redis SIGKILL mid-load: ${answers.length} requests ${JSON.stringify(tally(answers, (a) => a.status))}, ` +
          `${retried.size} refusals retried; at the crash ${crash.acceptedAtCrash} accepted and ${crash.ordersAtCrash} ordered; ` +
          `Redis back after ${crash.restartedAt! - crash.at!} ms; ${signals.length} accepted signals, ${orders.size} orders, ` +
          `0 lost, 0 doubled; registry whole; AOF writes postponed behind a slow fsync since the restart: ${(await aofState(redis!.url)).postponedWrites}`,
      );
    },
    300_000,
  );
});
