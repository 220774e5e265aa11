/**
 * Scenario 9, the floor side by side, run as its own process by the bench: `node dist/bench/bare/floor.js SPEC OUT`.
 *
 * Our signal's workflow shape with no application code (bench/bare/workflows.ts: parent → child → one local activity
 * handing the command out → one Update, the report → complete), on the same Temporal server as the service, in the
 * same run. This process is the whole application: a worker on a task queue of its own, a client on the worker's
 * NativeConnection (what eager start needs), and a stand-in bridge that sends the report as soon as a command is out.
 * The variants (eager start on or off; search attributes at the start or upserted in the first task) run one signal at
 * a time, interleaved, then each a closed loop at a fixed concurrency, each loop waiting for its signal to complete
 * (the work per signal is counted there).
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { ActionKey, SignalIdKey, SymbolKey } from '../../src/temporal/search-attributes';
import { cpuSnapshot, cpuUsage } from '../cpu';
import { summarize, round, type Summary } from '../stats';
import { persistenceUsage, scrapePersistence, type PersistenceUsage } from '../work-counters';
import { bareActivities } from './activities';
import { bareParent, reportUpdate } from './workflows';

interface BareVariant {
  name: string;
  eager: boolean;
  searchAttributes: 'start' | 'upsert';
}

export interface BareFloorSpec {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** The Temporal dev server's process group (its CPU) and metrics port (its persistence calls), when known. */
  temporalPgid?: number;
  temporalMetricsPort?: number;
  concurrency: number;
  durationSec: number;
  oneAtATime: number;
  warmup: number;
  variants: BareVariant[];
}

interface Timing {
  /** client.workflow.start alone (our POST → 202 holds one of these). */
  startMs: number;
  /** Start returned → the child's local activity ran (our 202 → command queued for the bridge). */
  handOutMs: number;
  /** Start returned → the report's Update completed. */
  reportedMs: number;
  /** Start returned → the parent completed (our 202 → outcome visible). */
  completeMs: number;
  eager: boolean;
  workflowId: string;
  childId: string;
}

interface BarePart {
  signals: number;
  errors: number;
  firstError: string | null;
  elapsedMs: number;
  /** Signals completed per second (closed loop: each loop waits for its signal to complete). */
  perSec: number;
  eagerlyStarted: number;
  startMs: Summary;
  handOutMs: Summary;
  reportedMs: Summary;
  completeMs: Summary;
  /** Counted in the sustained part only (one at a time, the variants are interleaved). */
  persistence?: PersistenceUsage;
  /** Temporal dev server CPU per completed signal (ms), from its process group; the sustained part only. */
  temporalCpuMsPerSignal: number | null;
}

interface BareVariantResult extends BareVariant {
  one: BarePart;
  sustained: BarePart & { concurrency: number };
  history?: { parentEvents: number; childEvents: number };
}

export interface BareFloorResult {
  variants: BareVariantResult[];
}

