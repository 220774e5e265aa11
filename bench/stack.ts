/** The whole local stack the bench measures, started on free loopback ports, and the stages every scenario shares. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import {
  REPO_ROOT,
  type ClusterModule,
  type IngressProcess,
  type InfraModule,
  type PaperBridgeProcess,
  type ProcessesModule,
  type RedisServer,
  type ServiceProcess,
  type TemporalCluster,
  type TemporalServer,
} from './helpers';
import type { Options } from './cli';
import { baseEnv, credential, httpJson, log, StageError, withDeadline } from './common';
import { liveChildren, stopChild } from './children';
import { LedgerTail } from './ledger';
import { nodePidInGroup } from './memory';
import { reniceGroup } from './priority';
import { ACCOUNTS, BAR_CLOSE_LARGE, BROADCAST_SMALL, LIMIT_RAISED, LIMIT_SCALE } from './parameters';
import { postmasterPid, temporalMetricsPort } from './work-counters';

export interface Stack {
  runDir: string;
  temporal: TemporalServer;
  /** The cluster profile's PostgreSQL (its process group), when the run uses it. */
  postgresPid?: number;
  redis: RedisServer;
  worker: ServiceProcess;
  /** Workers past the first (--workers). */
  moreWorkers: ServiceProcess[];
  ingress: IngressProcess;
  bridge: PaperBridgeProcess;
  client: Client;
  connection: Connection;
  ledger: LedgerTail;
  /** The ACCOUNTS accounts every scenario but 12 uses (the first of the registry). */
  accounts: string[];
  /** Every account the paper bridge serves: BAR_CLOSE_LARGE when scenario 12 runs, else the ACCOUNTS. */
  paperAccounts: string[];
  /** Links the ACCOUNTS accounts: scenario 4's broadcast to all of them. */
  secret: string;
  /** Links every paper account (scenario 12's alerts, each on its account's URL). */
  secretAll: string;
  /** Links the first BROADCAST_SMALL accounts only: a broadcast to fewer than all. */
  secretSmall: string;
  /** An account no paper terminal serves: the bench long-polls for it itself (scenario 11). */
  probe: { accountId: string; bridgeToken: string };
  token: string;
  taskQueue: string;
  pids: { ingress?: number; worker?: number; bridge?: number };
  temporalMetricsPort?: number;
}

/** Everything started so far, stopped in reverse order by cleanup(). */
const started: { name: string; stop: () => Promise<unknown> }[] = [];
let cleanupPromise: Promise<void> | undefined;

export function cleanup(): Promise<void> {
  cleanupPromise ??= (async () => {
    await Promise.allSettled([...liveChildren].map((c) => stopChild(c)));
    for (const item of [...started].reverse()) {
      try {
        const t0 = Date.now();
        const info = await withDeadline(`stopping ${item.name}`, 30_000, item.stop);
        const exit = info as { code?: unknown; signal?: unknown } | null | undefined;
        const how = exit && typeof exit === 'object' && 'code' in exit ? ` (exit code ${String(exit.code)}, signal ${String(exit.signal)})` : '';
        log(`stopped ${item.name} in ${Date.now() - t0} ms${how}`);
      } catch (err) {
        log(`could not stop ${item.name}: ${(err as Error).message}`);
      }
    }
    started.length = 0;
  })();
  return cleanupPromise;
}

export function registryDocument(accounts: string[], tokens: Record<string, string>, secrets: { secret: string; accounts: string[] }[], token: string) {
  return {
    accounts: accounts.map((id, i) => {
      const platform = i % 2 === 0 ? 'mt5' : 'ctrader';
      return {
        id,
        owner: 'bench-owner',
        platform,
        type: 'standard',
        status: 'active',
        entitled: true,
        region: 'default',
        bridgeVersion: platform === 'mt5' ? '2.1.0' : '1.2.0',
        bridgeToken: tokens[id]!,
      };
    }),
    secrets: secrets.map((s) => ({ ...s, owner: 'bench-owner' })),
    tokens: [{ token, accounts, suspendedUntil: null }],
  };
}

