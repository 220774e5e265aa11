import type { Redis } from 'ioredis';
import { startTemporal, waitFor, type TemporalServer } from '../../support/infra';
import { ensureBuilt, serviceEnv, startProcessStack, type HttpResult, type ProcessStack } from '../../support/processes';
import { signalKeys } from '../../src/redis-keys';
import {
  expectEachAcceptedFilledOnce,
  httpPost,
  importRegistry,
  listExecutions,
  makeRegistry,
  ordersByCommand,
  redisClient,
  runBounded,
  scenarioFiles,
  tally,
  temporalClient,
  waitForOrders,
  commandIdOf,
  type BuyMeta,
  type FaultRegistry,
  type Sent,
} from './kit';

/**
 * Fault injection: the ingress dies by SIGKILL at the crash points of "accept in Redis, answer, then start"
 * (docs/architecture.md, "Following one signal"): after the start's record in Redis and before the Temporal start,
 * and anywhere between the acceptance and the answer in a burst. Ingress, worker and paper bridge run as processes;
 * the ingress comes back as a new process on the same port (its supervisor restarting it). Every signal a caller got
 * a 202 for, directly or on a retry with its key, must be ordered exactly once at the broker and reported filled.
 */

const SETTLE_DEADLINE_MS = 120_000;

/** Worker, ingress and a paper bridge with short long-polls (it finds a dead ingress within seconds). */
async function stackFor(reg: FaultRegistry, env: Record<string, string> = {}) {
  ensureBuilt();
  const { registryFile, ledgerFile } = scenarioFiles(reg);
  await importRegistry(registryFile, serviceEnv());
  const stack = await startProcessStack({ registryFile, ledgerFile, env, bridgeArgs: ['--wait-ms', '2000'] });
  return { stack, ledgerFile };
}

const buyOf = (reg: FaultRegistry, m: BuyMeta) => ({ secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01, idempotencyKey: m.key });

/**
 * Each signal's workflow was started exactly once: one run per `signal/<id>` on the stack's task queue (visibility
 * lists closed runs too, so a second start after the first completed would show), and none for anything else.
 */
async function expectOneRunPerSignal(temporalAt: { address?: string; namespace?: string }, taskQueue: string, signalIds: readonly string[]) {
  const view = await temporalClient(temporalAt);
  try {
    const query = `TaskQueue = "${taskQueue}" AND WorkflowType = "signalWorkflow"`;
    const runs = await waitFor(
      'Temporal visibility to list each signal workflow',
      async () => {
        const r = tally(await listExecutions(view.client, query), (e) => e.workflowId);
        return Object.keys(r).length >= signalIds.length ? r : undefined;
      },
      60_000,
    );
    expect(runs).toEqual(Object.fromEntries(signalIds.map((id) => [`signal/${id}`, 1])));
  } finally {
    await view.close();
  }
}

