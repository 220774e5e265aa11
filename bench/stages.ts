/**
 * Where the time of one request goes: `node dist/bench/stages.js [--n 200] [--temporal-db-dir DIR]` (after
 * `npm run build`). Starts the same stack as `npm run bench`, warms it up, then times each stage of the hot paths on
 * their own, one at a time (no queueing), with the service's own classes on connections of their own:
 *
 * - accept: route limiter (rate-limit-redis), secret lookup, account read (MGET + zod), fairness throttle,
 *   sequence number, zod validation of the body, one pino access-log line, Temporal start of signalWorkflow;
 * - poll: token lookup, the per-account read cap over the token's 200 accounts (as shipped: one round trip each; and
 *   pipelined, for comparison), Temporal describe();
 * - and whole requests through the ingress, one at a time: accept, poll, and 202 → filled at the paper bridge.
 *
 * Prints one table and writes bench/results/stages-<timestamp>.json and stages-latest.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { connectRedis } from '../src/redis';
import { RedisRegistry } from '../src/registry/registry';
import { RedisThrottle } from '../src/ratelimit/fairness';
import { RedisAccountSequencer } from '../src/bridge/ordering';
import { validateSignal } from '../src/domain/signal';
import { signalWorkflowId } from '../src/domain/ids';
import { ActionKey, SignalIdKey, SymbolKey } from '../src/temporal/search-attributes';
import type { AccountSnapshot, SignalWorkflowInput } from '../src/domain/workflow-input';
import { loadHelpers, REPO_ROOT } from './helpers';
import type { Options } from './cli';
import { fileStamp, httpJson, log } from './common';
import { BAR_CLOSE_ACCOUNTS } from './parameters';
import { writeResults } from './results-file';
import { cleanup, drain, startStack, warmUp, type Stack } from './stack';
import { summarize, type Summary } from './stats';
import { persistenceUsage, redisCommandsProcessed, scrapePersistence, type PersistenceUsage } from './work-counters';
import { timeline } from './timeline';
import { signalWorkflow } from '../workflows/signal';

async function time(n: number, fn: (i: number) => unknown): Promise<Summary> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return summarize(out.map((v) => Math.round(v * 1000) / 1000));
}

/** What one signal costs, counted rather than timed: stable across runs on a noisy machine. */
export interface WorkPerSignal {
  signals: number;
  persistence?: PersistenceUsage;
  redisCommandsPerSignal?: number;
  historyEvents?: { parent: number; child: number };
  workflowTasks?: { parent: number; child: number };
}
const work: WorkPerSignal = { signals: 0 };