export async function startStack(
  helpers: { infra: InfraModule; processes: ProcessesModule; cluster: ClusterModule },
  opts: Options,
  runDir: string,
): Promise<Stack> {
  const { infra, processes } = helpers;
  processes.ensureBuilt();
  for (const f of ['load.js', 'floor.js', 'bare/floor.js']) {
    if (!fs.existsSync(path.join(__dirname, f))) throw new Error(`dist/bench/${f} is missing: run npm run build`);
  }
  log(`run directory ${path.relative(REPO_ROOT, runDir)}`);

  process.env.TEMPORAL_BIN = infra.temporalBinary();
  log('starting Temporal (fresh SQLite file) and redis-server on free loopback ports');
  const dbFile = opts.temporalDbDir ? path.join(opts.temporalDbDir, `bench-temporal-${path.basename(runDir)}.db`) : path.join(runDir, 'temporal.db');
  if (opts.temporalDbDir) {
    // Not in the run directory: removed (with SQLite's -wal/-shm/-journal files) once Temporal has stopped.
    started.push({
      name: 'the Temporal database file',
      stop: async () => {
        for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(`${dbFile}${suffix}`, { force: true });
      },
    });
  }
  log(`Temporal database: ${dbFile}`);
  const cluster = opts.temporal === 'cluster';
  if (cluster) log('starting the cluster profile: PostgreSQL, schemas, the Temporal server (docs/cluster-profile.md)');
  const [t, r] = await Promise.allSettled([
    cluster ? helpers.cluster.startTemporalCluster({ dir: path.join(runDir, 'temporal-cluster') }) : infra.startTemporal({ dbFile }),
    infra.startRedis(),
  ]);
  if (t.status === 'fulfilled') started.push({ name: 'Temporal', stop: () => t.value.stop() });
  if (r.status === 'fulfilled') started.push({ name: 'redis-server', stop: () => r.value.stop() });
  if (t.status === 'rejected') throw new StageError(`Temporal did not start: ${(t.reason as Error)?.message ?? t.reason}`);
  if (r.status === 'rejected') throw new StageError(`redis-server did not start: ${(r.reason as Error)?.message ?? r.reason}`);
  const temporal = t.value;
  const redis = r.value;
  // What the helpers read (as jest's globalSetup would set it).
  Object.assign(process.env, {
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    TEST_TEMPORAL_NAMESPACE_B: 'default',
    TEST_TEMPORAL_DB: temporal.dbFile,
    REDIS_URL: redis.url,
  });
  log(`Temporal ${temporal.address}, Redis ${redis.url}`);

  // The registry: 200 accounts (mt5 and ctrader; 1,000 when scenario 12 runs), one owner, one secret linking the 200,
  // one linking all, one token granting all.
  const paperAccounts = Array.from({ length: opts.scenarios.has(12) ? BAR_CLOSE_LARGE : ACCOUNTS }, (_, i) => `bench-${String(i).padStart(3, '0')}`);
  const accounts = paperAccounts.slice(0, ACCOUNTS);
  const probe = { accountId: 'bench-probe', bridgeToken: credential('brg_bench_') };
  const bridgeTokens = Object.fromEntries([...paperAccounts.map((id) => [id, credential('brg_bench_')]), [probe.accountId, probe.bridgeToken]]);
  const secret = credential('whsec_bench_');
  const secretAll = paperAccounts.length > accounts.length ? credential('whsec_bench_') : secret;
  const secretSmall = credential('whsec_bench_');
  const token = credential('tok_bench_');
  const secrets = [
    { secret, accounts },
    { secret: secretSmall, accounts: accounts.slice(0, BROADCAST_SMALL) },
    ...(secretAll !== secret ? [{ secret: secretAll, accounts: paperAccounts }] : []),
  ];
  const registryFile = path.join(runDir, 'registry.json');
  fs.writeFileSync(registryFile, JSON.stringify(registryDocument([...paperAccounts, probe.accountId], bridgeTokens, secrets, token), null, 2), { mode: 0o600 });
  const imported = await processes.runAdminProcess(['import', registryFile], { ...baseEnv(), REDIS_URL: redis.url }, { timeoutMs: 60_000 });
  if (imported.code !== 0) throw new StageError(`admin import failed (exit ${imported.code}): ${imported.stderr.trim()}`);
  // The paper bridge serves the paper accounts; the probe account's bridge is the bench itself.
  const paperRegistryFile = path.join(runDir, 'paper-registry.json');
  fs.writeFileSync(paperRegistryFile, JSON.stringify(registryDocument(paperAccounts, bridgeTokens, secrets, token), null, 2), { mode: 0o600 });
  log(
    `registry imported: ${paperAccounts.length} accounts and a probe account, ${secrets.length} secrets (the first ${ACCOUNTS}, the first ${BROADCAST_SMALL}${secretAll !== secret ? `, all ${paperAccounts.length}` : ''}), 1 token`,
  );

  const tag = randomBytes(4).toString('hex');
  const taskQueue = `bench-${tag}`;
  const env: Record<string, string> = {
    ...baseEnv(),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    REDIS_URL: redis.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    RATE_LIMIT_KEY_PREFIX: `bench${tag}:`,
    WORKER_METRICS_PORT: '0',
    // Limits raised for the run; every limiter still runs on every request.
    RATE_LIMIT_SCALE: LIMIT_SCALE,
    WEBHOOK_PREAUTH_IP_MAX: LIMIT_RAISED,
    // Every client of the bench (200 or 1,000 bridge long-polls, the load generators, a bar close's 1,000 posts) comes
    // from 127.0.0.1: no per-address connection cap. Admission control stays at its defaults: it is what scenarios 3 and 8 measure.
    MAX_CONNECTIONS_PER_IP: '0',
  };
  const profiled = (kind: string): Record<string, string> => {
    const extra = kind === 'ingress' && opts.ingressNodeOptions ? [opts.ingressNodeOptions] : [];
    if (!opts.cpuProf) return extra.length ? { ...env, NODE_OPTIONS: extra.join(' ') } : env;
    const dir = path.join(runDir, 'profiles', kind);
    fs.mkdirSync(dir, { recursive: true });
    return {
      ...env,
      NODE_OPTIONS: [`--require ${path.join(__dirname, 'cpu-profile.js')}`, ...extra].join(' '),
      BENCH_CPU_PROFILE_DIR: dir,
      BENCH_CPU_PROFILE_THREAD_SEC: String(opts.cpuProfThreadsSec ?? 0),
    };
  };

  /** The profiler's variables alone: the paper bridge gets no service environment. */
  const profiledOnly = (kind: string): Record<string, string> => {
    const all = profiled(kind);
    return { NODE_OPTIONS: all.NODE_OPTIONS!, BENCH_CPU_PROFILE_DIR: all.BENCH_CPU_PROFILE_DIR! };
  };

  log('starting worker and ingress');
  const [w, i] = await Promise.allSettled([
    processes.startWorkerProcess(profiled('worker'), { label: 'worker' }),
    processes.startIngressProcess(profiled('ingress'), { label: 'ingress' }),
  ]);
  if (w.status === 'fulfilled') started.push({ name: 'worker', stop: () => w.value.stop(15_000) });
  if (i.status === 'fulfilled') started.push({ name: 'ingress', stop: () => i.value.stop(10_000) });
  if (w.status === 'rejected') throw new StageError(`worker did not get ready: ${(w.reason as Error)?.message ?? w.reason}`);
  if (i.status === 'rejected') throw new StageError(`ingress did not get ready: ${(i.reason as Error)?.message ?? i.reason}`);
  const worker = w.value;
  const ingress = i.value;
  const moreWorkers: ServiceProcess[] = [];
  for (let n = 2; n <= (opts.workers ?? 1); n++) {
    const more = await processes.startWorkerProcess(profiled('worker'), { label: `worker-${n}` });
    started.push({ name: `worker ${n}`, stop: () => more.stop(15_000) });
    moreWorkers.push(more);
  }

  log(`starting the paper bridge for ${paperAccounts.length} accounts against ${ingress.url}`);
  const ledgerFile = path.join(runDir, 'ledger.jsonl');
  let bridge: PaperBridgeProcess;
  try {
    bridge = await processes.startPaperBridgeProcess({
      registryFile: paperRegistryFile,
      ledgerFile,
      ingressUrl: ingress.url,
      label: 'paper-bridge',
      readyTimeoutMs: 60_000 + paperAccounts.length * 100,
      ...(opts.cpuProf ? { env: profiledOnly('bridge') } : {}),
    });
  } catch (err) {
    throw new StageError(`paper bridge did not connect all ${paperAccounts.length} terminals: ${(err as Error).message}`);
  }
  started.push({ name: 'paper bridge', stop: () => bridge.stop(10_000) });
  if (paperAccounts.length > ACCOUNTS) await settle(ingress.url, token, paperAccounts.length);

  const connection = await Connection.connect({ address: temporal.address, connectTimeout: 5_000 });
  started.push({ name: 'Temporal client', stop: () => connection.close() });
  const client = new Client({ connection, namespace: 'default' });

  const pids = {
    ingress: nodePidInGroup(ingress.pid, path.join('dist', 'src', 'server.js')),
    worker: nodePidInGroup(worker.pid, path.join('dist', 'src', 'worker.js')),
    bridge: nodePidInGroup(bridge.pid, path.join('dist', 'src', 'paper', 'main.js')),
  };
  log(`stack ready: ingress ${ingress.url} (pid ${pids.ingress}), worker pid ${pids.worker}, paper bridge pid ${pids.bridge}`);
  if (opts.supervisionNice) {
    // Supervision after the order path: the ingress, the bridge and Redis keep their priority.
    const groups = [temporal.pid, worker.pid, ...moreWorkers.map((m) => m.pid)];
    const threads = groups.reduce((n, pgid) => n + reniceGroup(pgid, opts.supervisionNice!), 0);
    log(`Temporal and the workers at nice ${opts.supervisionNice} (${threads} threads in process groups ${groups.join(', ')})`);
  }
  const clusterInfo = temporal as Partial<TemporalCluster>;
  const temporalMetricsPortFound = clusterInfo.metricsUrl ? Number(new URL(clusterInfo.metricsUrl).port) : temporalMetricsPort(temporal.pid);
  return {
    runDir,
    temporal,
    ...(clusterInfo.postgres ? { postgresPid: postmasterPid(clusterInfo.postgres.dataDir) } : {}),
    redis,
    worker,
    moreWorkers,
    ingress,
    bridge,
    client,
    connection,
    ledger: new LedgerTail(ledgerFile),
    accounts,
    paperAccounts,
    secret,
    secretAll,
    secretSmall,
    probe,
    token,
    taskQueue,
    pids,
    temporalMetricsPort: temporalMetricsPortFound,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Stages shared by the scenarios

/**
 * After 1,000 terminals have said hello their first long-polls and presence writes keep the ingress busy for a while
 * (on 2 shared cores, past the warm-up's 10 s per request): wait until three polls in a row answer within 100 ms.
 */
async function settle(ingressUrl: string, token: string, terminals: number): Promise<void> {
  const t0 = Date.now();
  let fast = 0;
  while (fast < 3) {
    if (Date.now() - t0 > 180_000) throw new StageError(`the ingress did not settle within 180 s after ${terminals} terminals connected`);
    const sent = Date.now();
    const answered = await httpJson(`${ingressUrl}/v1/signals/sig_${'0'.repeat(32)}`, { headers: { authorization: `Bearer ${token}` }, timeoutMs: 30_000 })
      .then(() => true)
      .catch(() => false);
    fast = answered && Date.now() - sent <= 100 ? fast + 1 : 0;
    await sleep(200);
  }
  log(`the ingress settled ${((Date.now() - t0) / 1000).toFixed(1)} s after the ${terminals} terminals connected`);
}

/** Waits until Temporal has no running workflow (seen twice, a second apart: visibility lags a little). */
export async function drain(stack: Stack, what: string, signals: number, helpers: { infra: InfraModule }): Promise<{ ms: number; deadlineMs: number }> {
  // Generous (this box may be shared and slow): two minutes plus 200 ms a signal (at least 5 signals/s).
  const deadlineMs = 120_000 + signals * 200;
  const t0 = Date.now();
  let zeroSince: number | undefined;
  let last = -1;
  try {
    await helpers.infra.waitFor(
      `every workflow to finish after ${what}`,
      async () => {
        const { count } = await stack.client.workflow.count('ExecutionStatus="Running"');
        last = count;
        if (count !== 0) {
          zeroSince = undefined;
          return false;
        }
        zeroSince ??= Date.now();
        return Date.now() - zeroSince >= 1_000;
      },
      deadlineMs,
      500,
    );
  } catch (err) {
    throw new StageError(`drain after ${what}: ${(err as Error).message} (${last} still running)`);
  }
  const ms = Date.now() - t0 - 1_000;
  log(`drained after ${what} in ${(ms / 1000).toFixed(1)} s`);
  return { ms, deadlineMs };
}

/** A few signals through the whole path before anything is measured (JIT, connections, first-use costs). */
export async function warmUp(stack: Stack, helpers: { infra: InfraModule }): Promise<string[]> {
  const ids: string[] = [];
  const n = 40;
  for (let i = 0; i < n; i += 5) {
    const batch = await Promise.all(
      Array.from({ length: 5 }, (_, j) =>
        httpJson(`${stack.ingress.url}/webhook/custom/${stack.accounts[(i + j) % stack.accounts.length]}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ secret: stack.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 }),
        }),
      ),
    );
    for (const r of batch) {
      if (r.status !== 202) throw new StageError(`warm-up: the ingress answered ${r.status} ${JSON.stringify(r.body)} instead of 202`);
      ids.push(r.body.signalId as string);
    }
  }
  await helpers.infra
    .waitFor(
      `the ${n} warm-up signals to be filled by the paper bridge`,
      async () => {
        stack.ledger.update();
        return ids.every((id) => stack.ledger.bySignal.has(id));
      },
      60_000,
      200,
    )
    .catch((err: Error) => {
      throw new StageError(`warm-up: ${err.message}`);
    });
  return ids;
}