describe('the ingress is killed with SIGKILL while starts are pending in Redis (Temporal down), and a new ingress takes them over', () => {
  const reg = makeRegistry('ikill-pending', 2);
  const ids = reg.accounts.map((a) => a.id);
  const SIGNALS = 12;
  let temporal: TemporalServer | undefined;
  let stack: ProcessStack | undefined;
  let ledgerFile: string;
  let redis: Redis | undefined;

  beforeAll(async () => {
    temporal = await startTemporal();
    ({ stack, ledgerFile } = await stackFor(reg, { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', TEMPORAL_START_TIMEOUT_MS: '500' }));
    redis = redisClient(stack.env.REDIS_URL!);
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await stack?.stop();
    await temporal?.stop();
  });

  test(
    `when ${SIGNALS} signals are accepted while Temporal is down and the ingress is then killed -9, ` +
      'then once Temporal is back a new ingress starts each from its record: one signal workflow each, one order each, each reported filled',
    async () => {
      const describeAll = () => [...stack!.all().map((p) => p.describe()), `Temporal log: ${temporal!.logFile}`].join('\n');
      const claims = signalKeys.pendingStarts(stack!.env.TEMPORAL_TASK_QUEUE!).claims;
      await temporal!.stop();

      // Every answer is the acceptance in Redis alone; the starts wait there for Temporal.
      const answers: Sent<BuyMeta>[] = await runBounded<BuyMeta>({
        count: SIGNALS,
        concurrency: 3,
        deadlineMs: 30_000,
        send: (i) => {
          const meta = { accountId: ids[i % ids.length]!, key: `${reg.tag}-${i}` };
          return { meta, request: () => httpPost(`${stack!.ingress.url}/webhook/custom/${meta.accountId}`, buyOf(reg, meta)) };
        },
      });
      expect(tally(answers, (a) => a.status)).toEqual({ '202': SIGNALS });
      const pendingAtKill = await redis!.zcard(claims);
      expect(pendingAtKill).toBe(SIGNALS);
      // The bridge has every command already (dispatch at acceptance); the kill leaves only the starts to do.
      const commandIds = answers.map((a) => commandIdOf(a.body.signalId as string, a.meta.accountId));
      await waitForOrders(ledgerFile, commandIds, 30_000, describeAll);
      const killedAt = Date.now();
      await stack!.ingress.kill9();

      await temporal!.start();
      await stack!.ingress.start();
      const ingressBackAfter = Date.now() - killedAt;
      await waitFor('the new ingress to start every record it took over', async () => (await redis!.zcard(claims)) === 0, 60_000);

      const { signals, orders } = await expectEachAcceptedFilledOnce({
        final: answers,
        ledgerFile,
        ingressUrl: () => stack!.ingress.url,
        token: reg.token,
        deadlineMs: SETTLE_DEADLINE_MS,
        describe: describeAll,
      });
      await expectOneRunPerSignal(
        { address: temporal!.address, namespace: 'default' },
        stack!.env.TEMPORAL_TASK_QUEUE!,
        signals.map((s) => s.signalId),
      );
      console.log(
        `[fault] ingress SIGKILL with starts pending (Temporal down): ${answers.length} requests ${JSON.stringify(tally(answers, (a) => a.status))}, ` +
          `${pendingAtKill} starts pending in Redis at the kill, ingress back after ${ingressBackAfter} ms; ${signals.length} accepted signals, ` +
          `${orders.size} orders (${JSON.stringify(tally([...orders.values()], (l) => l.length))} per signal), each signal workflow started once`,
      );
    },
    300_000,
  );
});

/** A deterministic draw (mulberry32), so a failing run's kill points can be run again. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the ingress is killed with SIGKILL at random points of a burst, and callers retry every unanswered request with its key', () => {
  const reg = makeRegistry('ikill-burst', 4);
  const ids = reg.accounts.map((a) => a.id);
  const SIGNALS = 80;
  const KILLS = 3;
  const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);
  let stack: ProcessStack | undefined;
  let ledgerFile: string;

  beforeAll(async () => {
    ({ stack, ledgerFile } = await stackFor(reg));
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  });

  test(
    `when the ingress is killed -9 ${KILLS} times at random points of a burst of ${SIGNALS} keyed signals and started again each time, ` +
      'then every key ends in one 202, one signal, one order, reported filled',
    async () => {
      const describeAll = () => [`seed ${SEED}`, ...stack!.all().map((p) => p.describe())].join('\n');
      const random = seeded(SEED);
      // Kill points: after a drawn number of answers, then a drawn few milliseconds more, so that the kill lands
      // with requests anywhere between the body's arrival and the answer, and starts not yet made.
      const killAfter = Array.from({ length: KILLS }, (_, k) => Math.floor(((k + random()) * SIGNALS) / (KILLS + 1)));
      const killDelayMs = killAfter.map(() => Math.floor(random() * 40));
      const first: Sent<BuyMeta>[] = [];
      let answered = 0;
      let retries = 0;
      const restarts: number[] = [];

      const killer = (async () => {
        for (let k = 0; k < KILLS; k++) {
          await waitFor(`${killAfter[k]} answers before kill ${k + 1}`, async () => answered >= killAfter[k]!, 120_000, 5);
          await new Promise((r) => setTimeout(r, killDelayMs[k])); // the drawn kill point, not a wait for a condition
          const at = Date.now();
          await stack!.ingress.kill9();
          await stack!.ingress.start();
          restarts.push(Date.now() - at);
        }
      })();

      // A caller sends, and sends again with the same key while it gets no answer or a 503 (a caller's backoff).
      const sendUntilAccepted = async (meta: BuyMeta): Promise<HttpResult> => {
        const until = Date.now() + 120_000;
        for (let attempt = 0; ; attempt++) {
          const res = await httpPost(`${stack!.ingress.url}/webhook/custom/${meta.accountId}`, buyOf(reg, meta)).catch(() => undefined);
          if (attempt === 0) first.push({ index: -1, meta, sentAt: 0, doneAt: 0, ms: 0, status: res?.status ?? 0, body: res?.body });
          if (res?.status === 202 || (res && res.status !== 503) || Date.now() > until)
            return res ?? { status: 0, body: undefined, text: '', headers: new Headers() };
          retries++;
          await new Promise((r) => setTimeout(r, 100 + 100 * Math.min(attempt, 5)));
        }
      };
      const final = await runBounded<BuyMeta>({
        count: SIGNALS,
        concurrency: 6,
        deadlineMs: 240_000,
        send: (i) => {
          const meta = { accountId: ids[i % ids.length]!, key: `${reg.tag}-${i}` };
          return { meta, request: () => sendUntilAccepted(meta) };
        },
        onDone: () => {
          answered++;
        },
      });
      await killer;

      expect(final.filter((a) => a.status !== 202).map((a) => ({ key: a.meta.key, status: a.status, body: a.body }))).toEqual([]);
      expect(new Set(final.map((a) => a.meta.key)).size).toBe(SIGNALS);
      const { signals, orders } = await expectEachAcceptedFilledOnce({
        final,
        ledgerFile,
        ingressUrl: () => stack!.ingress.url,
        token: reg.token,
        deadlineMs: SETTLE_DEADLINE_MS,
        describe: describeAll,
      });
      // Nothing ordered beyond the accepted signals: a request the kill cut off left no order of its own.
      expect(ordersByCommand(ledgerFile).size).toBe(SIGNALS);
      await expectOneRunPerSignal(
        {},
        stack!.env.TEMPORAL_TASK_QUEUE!,
        signals.map((s) => s.signalId),
      );
      console.log(
        `[fault] ingress SIGKILL ×${KILLS} in a burst (seed ${SEED}, after ${killAfter.join('/')} answers +${killDelayMs.join('/')} ms): ` +
          `${SIGNALS} keys, first answers ${JSON.stringify(tally(first, (a) => a.status))}, ${retries} retries with the same key, ` +
          `ingress back after ${restarts.join('/')} ms; ${signals.length} accepted signals, ${orders.size} orders ` +
          `(${JSON.stringify(tally([...orders.values()], (l) => l.length))} per signal), 0 lost`,
      );
    },
    400_000,
  );
});