async function measureStages(stack: Stack, n: number): Promise<Record<string, Summary>> {
  const res: Record<string, Summary> = {};
  const redis = connectRedis(stack.redis.url, { commandTimeoutMs: 500, name: 'bench-stages' });
  await new Promise<void>((resolve) => (redis.status === 'ready' ? resolve() : redis.once('ready', () => resolve())));
  const registry = new RedisRegistry(redis);
  const limits = { max: 1e9, windowMs: 60_000 };
  const throttle = new RedisThrottle(redis, { account_write: limits, broadcast: limits, account_read: limits }, 'stages:');
  const sequencer = new RedisAccountSequencer(redis);
  // The route limiter's store exactly as the ingress builds it (rate-limit-redis, EVALSHA sent as EVAL).
  const scripts = new Map<string, string>();
  const { createHash } = await import('node:crypto');
  const store = new RedisStore({
    prefix: 'stages:route:',
    sendCommand: (async (command: string, ...args: string[]) => {
      if (command.toUpperCase() === 'SCRIPT' && args[0]?.toUpperCase() === 'LOAD' && args[1] !== undefined) {
        const sha = createHash('sha1').update(args[1]).digest('hex');
        scripts.set(sha, args[1]);
        return sha;
      }
      if (command.toUpperCase() === 'EVALSHA' && scripts.has(args[0]!)) return redis.call('EVAL', scripts.get(args[0]!)!, ...args.slice(1));
      return redis.call(command, ...args);
    }) as never,
  });
  await store.init({ windowMs: 60_000 } as never);
  const account = stack.accounts[0]!;
  const body = { secret: stack.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 };
  const bodyText = JSON.stringify(body);
  const tokenAccounts = stack.accounts;

  log(`timing Redis stages (${n} each)`);
  res['redis: PING'] = await time(n, () => redis.ping());
  res['accept: route limiter (rate-limit-redis EVAL)'] = await time(n, () => store.increment(`account:${account}`));
  res['accept: secret lookup (GET + sha256)'] = await time(n, () => registry.authenticateSecret(stack.secret));
  res['accept: account read (MGET + zod parse)'] = await time(n, () => registry.getAccount(account));
  res['accept: fairness throttle (EVAL)'] = await time(n, () => throttle.hit('account_write', account));
  // On an account nobody serves, so no pending mark holds a real account back.
  res['accept: sequence number (EVAL)'] = await time(n, () => sequencer.next([{ accountId: 'stages-nobody', deadlineMs: Date.now() + 1000 }]));
  res['accept: all five Redis steps in series'] = await time(n, async () => {
    await store.increment(`account:${account}`);
    await registry.authenticateSecret(stack.secret);
    await registry.getAccount(account);
    await throttle.hit('account_write', account);
    (await sequencer.next([{ accountId: 'stages-nobody', deadlineMs: Date.now() + 1000 }])).map((n) => n.seq);
  });

  log('timing CPU stages');
  res['accept: JSON.parse of the body'] = await time(n * 10, () => JSON.parse(bodyText));
  res['accept: validateSignal (zod, schema built per call)'] = await time(n * 5, () => validateSignal(JSON.parse(bodyText)));
  const logFile = path.join(stack.runDir, 'stages-pino.log');
  const logger = pino(
    { name: 'ingress', level: 'info', redact: { paths: ['secret', '*.secret'], censor: '[redacted]' } },
    pino.destination({ dest: logFile, sync: true }),
  );
  res['accept: one access-log line (pino, sync to a file)'] = await time(n * 10, () =>
    logger.info(
      { correlationId: 'req_0123456789abcdef0123456789abcdef', method: 'POST', route: '/webhook/custom/:accountId', status: 202, ms: 3.21 },
      'request',
    ),
  );

  log('timing poll guard stages');
  res['poll: token lookup (GET + sha256)'] = await time(n, () => registry.authenticateToken(stack.token));
  res[`poll: read cap, ${tokenAccounts.length} accounts, concurrent EVALs (before 2026-11-24)`] = await time(Math.min(n, 100), () =>
    Promise.all(tokenAccounts.map((acc) => throttle.hit('account_read', acc))),
  );
  res[`poll: read cap, ${tokenAccounts.length} accounts, one EVALSHA pipeline (as shipped)`] = await time(Math.min(n, 100), () =>
    throttle.hitEach('account_read', tokenAccounts),
  );

  log('timing Temporal stages');
  const snapshot = (await registry.getAccounts([account]))[0]!;
  const target: AccountSnapshot = {
    id: snapshot.id,
    owner: snapshot.owner,
    platform: snapshot.platform,
    region: snapshot.region,
    bridgeVersion: snapshot.bridgeVersion,
    risk: snapshot.risk,
    symbols: snapshot.symbols,
  };
  const started: string[] = [];
  // Real signals on real accounts (filled by the paper bridge), one at a time, spread over the accounts.
  res['accept: Temporal start of signalWorkflow (gRPC)'] = await time(Math.min(n, 100), async (i) => {
    const acc = stack.accounts[i % stack.accounts.length]!;
    const acceptedAtMs = Date.now();
    const [seq] = (await sequencer.next([{ accountId: acc, deadlineMs: acceptedAtMs + 30_000 }])).map((n) => n.seq);
    const signalId = `sig_${randomBytes(16).toString('hex')}`;
    const input: SignalWorkflowInput = {
      signalId,
      correlationId: `stages-${i}`,
      acceptedAt: new Date(acceptedAtMs).toISOString(),
      signal: { action: 'buy', symbol: 'EURUSD', volume: 0.01 },
      targets: [{ account: { ...target, id: acc }, seq: seq!, expiresAt: new Date(acceptedAtMs + 30_000).toISOString() }],
    };
    await stack.client.workflow.start(signalWorkflow, {
      taskQueue: stack.taskQueue,
      workflowId: signalWorkflowId(signalId),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: { correlationId: input.correlationId, origin: null },
      typedSearchAttributes: [
        { key: SignalIdKey, value: signalId },
        { key: ActionKey, value: 'buy' },
        { key: SymbolKey, value: 'EURUSD' },
      ],
    });
    started.push(signalId);
  });
  await drain(stack, 'the Temporal start stage', started.length, { infra: loadHelpers().infra });
  res['poll: Temporal describe() of a finished signal'] = await time(n, (i) =>
    stack.client.workflow.getHandle(signalWorkflowId(started[i % started.length]!)).describe(),
  );

  log('timing whole requests through the ingress, one at a time');
  const accepted: { signalId: string; t202: number }[] = [];
  res['HTTP: POST /webhook/custom/<account> → 202'] = await time(Math.min(n, 100), async (i) => {
    const r = await httpJson(`${stack.ingress.url}/webhook/custom/${stack.accounts[i % stack.accounts.length]}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodyText,
    });
    if (r.status !== 202) throw new Error(`accept answered ${r.status}: ${JSON.stringify(r.body)}`);
    accepted.push({ signalId: r.body.signalId as string, t202: Date.now() });
  });
  res['HTTP: GET /v1/signals/<id> (token with 200 accounts)'] = await time(n, (i) =>
    httpJson(`${stack.ingress.url}/v1/signals/${started[i % started.length]}`, { headers: { authorization: `Bearer ${stack.token}` } }),
  );
  // 202 → filled with nothing else going on: one signal at a time, waiting for its fill.
  const e2e: number[] = [];
  const e2eSignals: { signalId: string; accountId: string; t202: number; fill: number }[] = [];
  const persistenceBefore = await scrapePersistence(stack.temporalMetricsPort);
  const redisBefore = await redisCommandsProcessed(redis);
  for (let i = 0; i < Math.min(n, 50); i++) {
    const r = await httpJson(`${stack.ingress.url}/webhook/custom/${stack.accounts[i % 10]}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodyText,
    });
    const t202 = Date.now();
    if (r.status !== 202) throw new Error(`accept answered ${r.status}`);
    const id = r.body.signalId as string;
    const deadline = Date.now() + 30_000;
    for (;;) {
      stack.ledger.update();
      const fill = stack.ledger.bySignal.get(id)?.[0];
      if (fill) {
        e2e.push(fill.t - t202);
        e2eSignals.push({ signalId: id, accountId: stack.accounts[i % 10]!, t202, fill: fill.t });
        break;
      }
      if (Date.now() > deadline) throw new Error(`signal ${id} not filled within 30 s`);
      await sleep(5);
    }
  }
  res['E2E: 202 → filled at the paper bridge, one signal at a time'] = summarize(e2e);
  await drain(stack, 'the end-to-end stage', e2eSignals.length, { infra: loadHelpers().infra });
  work.persistence = persistenceUsage(persistenceBefore, await scrapePersistence(stack.temporalMetricsPort), e2eSignals.length);
  // Includes the paper bridge's idle long-polls over 200 accounts during the phase: an upper bound.
  work.redisCommandsPerSignal = Math.round((((await redisCommandsProcessed(redis)) - redisBefore) / e2eSignals.length) * 10) / 10;
  work.signals = e2eSignals.length;
  log('reading the Temporal histories of those signals');
  Object.assign(res, await timeline(stack, e2eSignals, work));
  redis.disconnect();
  return res;
}