async function main(): Promise<void> {
  const [specFile, outFile] = process.argv.slice(2);
  if (!specFile || !outFile) throw new Error('usage: bare/floor.js SPEC.json OUT.json');
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as BareFloorSpec;
  process.stdin.on('end', () => process.exit(3));
  process.stdin.on('error', () => process.exit(3));
  process.stdin.resume();
  if (!(spec.durationSec > 0 && spec.durationSec <= 600)) throw new Error('durationSec must be in (0, 600]');
  if (!(spec.concurrency >= 1 && spec.concurrency <= 200)) throw new Error('concurrency must be 1 to 200');

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: spec.temporalAddress });
  // Eager start needs the client on the worker's NativeConnection, in the worker's process.
  const client = new Client({ connection, namespace: spec.namespace });
  const handedOut = new Map<string, (t: number) => void>();
  const worker = await Worker.create({
    connection,
    namespace: spec.namespace,
    taskQueue: spec.taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: bareActivities((childId) => handedOut.get(childId)?.(performance.now())),
    // As the service's worker (src/worker.ts).
    maxCachedWorkflows: 500,
    maxConcurrentWorkflowTaskPolls: 16,
    nonStickyToStickyPollRatio: 0.5,
  });
  const running = worker.run();

  let n = 0;
  const signalOnce = async (variant: BareVariant): Promise<Timing> => {
    const accountId = `bare-${String(n++ % 200).padStart(3, '0')}`;
    const signalId = `sig_${randomBytes(16).toString('hex')}`;
    const workflowId = `bare/${signalId}`;
    const childId = `${workflowId}/${accountId}`;
    const out = new Promise<number>((resolve) => handedOut.set(childId, resolve));
    const attrs = { signalId, action: 'buy', symbol: 'EURUSD' };
    try {
      const t0 = performance.now();
      const handle = await client.workflow.start(bareParent, {
        taskQueue: spec.taskQueue,
        workflowId,
        args: [{ accountId, ...(variant.searchAttributes === 'upsert' ? { upsert: attrs } : {}) }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        requestEagerStart: variant.eager,
        ...(variant.searchAttributes === 'start'
          ? {
              typedSearchAttributes: [
                { key: SignalIdKey, value: signalId },
                { key: ActionKey, value: 'buy' },
                { key: SymbolKey, value: 'EURUSD' },
              ],
            }
          : {}),
      });
      const t1 = performance.now();
      const th = await Promise.race([out, sleep(30_000).then(() => Promise.reject(new Error(`${childId}: not handed out within 30 s`)))]);
      await client.workflow.getHandle(childId).executeUpdate(reportUpdate, { args: ['filled'] });
      const t2 = performance.now();
      await handle.result();
      const t3 = performance.now();
      return {
        startMs: t0 === t1 ? 0 : t1 - t0,
        handOutMs: th - t1,
        reportedMs: t2 - t1,
        completeMs: t3 - t1,
        eager: handle.eagerlyStarted,
        workflowId,
        childId,
      };
    } finally {
      handedOut.delete(childId);
    }
  };

  /**
   * `loops` closed loops, for `count` signals in all or until `untilMs`, taking the variants in turn (one at a time,
   * interleaved, every variant meets the same noise of a shared machine); the work is counted when there is one variant.
   */
  const part = async (variants: BareVariant[], loops: number, count: number, untilMs: number): Promise<Map<string, BarePart>> => {
    const timings = new Map<string, Timing[]>(variants.map((v) => [v.name, []]));
    let errors = 0;
    let firstError: string | null = null;
    let taken = 0;
    const persistenceBefore = await scrapePersistence(spec.temporalMetricsPort);
    const groups: Record<string, number> = spec.temporalPgid ? { temporal: spec.temporalPgid } : {};
    const cpuBefore = cpuSnapshot(groups);
    const started = performance.now();
    const loop = async () => {
      while (taken < count && performance.now() < untilMs) {
        const variant = variants[taken++ % variants.length]!;
        try {
          timings.get(variant.name)!.push(await signalOnce(variant));
        } catch (err) {
          errors++;
          firstError ??= String((err as Error)?.message ?? err);
          if (errors > 100) throw new Error(`bare floor: too many errors; first: ${firstError}`);
        }
      }
    };
    await Promise.all(Array.from({ length: loops }, loop));
    const elapsedMs = performance.now() - started;
    const cpu = cpuUsage(cpuBefore, cpuSnapshot(groups));
    const signals = [...timings.values()].reduce((sum, t) => sum + t.length, 0);
    const persistence = variants.length === 1 ? persistenceUsage(persistenceBefore, await scrapePersistence(spec.temporalMetricsPort), signals) : undefined;
    const out = new Map<string, BarePart>();
    for (const [name, list] of timings) {
      const pick = (f: (t: Timing) => number) => summarize(list.map((t) => round(f(t), 2)));
      out.set(name, {
        signals: list.length,
        errors,
        firstError,
        elapsedMs: round(elapsedMs, 0),
        perSec: round(list.length / (elapsedMs / 1000), 2),
        eagerlyStarted: list.filter((t) => t.eager).length,
        startMs: pick((t) => t.startMs),
        handOutMs: pick((t) => t.handOutMs),
        reportedMs: pick((t) => t.reportedMs),
        completeMs: pick((t) => t.completeMs),
        ...(persistence ? { persistence } : {}),
        temporalCpuMsPerSignal:
          variants.length === 1 && spec.temporalPgid && list.length > 0
            ? round(((cpu.byProgram['temporal'] ?? 0) * cpu.seconds * 1000) / list.length, 1)
            : null,
      });
    }
    return out;
  };

  const results: BareVariantResult[] = [];
  try {
    await part(spec.variants, Math.min(10, spec.concurrency), spec.warmup * spec.variants.length, Infinity);
    const one = await part(spec.variants, 1, spec.oneAtATime * spec.variants.length, Infinity);
    for (const variant of spec.variants) {
      const sustained = (await part([variant], spec.concurrency, Infinity, performance.now() + spec.durationSec * 1000)).get(variant.name)!;
      const alone = one.get(variant.name)!;
      results.push({ ...variant, one: alone, sustained: { ...sustained, concurrency: spec.concurrency }, history: await historyOfOne(variant) });
      process.stderr.write(`${JSON.stringify({ variant: variant.name, one: alone.completeMs.p50, sustainedPerSec: sustained.perSec })}\n`);
    }
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
  fs.writeFileSync(`${outFile}.tmp`, JSON.stringify({ variants: results } satisfies BareFloorResult));
  fs.renameSync(`${outFile}.tmp`, outFile);

  /** Events in one signal's two histories (a fresh signal, one at a time). */
  async function historyOfOne(variant: BareVariant): Promise<{ parentEvents: number; childEvents: number }> {
    const t = await signalOnce(variant);
    const [parent, child] = await Promise.all([t.workflowId, t.childId].map((id) => client.workflow.getHandle(id).fetchHistory()));
    return { parentEvents: parent?.events?.length ?? 0, childEvents: child?.events?.length ?? 0 };
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`bare floor: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
