/**
 * Runs the selected scenarios (bench/scenarios/) in their order on one stack, recording where the CPU, the memory and
 * Temporal's persistence went during each; a scenario that fails is recorded and the next one runs.
 */
import os from 'node:os';
import { Redis } from 'ioredis';
import type { InfraModule } from './helpers';
import type { Options } from './cli';
import { log, StageError } from './common';
import { cpuSnapshot, cpuUsage, describeCpu } from './cpu';
import type { LoadResult } from './load';
import { MemoryTimeline, readMemory } from './memory';
import type { Plan } from './parameters';
import { drain, warmUp, type Stack } from './stack';
import { round } from './stats';
import { persistenceUsage, redisCommandsProcessed, scrapePersistence } from './work-counters';
import type { Context, Results } from './scenarios/context';
import { startHttpFloor, type HttpFloor } from './http-floor';
import { BAR_CLOSE_ACCOUNTS, BAR_CLOSE_LARGE, BAR_CLOSE_STRATEGIES } from './parameters';
import { runBarCloseScenario } from './scenarios/bar-close';
import { runBusyBarClose } from './scenarios/busy-bar-close';
import { runBareFloor } from './scenarios/bare-floor';
import { runFanout } from './scenarios/fanout';
import { runFloor } from './scenarios/floor';
import { runIngress } from './scenarios/ingress';
import { runOneAtATime } from './scenarios/one-at-a-time';
import { runOverload } from './scenarios/overload';
import { runPollWithoutWorker } from './scenarios/poll-without-worker';
import { runSteady } from './scenarios/steady';
import { runWakeUp } from './scenarios/wake-up';
import { signalWorkflow } from '../workflows/signal';