async function main(argv: string[]): Promise<number> {
  let n = 200;
  const opts: Options = { quick: true, scenarios: new Set(), cpuProf: false, steadyRate: 50, pollRate: 100, barClose: BAR_CLOSE_ACCOUNTS };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--n') n = Math.max(10, Math.min(2000, Number(argv[++i])));
    else if (argv[i] === '--temporal-db-dir') opts.temporalDbDir = path.resolve(argv[++i] ?? '');
    else if (argv[i] === '--temporal' && (argv[i + 1] === 'dev' || argv[i + 1] === 'cluster')) opts.temporal = argv[++i] as 'dev' | 'cluster';
    else {
      process.stderr.write('usage: node dist/bench/stages.js [--n 200] [--temporal-db-dir DIR] [--temporal dev|cluster]\n');
      return 2;
    }
  }
  const stamp = fileStamp(new Date());
  const runDir = path.join(REPO_ROOT, '.run', 'bench', `stages-${stamp}`);
  fs.mkdirSync(runDir, { recursive: true });
  process.env.TEST_RUN_DIR = runDir;
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const loadBefore = os.loadavg();
  let stages: Record<string, Summary> = {};
  let failure: Error | undefined;
  try {
    const helpers = loadHelpers();
    const stack = await startStack(helpers, opts, runDir);
    await warmUp(stack, helpers);
    await drain(stack, 'the warm-up', 40, helpers);
    stages = await measureStages(stack, n);
  } catch (err) {
    failure = err as Error;
  } finally {
    await cleanup();
  }
  const width = Math.max(...Object.keys(stages).map((k) => k.length), 10);
  const fmt = (v: number | null) => (v === null ? '—' : v < 1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v.toFixed(1)).padStart(9);
  process.stdout.write(
    `\nstage timings, one at a time (ms); ${os.cpus().length} CPUs, load average before ${loadBefore.map((v) => v.toFixed(2)).join(' ')}; Temporal db in ${opts.temporalDbDir ?? 'the run directory'}\n\n`,
  );
  process.stdout.write(`${'stage'.padEnd(width)}  ${'count'.padStart(6)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'mean'.padStart(9)}\n`);
  for (const [k, v] of Object.entries(stages))
    process.stdout.write(`${k.padEnd(width)}  ${String(v.count).padStart(6)} ${fmt(v.p50)} ${fmt(v.p99)} ${fmt(v.mean)}\n`);
  const profile =
    opts.temporal === 'cluster'
      ? `cluster (${process.env.TEMPORAL_CLUSTER_SHARDS ?? 8} shards)`
      : process.env.TEMPORAL_DEV_PROFILE === 'stock'
        ? 'stock'
        : process.env.TEMPORAL_DEV_PROFILE_WITHOUT
          ? `project without ${process.env.TEMPORAL_DEV_PROFILE_WITHOUT}`
          : 'project';
  const plus = process.env.TEMPORAL_DEV_PROFILE_PLUS ? ` plus ${process.env.TEMPORAL_DEV_PROFILE_PLUS}` : '';
  process.stdout.write(
    `\nwork per signal (Temporal dev-server profile: ${profile}${plus}), over ${work.signals} signals one at a time: ` +
      `persistence calls ${work.persistence?.callsPerSignal ?? '?'} (mean ${work.persistence?.meanMs ?? '?'} ms), ` +
      `history events parent ${work.historyEvents?.parent ?? '?'} + child ${work.historyEvents?.child ?? '?'}, ` +
      `workflow tasks parent ${work.workflowTasks?.parent ?? '?'} + child ${work.workflowTasks?.child ?? '?'}, ` +
      `Redis commands ${work.redisCommandsPerSignal ?? '?'} (with the bridge's idle polls)\n` +
      `top persistence operations: ${(work.persistence?.top ?? []).map((o) => `${o.op} ${Math.round((o.calls / Math.max(work.signals, 1)) * 10) / 10}×`).join(', ')}\n`,
  );
  const file = writeResults(
    {
      at: new Date().toISOString(),
      n,
      temporalDb: opts.temporalDbDir ?? 'run directory',
      temporalProfile: profile,
      loadavgBefore: loadBefore,
      stages,
      work,
      error: failure?.message ?? null,
    },
    stamp,
    'stages-',
  );
  process.stdout.write(`\n${path.relative(REPO_ROOT, file)}\n`);
  if (failure) {
    process.stderr.write(`stages FAILED: ${failure.message}\n`);
    return 1;
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`stages: ${(err as Error)?.stack ?? String(err)}\n`);
      void cleanup().finally(() => process.exit(1));
    },
  );
}
