/**
 * One paper bridge process serving many idle accounts over multi-account sessions (docs/performance.md, "Many idle
 * accounts on one bridge"): the service at its default settings (worker, ingress, Redis, Temporal dev server), a
 * registry of ACCOUNTS accounts, one paper bridge for all of them. Measured:
 *
 * - start: the process's start → every hello answered → every account online as the owner's page says it;
 * - idle, over MEASURE_SEC: the ingress's, the bridge's and Redis's CPU and memory, Redis's commands and bytes a
 *   second, and, from Redis's MONITOR over MONITOR_SEC, the commands and bytes per account per minute by kind
 *   (presence, figures, books, polls …);
 * - presence: the bridge SIGKILLed → every account offline; started again → every account online.
 *
 *   npm run build && node dist/bench/idle-fleet.js                # ACCOUNTS=10000 MEASURE_SEC=120 MONITOR_SEC=30
 *   ACCOUNTS=1000 node dist/bench/idle-fleet.js
 *   CPU_PROF=1 node dist/bench/idle-fleet.js                       # and the ingress's CPU profile in the run directory
 *
 * The results go to bench/results/idle-fleet-<accounts>-<time>.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisLastSeen, isOnline } from '../src/bridge/presence';
import { connectionsTo } from '../support/sockets';
import { monitorRedis } from '../support/redis-monitor';
import { loadHelpers, REPO_ROOT, type PaperBridgeProcess } from './helpers';
import { baseEnv, credential, fileStamp, log } from './common';
import { cpuSnapshot, cpuUsage, describeCpu } from './cpu';
import { nodePidInGroup, readMemory } from './memory';
import { registryDocument } from './stack';
import { round } from './stats';

const ACCOUNTS = Number(process.env.ACCOUNTS ?? 10_000);
const MEASURE_SEC = Number(process.env.MEASURE_SEC ?? 120);
const MONITOR_SEC = Number(process.env.MONITOR_SEC ?? 30);
/** How long each wait may take before the run fails, naming it. */
const DEADLINE_MS = 300_000;
/** How often the presence of every account is read while a presence change is timed (one pipeline of GETs). */
const PRESENCE_READ_EVERY_MS = 500;

const accountIds = Array.from({ length: ACCOUNTS }, (_, i) => `idle-${String(i).padStart(5, '0')}`);
const OWNER = 'bench-owner';

