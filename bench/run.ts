/**
 * `npm run bench` (after `npm run build`): the service's load scenarios against a whole local stack that this
 * program starts itself on free loopback ports, and stops again whatever happens (bench/README.md).
 *
 *   npm run bench                     every scenario, full durations
 *   npm run bench -- --quick          short durations (a smoke run)
 *   npm run bench -- --scenario 2,4   only these (3, 5 and 6 share one steady-load phase)
 *   npm run bench -- --cpu-prof       also write V8 CPU profiles of the ingress and the worker into the run dir
 *
 * Prints one table at the end and writes the figures to bench/results/<timestamp>.json and bench/results/latest.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadHelpers, REPO_ROOT } from './helpers';
import { parseOptions, USAGE, type Options } from './cli';
import { fileStamp, log } from './common';
import { stripLoad } from './children';
import { runScenarios } from './orchestration';
import { ACCOUNTS, CONCURRENCY, GOALS, LIMIT_RAISED, PLANS, STEADY_ACCOUNTS } from './parameters';
import { gitState, writeResults } from './results-file';
import { cleanup, startStack, type Stack } from './stack';
import { renderTable, round } from './stats';
import { rowsOf } from './table';
import type { Results } from './scenarios/context';

async function main(argv: string[]): Promise<number> {
  let opts: Options | 'help';
  try {
    opts = parseOptions(argv);
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const plan = { ...(opts.quick ? PLANS.quick : PLANS.full), ...(opts.steadySec ? { steadySec: opts.steadySec } : {}) };
  const startedAt = new Date();
  const stamp = fileStamp(startedAt);
  const runDir = path.join(REPO_ROOT, '.run', 'bench', stamp);
  fs.mkdirSync(runDir, { recursive: true });
  // The helpers' run directory (logs, the Temporal and Redis dirs, process output).
  process.env.TEST_RUN_DIR = runDir;

  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: stopping everything this bench started (again to exit at once)`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const loadBefore = os.loadavg().map((v) => round(v));
  const git = gitState();
  log(
    `${opts.quick ? 'quick' : 'full'} run of scenarios ${[...opts.scenarios].sort((a, b) => a - b).join(', ')} on ${os.cpus().length} CPUs; load average before: ${loadBefore.join(' ')}`,
  );
  if (loadBefore[0]! > 0.5) log(`warning: the machine is already busy (load average ${loadBefore[0]}); the figures will show it`);

  const results: Results = {
    drains: {},
    loadavg: { before: loadBefore },
    cpu: {},
    errors: [],
    memoryBaseline: {},
    temporalPersistence: {},
    startedVs202: {},
    memoryByPhase: {},
    redisCommands: {},
    barCloses: {},
  };
  let failure: Error | undefined;
  let stack: Stack | undefined;
  try {
    const helpers = loadHelpers();
    stack = await startStack(helpers, opts, runDir);
    await runScenarios(stack, helpers, opts, plan, results);
  } catch (err) {
    failure = err as Error;
  } finally {
    log('stopping everything');
    await cleanup();
  }

  const rows = rowsOf(results, opts);
  const doc = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    mode: opts.quick ? 'quick' : 'full',
    scenarios: [...opts.scenarios].sort((a, b) => a - b),
    ok: failure === undefined && results.errors.length === 0,
    error: failure ? failure.message : null,
    stageErrors: results.errors,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? null,
      memMb: Math.round(os.totalmem() / 2 ** 20),
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
    },
    git,
    plan,
    parameters: {
      accounts: ACCOUNTS,
      concurrency: CONCURRENCY,
      steadyRate: opts.steadyRate,
      steadyAccounts: STEADY_ACCOUNTS,
      pollRate: opts.pollRate,
      barCloseAccounts: opts.barClose,
      logLevel: 'info',
      limitsRaisedTo: Number(LIMIT_RAISED),
      cpuProf: opts.cpuProf,
      cpuProfThreadsSec: opts.cpuProfThreadsSec ?? 0,
      ingressNodeOptions: opts.ingressNodeOptions ?? null,
      temporal: opts.temporal ?? 'dev',
      workers: opts.workers ?? 1,
      supervisionNice: opts.supervisionNice ?? 0,
      temporalDb: opts.temporalDbDir ? `${opts.temporalDbDir} (fresh file)` : 'run directory (fresh file)',
    },
    goals: GOALS,
    rows,
    scenarioData: {
      floor: results.floor ? { ...results.floor, signalIds: undefined } : undefined,
      saturation: stripLoad(results.saturation),
      half: stripLoad(results.half),
      steady: results.steady ? { ...results.steady, load: stripLoad(results.steady.load) } : undefined,
      fanout: results.fanout,
      bareFloor: results.bareFloor,
      barCloses: results.barCloses,
      busyBarClose: results.busyBarClose,
      wakeUp: results.wakeUp,
      redisCommands: results.redisCommands,
      pollNoWorker: results.pollNoWorker,
      drains: results.drains,
      loadavg: results.loadavg,
      cpu: results.cpu,
      memoryBaseline: results.memoryBaseline,
      memoryByPhase: results.memoryByPhase,
      temporalPersistence: results.temporalPersistence,
      startedVs202: results.startedVs202,
    },
    runDir: path.relative(REPO_ROOT, runDir),
  };
  const file = writeResults(doc, stamp);

  process.stdout.write(
    `\nExternal Signals Service benchmark (${doc.mode}; ${doc.machine.cpus} CPUs; Temporal db in ${doc.parameters.temporalDb}; load average before ${loadBefore.join(' ')}; ${doc.startedAt})\n\n${renderTable(rows)}\n\n`,
  );
  const missed = rows.filter((r) => r.verdict === 'missed').length;
  const met = rows.filter((r) => r.verdict === 'met').length;
  process.stdout.write(`${met} goals met, ${missed} missed. Figures: ${path.relative(REPO_ROOT, file)} (and bench/results/latest.json); logs: ${doc.runDir}\n`);
  for (const e of results.errors) process.stderr.write(`\nstage FAILED: ${e}\n`);
  if (failure) process.stderr.write(`\nbench FAILED: ${failure.message}\n`);
  return failure || results.errors.length > 0 ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`bench: ${(err as Error)?.stack ?? String(err)}\n`);
      void cleanup().finally(() => process.exit(1));
    },
  );
}