export async function runScenarios(stack: Stack, helpers: { infra: InfraModule }, opts: Options, plan: Plan, results: Results): Promise<void> {
  const want = (n: number) => opts.scenarios.has(n);
  const timeline = new MemoryTimeline(
    (['ingress', 'worker', 'bridge'] as const).flatMap((name) => (stack.pids[name] ? [{ name, pid: stack.pids[name] }] : [])),
  );
  timeline.start();
  results.memoryByPhase = timeline.peaks;
  const mark = (stage: string) => {
    results.loadavg[stage] = os.loadavg().map((v) => round(v));
    timeline.phase(stage);
  };
  let floorPgid: number | undefined;
  const trees = (): Record<string, number> => (stack.postgresPid ? { postgres: stack.postgresPid } : {});
  const groups = () => ({
    temporal: stack.temporal.pid,
    redis: stack.redis.pid,
    ingress: stack.ingress.pid,
    worker: stack.worker.pid,
    ...Object.fromEntries(stack.moreWorkers.map((w, i) => [`worker${i + 2}`, w.pid])),
    bridge: stack.bridge.pid,
    ...(floorPgid ? { floor: floorPgid } : {}),
  });
  // Counts Redis's commands per stage (INFO on a connection of its own; the count includes these INFO calls).
  const redis = new Redis(stack.redis.url, { connectionName: 'bench-counters', maxRetriesPerRequest: 1 });
  const redisCount = () => redisCommandsProcessed(redis).catch(() => undefined);
  /** Runs a stage and records where the machine's CPU went meanwhile, and the work Temporal and Redis did. */
  const measure = async <T>(stage: string, fn: () => Promise<T>, signalsOf?: (r: T) => number): Promise<T> => {
    const before = cpuSnapshot(groups(), trees());
    const persistenceBefore = await scrapePersistence(stack.temporalMetricsPort);
    const redisBefore = await redisCount();
    let result: T | undefined;
    try {
      result = await fn();
      return result;
    } finally {
      const usage = cpuUsage(before, cpuSnapshot(groups(), trees()));
      results.cpu[stage] = usage;
      log(`${stage}: ${describeCpu(usage)}`);
      const signals = result !== undefined && signalsOf ? signalsOf(result) : 0;
      const redisAfter = await redisCount();
      if (redisBefore !== undefined && redisAfter !== undefined) {
        const commands = redisAfter - redisBefore;
        results.redisCommands[stage] = { commands, perSignal: signals > 0 ? round(commands / signals, 1) : null };
      }
      const p = persistenceUsage(persistenceBefore, await scrapePersistence(stack.temporalMetricsPort), signals);
      if (p) {
        results.temporalPersistence[stage] = p;
        log(
          `${stage}: Temporal persistence: ${p.calls} calls${p.callsPerSignal !== null ? ` (${p.callsPerSignal} per signal)` : ''}, mean ${p.meanMs} ms; top: ${p.top
            .slice(0, 4)
            .map((o) => `${o.op} ${o.calls}× ${o.meanMs} ms`)
            .join(', ')}`,
        );
      }
    }
  };
  const drainMeasured = (stage: string, what: string, signals: number) => {
    timeline.phase(`drain after ${stage}`);
    return measure(`drain after ${stage}`, () => drain(stack, what, signals, helpers));
  };
  /** How many signal workflows exist (after a drain: every one the phase started, answered 202 or not). */
  const signalWorkflows = async () => (await stack.client.workflow.count(`WorkflowType="${signalWorkflow.name}"`)).count;
  /** Signal workflows a phase started beyond its 202s: accepted by Temporal, yet the caller got a 503. */
  const unanswered = async (stage: string, before: number, load: LoadResult) => {
    const after = await signalWorkflows();
    const started = after - before;
    const answered202 = load.statusCounts['202'] ?? 0;
    const answered503 = load.statusCounts['503'] ?? 0;
    const pollable503 = load.pollable503 ?? 0;
    const inFlightAtStop = Math.max(0, load.sent - load.requests - load.errors - load.timeouts);
    // Those still in flight when the load stopped may have been started too, and a 503 with a signalId says "may run,
    // poll it"; beyond those, a signal ran although its caller was told to retry (a retry would run it twice).
    const startedDespite503 = Math.max(0, started - answered202 - inFlightAtStop);
    const startedDespiteRetry = Math.max(0, started - answered202 - pollable503 - inFlightAtStop);
    results.startedVs202[stage] = {
      started,
      answered202,
      answered503,
      pollable503,
      inFlightAtStop,
      startedDespite503AtLeast: startedDespite503,
      startedDespiteRetryAtLeast: startedDespiteRetry,
    };
    log(
      `${stage}: ${started} signal workflows started; ${answered202} answered 202, ${answered503} answered 503 (${pollable503} of them with a signalId: "may run, poll it"), ` +
        `${inFlightAtStop} unanswered when the load stopped: at least ${startedDespite503} ran after a 503, at least ${startedDespiteRetry} after a 503 that said "retry"`,
    );
  };
  /**
   * One scenario. A stage of it that does not complete (StageError) is recorded and the bench goes on with the next
   * scenario once the system has drained (it exits non-zero at the end); anything else aborts the run.
   */
  const scenario = async (name: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      if (!(err instanceof StageError)) throw err;
      results.errors.push(`scenario ${name}: ${err.message}`);
      log(`scenario ${name} FAILED: ${err.message}`);
      await drainMeasured(`failed scenario ${name}`, `the failed scenario ${name}`, 2_000);
    }
  };

  // The bar closes' floor server, started once when a bar close first asks for it; its CPU is counted per stage too.
  let floor: Promise<HttpFloor> | undefined;
  const httpFloor = () =>
    (floor ??= startHttpFloor(stack.runDir, { redisUrl: stack.redis.url, accountId: stack.accounts[0]! }).then((f) => {
      floorPgid = f.pgid;
      return f;
    }));
  const ctx: Context = {
    stack,
    helpers,
    opts,
    plan,
    results,
    mark,
    measure,
    drainMeasured,
    signalWorkflows,
    unanswered,
    redisCounter: redis,
    httpFloor,
  };
  const memoryNow = () =>
    Object.fromEntries(
      (['ingress', 'worker', 'bridge'] as const).flatMap((name) => {
        const m = stack.pids[name] ? readMemory(stack.pids[name]) : undefined;
        return m ? [[name, { rssMb: round(m.rssKb / 1024, 1), hwmMb: round(m.hwmKb / 1024, 1) }]] : [];
      }),
    );
  results.memoryBaseline.ready = memoryNow();
  log('warm-up: 40 signals through the whole path');
  const warmIds = await warmUp(stack, helpers);
  await drainMeasured('warm-up', 'the warm-up', 40);
  results.memoryBaseline.afterWarmUp = memoryNow();
  log(`memory at rest after the warm-up: ${JSON.stringify(results.memoryBaseline.afterWarmUp)}`);

  try {
    await scenarioList();
  } finally {
    timeline.stop();
    redis.disconnect();
    if (floor) await floor.then((f) => f.stop()).catch(() => undefined);
  }

  async function scenarioList(): Promise<void> {
    // 1. Floor
    if (want(1)) await scenario('1', () => runFloor(ctx));

    // 2. Ingress at saturation, then at half that rate
    if (want(2)) await scenario('2', () => runIngress(ctx));

    // Signals to poll: accepted ones from earlier scenarios, spread over the accounts.
    const pollIds = (() => {
      const fromSat = (results.saturation?.accepted ?? []).map((a) => a.signalId);
      const pool = fromSat.length > 0 ? fromSat : (results.floor?.signalIds ?? []).length > 0 ? results.floor!.signalIds : warmIds;
      const step = Math.max(1, Math.floor(pool.length / 200));
      return pool.filter((_, i) => i % step === 0).slice(0, 200);
    })();

    // 7. One signal at a time: what a single caller sees, with nothing else going on.
    if (want(7)) await scenario('7', () => runOneAtATime(ctx));

    // 9. The bare topology's floor, side by side with ours on the same server (next to scenarios 2 and 7, its ratios).
    if (want(9)) await scenario('9', () => runBareFloor(ctx));

    // 3, 5, 6: one steady phase: 50 signals/s on 10 accounts, the poll at 100/s beside it, memory sampled.
    if (want(3) || want(5) || want(6)) await scenario('3/5/6', () => runSteady(ctx, pollIds));

    // 4. Fan-out (100, then 200 accounts)
    if (want(4)) await scenario('4', () => runFanout(ctx));

    // 10, 12, 13. Bar closes: N accounts' alerts at the same instant, 1,000 accounts', ten strategies on 100 accounts;
    // each again 5 s later, and the floor server's beside them.
    const barClose = (n: number, label: string, accounts: string[], perAccount: number, secret: string) =>
      scenario(String(n), async () => {
        results.barCloses[label] = await runBarCloseScenario(ctx, { scenario: String(n), label, accounts, perAccount, secret });
      });
    if (want(10)) await barClose(10, 'barClose', stack.accounts.slice(0, opts.barClose), 1, stack.secret);
    if (want(12)) await barClose(12, 'barClose1000', stack.paperAccounts.slice(0, BAR_CLOSE_LARGE), 1, stack.secretAll);
    if (want(13)) await barClose(13, 'barCloseStrategies', stack.accounts.slice(0, BAR_CLOSE_ACCOUNTS), BAR_CLOSE_STRATEGIES, stack.secret);

    // 14. A busy market, then a bar close the moment it ends.
    if (want(14))
      await scenario('14', async () => {
        results.busyBarClose = await runBusyBarClose(ctx);
      });

    // 11. The bridge's long-poll wake-up on its own.
    if (want(11)) await scenario('11', () => runWakeUp(ctx));

    // 8. Overload: twice what the stack sustains. The excess must be refused at once, and nothing accepted may expire.
    if (want(8)) await scenario('8', () => runOverload(ctx));

    // 5 (second half): the poll with the worker stopped.
    if (want(5)) await scenario('5 (no worker)', () => runPollWithoutWorker(ctx, pollIds));
  }
}