async function main(): Promise<void> {
  const { infra, processes } = loadHelpers();
  processes.ensureBuilt();
  const runDir = fs.mkdtempSync(path.join(REPO_ROOT, '.run', `idle-fleet-${ACCOUNTS}-`));
  process.env.TEST_RUN_DIR = runDir;
  process.env.TEMPORAL_BIN = infra.temporalBinary();
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const [temporal, redisServer] = await Promise.all([infra.startTemporal({ dbFile: path.join(runDir, 'temporal.db') }), infra.startRedis()]);
    stops.push(
      () => temporal.stop(),
      () => redisServer.stop(),
    );
    // What the process helpers read (as jest's globalSetup would set it).
    Object.assign(process.env, {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEST_TEMPORAL_NAMESPACE_B: 'default',
      TEST_TEMPORAL_DB: temporal.dbFile,
      REDIS_URL: redisServer.url,
    });
    const tokens = Object.fromEntries(accountIds.map((id) => [id, credential('brg_idle_')]));
    const registryFile = path.join(runDir, 'registry.json');
    fs.writeFileSync(
      registryFile,
      JSON.stringify(registryDocument(accountIds, tokens, [{ secret: credential('whsec_idle_'), accounts: accountIds }], credential('tok_idle_'))),
      { mode: 0o600 },
    );
    const imported = await processes.runAdminProcess(['import', registryFile], { ...baseEnv(), REDIS_URL: redisServer.url }, { timeoutMs: 300_000 });
    if (imported.code !== 0) throw new Error(`admin import failed: ${imported.stderr.trim()}`);
    log(`${ACCOUNTS} accounts imported`);

    // The service's defaults: only where to find Temporal and Redis, and a task queue of the run's own.
    const env = {
      ...baseEnv(),
      REDIS_URL: redisServer.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'idle-fleet',
      WORKER_METRICS_PORT: '0',
    };
    const worker = await processes.startWorkerProcess(env, { label: 'worker' });
    stops.unshift(() => worker.stop(15_000));
    // CPU_PROF=1: the ingress's V8 CPU profile, written into the run directory when it stops (bench/cpu-profile.ts).
    // INGRESS_NODE_OPTIONS: more Node options for the ingress (diagnosis, e.g. `--require` of a preload that sets V8 flags).
    const nodeOptions = [
      ...(process.env.CPU_PROF ? [`--require ${path.join(__dirname, 'cpu-profile.js')}`] : []),
      ...(process.env.INGRESS_NODE_OPTIONS ? [process.env.INGRESS_NODE_OPTIONS] : []),
    ];
    const ingressEnv: Record<string, string> = { ...env, ...(nodeOptions.length ? { NODE_OPTIONS: nodeOptions.join(' ') } : {}) };
    if (process.env.CPU_PROF) ingressEnv.BENCH_CPU_PROFILE_DIR = path.join(runDir, 'profiles');
    const ingress = await processes.startIngressProcess(ingressEnv, { label: 'ingress' });
    stops.unshift(() => ingress.stop(10_000));
    const redis = new Redis(redisServer.url);
    stops.unshift(() => redis.quit());
    const seen = new RedisLastSeen(redis);
    const accounts = accountIds.map((id) => ({ id, owner: OWNER }));
    /** How many accounts the owner's page shows online now. */
    const onlineNow = async () => {
      const times = await seen.lastSeen(accounts);
      const now = new Date();
      return times.filter((t) => isOnline(t, now)).length;
    };
    const until = async (what: string, done: () => Promise<boolean>) => {
      const t0 = Date.now();
      while (!(await done())) {
        if (Date.now() - t0 > DEADLINE_MS) throw new Error(`${what}: not within ${DEADLINE_MS} ms`);
        await sleep(PRESENCE_READ_EVERY_MS);
      }
      return Date.now() - t0;
    };

    log(`starting one paper bridge for ${ACCOUNTS} accounts`);
    const startedAt = Date.now();
    const bridgeStarting = processes.startPaperBridgeProcess({
      registryFile,
      ingressUrl: ingress.url,
      ledgerFile: path.join(runDir, 'ledger.jsonl'),
      label: 'paper-fleet',
      readyTimeoutMs: DEADLINE_MS,
    });
    bridgeStarting.catch(() => undefined); // awaited below: its failure is the run's
    stops.unshift(async () => (await bridgeStarting).stop(10_000));
    const allOnlineMs = await until('every account online after the start', async () => (await onlineNow()) === ACCOUNTS);
    const bridge: PaperBridgeProcess = await bridgeStarting;
    const helloMs = Date.now() - startedAt;
    log(`every account online ${allOnlineMs} ms after the start; every hello answered by ${helloMs} ms`);

    const port = ingress.port;
    const pids = {
      ingress: nodePidInGroup(ingress.pid, path.join('dist', 'src', 'server.js')),
      bridge: nodePidInGroup(bridge.pid, path.join('dist', 'src', 'paper', 'main.js')),
      redis: redisServer.pid,
    };
    // Settled: the first books and figures of every account are behind (one round of each, 60 s and 30 s).
    await sleep(30_000);

    const info = async () => {
      const text = (await redis.info('stats')) + (await redis.info('memory'));
      const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
      return {
        commands: field('total_commands_processed'),
        inBytes: field('total_net_input_bytes'),
        outBytes: field('total_net_output_bytes'),
        usedMemory: field('used_memory'),
      };
    };
    const groups = { ingress: ingress.pid, worker: worker.pid, bridge: bridge.pid, redis: redisServer.pid, temporal: temporal.pid };
    const connections: number[] = [];
    const cpu0 = cpuSnapshot(groups);
    const redis0 = await info();
    const t0 = Date.now();
    const memory: Record<string, number[]> = { ingress: [], bridge: [] };
    while (Date.now() - t0 < MEASURE_SEC * 1000) {
      await sleep(1_000);
      connections.push(connectionsTo(bridge.pid, port));
      for (const [name, pid] of [
        ['ingress', pids.ingress],
        ['bridge', pids.bridge],
      ] as const) {
        const m = pid ? readMemory(pid) : undefined;
        if (m) memory[name]!.push(m.rssKb);
      }
    }
    const cpu = cpuUsage(cpu0, cpuSnapshot(groups));
    const redis1 = await info();
    const seconds = (Date.now() - t0) / 1000;
    log(describeCpu(cpu));

    const byKind = await monitorKinds(redisServer.url, MONITOR_SEC);
    const perAccountMinute = (n: number, sec: number) => round((n / ACCOUNTS) * (60 / sec), 3);
    const kinds = Object.fromEntries(
      Object.entries(byKind)
        .sort((a, b) => b[1].commands - a[1].commands)
        .map(([k, v]) => [
          k,
          { commandsPerAccountPerMinute: perAccountMinute(v.commands, MONITOR_SEC), bytesPerAccountPerMinute: perAccountMinute(v.bytes, MONITOR_SEC) },
        ]),
    );

    // Presence: the process killed (its sockets closed by the kernel), then started again.
    const killedAt = Date.now();
    await bridge.kill9();
    const offlineMs = await until('every account offline after the SIGKILL', async () => (await onlineNow()) === 0);
    log(`every account offline ${offlineMs} ms after the SIGKILL`);
    const restartedAt = Date.now();
    const restarting = bridge.restart();
    const onlineAgainMs = await until('every account online after the restart', async () => (await onlineNow()) === ACCOUNTS);
    await restarting;
    log(`every account online ${onlineAgainMs} ms after the restart (the kill ${restartedAt - killedAt} ms before)`);

    const mb = (kb: number[]) => (kb.length ? round(Math.max(...kb) / 1024, 1) : null);
    const results = {
      at: new Date().toISOString(),
      accounts: ACCOUNTS,
      start: { allOnlineMs, helloMs },
      idle: {
        seconds: round(seconds, 1),
        cpuCores: cpu.byProgram,
        otherProcessesCores: cpu.others,
        machineCores: cpu.machine,
        peakRssMb: { ingress: mb(memory.ingress!), bridge: mb(memory.bridge!) },
        redis: {
          usedMemoryMb: round(redis1.usedMemory / 2 ** 20, 1),
          commandsPerSecond: round((redis1.commands - redis0.commands) / seconds, 1),
          inBytesPerSecond: round((redis1.inBytes - redis0.inBytes) / seconds, 0),
          outBytesPerSecond: round((redis1.outBytes - redis0.outBytes) / seconds, 0),
          commandsPerAccountPerMinute: perAccountMinute(redis1.commands - redis0.commands, seconds),
          inBytesPerAccountPerMinute: perAccountMinute(redis1.inBytes - redis0.inBytes, seconds),
        },
        connectionsToIngress: { max: Math.max(...connections), min: Math.min(...connections) },
        monitorSeconds: MONITOR_SEC,
        byKind: kinds,
      },
      presence: { offlineAfterKillMs: offlineMs, onlineAfterRestartMs: onlineAgainMs },
    };
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    const out = path.join(REPO_ROOT, 'bench', 'results', `idle-fleet-${ACCOUNTS}-${fileStamp(new Date())}.json`);
    fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
    log(`results in ${path.relative(REPO_ROOT, out)}`);
  } finally {
    for (const stop of stops) await stop().catch((err: Error) => log(`stopping: ${err.message}`));
  }
}

/**
 * Redis's commands over `sec` seconds by kind: the command and its key with the account id taken out
 * (`SET es:seen:*`; a script by its first key, its body being no name), and the bytes of its arguments (what crossed
 * the socket, less RESP's framing).
 */
async function monitorKinds(url: string, sec: number): Promise<Record<string, { commands: number; bytes: number }>> {
  const kinds: Record<string, { commands: number; bytes: number }> = {};
  const monitor = await monitorRedis(url, ({ args }) => {
    const command = args[0] ?? '';
    const keyName = (/^EVAL(SHA)?$/i.test(command) ? args[3] : args[1]) ?? '';
    const kind = `${command.toUpperCase()} ${keyName.replace(/idle-\d{5}/g, '*').replace(/[A-Za-z0-9_-]{20,}/g, '…')}`.trim();
    const k = (kinds[kind] ??= { commands: 0, bytes: 0 });
    k.commands++;
    k.bytes += args.reduce((n, a) => n + Buffer.byteLength(a), 0);
  });
  await sleep(sec * 1000);
  monitor.stop();
  return kinds;
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
