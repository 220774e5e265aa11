/** The bench's command line: what `npm run bench -- --help` prints and how the arguments become Options. */
import fs from 'node:fs';
import path from 'node:path';
import { BAR_CLOSE_ACCOUNTS, POLL_RATE, STEADY_RATE } from './parameters';

export const USAGE = `usage: npm run bench -- [--quick] [--scenario N[,N...]] [--cpu-prof] [--cpu-prof-threads SEC] [--temporal-db-dir DIR] [--steady-rate N] [--steady-sec N] [--poll-rate N] [--bar-close N]

  --quick          shorter durations, one fan-out run (a smoke run; the figures are noisier)
  --scenario LIST  run only these scenarios (1 floor, 2 ingress, 3 end to end, 4 fan-out, 5 poll, 6 memory,
                   7 one signal at a time, 8 overload at twice the sustained rate, 9 the bare topology's floor
                   side by side, 10 bar close (N accounts' alerts at the same instant, and again 5 s later), 11 the
                   bridge's long-poll wake-up, 12 bar close of 1,000 accounts (the paper bridge then serves 1,000),
                   13 bar close of 1,000 alerts over 100 accounts (10 each), 14 busy 40/s for 20 s (5 s) then a bar
                   close of 100; 10, 12, 13 and 14 each with the floor server's bar close beside them);
                   4 also runs a broadcast to the first 100 accounts
                   3, 5 and 6 are measured in one steady-load phase, so any of them runs that phase
  --cpu-prof       profile the ingress, the worker and the paper bridge (V8 sampling profiler, preloaded by bench/cpu-profile.ts); the
                   .cpuprofile files land in <run dir>/profiles when they stop
  --cpu-prof-threads SEC
                   --cpu-prof, and the worker's workflow threads too, each for its first SEC seconds (1 to 3600): the
                   SDK ends those threads without an exit event, so their profiles are written on a timer
  --temporal-db-dir DIR
                   put the Temporal dev server's fresh SQLite file in DIR (e.g. /dev/shm, to take the disk's fsync
                   out of the figures) instead of the run directory; it is deleted at the end
  --steady-rate N  signals/s of the steady phase (scenarios 3, 5, 6); default 50, the scenario's rate. For diagnosis
                   (e.g. the end-to-end latency below the stack's capacity); the goals stay those of the 50/s run
  --steady-sec N   seconds of the steady phase (default: 60, 15 with --quick); docs/performance.md's figures use 20
  --bar-close N    accounts whose alerts are posted at the same instant in scenario 10 (default 100; 1 to 200)
  --poll-rate N    polls/s beside the steady phase and without the worker; default 100; 0 = no poll beside the
                   steady phase (diagnosis: the end-to-end latency without the poll's load)
  --temporal dev|cluster
                   which Temporal: the dev server with the project's profile (default), or the cluster profile (the
                   real server on a fresh PostgreSQL of the run's own; TEMPORAL_CLUSTER_SHARDS, default 8)
  --workers N      worker processes (default 1; 1 to 4)
  --ingress-node-options S
                   NODE_OPTIONS for the ingress process only (diagnosis: e.g. V8 heap flags against its peak RSS); the
                   flags of scripts/node-flags.ts come after NODE_OPTIONS on the command line and win
  --supervision-nice N
                   the nice value (0 to 19) of the Temporal server and the worker processes once the stack is up
                   (default 0): on one shared machine, the order path (ingress, bridge, Redis) is then served first and
                   Temporal's supervision takes what CPU is left (CHANGELOG.md, "Performance")
  --help`;

export interface Options {
  quick: boolean;
  scenarios: Set<number>;
  cpuProf: boolean;
  /** Seconds the worker's workflow threads are profiled for (0: not at all). */
  cpuProfThreadsSec?: number;
  temporalDbDir?: string;
  steadyRate: number;
  steadySec?: number;
  barClose: number;
  pollRate: number;
  ingressNodeOptions?: string;
  temporal?: 'dev' | 'cluster';
  workers?: number;
  /** The nice value of Temporal and the workers (0: as started). */
  supervisionNice?: number;
}

export function parseOptions(argv: string[]): Options | 'help' {
  const opts: Options = { quick: false, scenarios: new Set(), cpuProf: false, steadyRate: STEADY_RATE, barClose: BAR_CLOSE_ACCOUNTS, pollRate: POLL_RATE };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--quick') opts.quick = true;
    else if (arg === '--cpu-prof') opts.cpuProf = true;
    else if (arg === '--cpu-prof-threads' || arg.startsWith('--cpu-prof-threads=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(value) || value < 1 || value > 3600) throw new UsageError('--cpu-prof-threads must be 1 to 3600 seconds');
      opts.cpuProf = true;
      opts.cpuProfThreadsSec = value;
    } else if (arg === '--temporal-db-dir' || arg.startsWith('--temporal-db-dir=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value) throw new UsageError('--temporal-db-dir needs a directory');
      if (!fs.existsSync(value) || !fs.statSync(value).isDirectory()) throw new UsageError(`--temporal-db-dir: ${value} is not a directory`);
      opts.temporalDbDir = path.resolve(value);
    } else if (arg === '--steady-rate' || arg.startsWith('--steady-rate=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(value) || value < 1 || value > 1000) throw new UsageError('--steady-rate must be a whole number of signals/s, 1 to 1000');
      opts.steadyRate = value;
    } else if (arg === '--steady-sec' || arg.startsWith('--steady-sec=')) {
      opts.steadySec = wholeNumber(arg, arg.includes('=') ? undefined : argv[++i], '--steady-sec', 1, 600);
    } else if (arg === '--bar-close' || arg.startsWith('--bar-close=')) {
      opts.barClose = wholeNumber(arg, arg.includes('=') ? undefined : argv[++i], '--bar-close', 1, 200);
    } else if (arg === '--poll-rate' || arg.startsWith('--poll-rate=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(value) || value < 0 || value > 1000) throw new UsageError('--poll-rate must be a whole number of polls/s, 0 to 1000');
      opts.pollRate = value;
    } else if (arg === '--scenario' || arg.startsWith('--scenario=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value) throw new UsageError('--scenario needs a value, e.g. --scenario 2 or --scenario 3,5');
      for (const part of value.split(',')) {
        const n = Number(part.trim());
        if (!Number.isInteger(n) || n < 1 || n > SCENARIOS) throw new UsageError(`--scenario: "${part}" is not a scenario number 1 to ${SCENARIOS}`);
        opts.scenarios.add(n);
      }
    } else if (arg === '--temporal' || arg.startsWith('--temporal=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (value !== 'dev' && value !== 'cluster') throw new UsageError('--temporal must be dev or cluster');
      opts.temporal = value;
    } else if (arg === '--workers' || arg.startsWith('--workers=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(value) || value < 1 || value > 4) throw new UsageError('--workers must be 1 to 4');
      opts.workers = value;
    } else if (arg === '--ingress-node-options' || arg.startsWith('--ingress-node-options=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value) throw new UsageError('--ingress-node-options needs a value, e.g. --ingress-node-options=--max-semi-space-size=4');
      opts.ingressNodeOptions = value;
    } else if (arg === '--supervision-nice' || arg.startsWith('--supervision-nice=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(value) || value < 0 || value > 19) throw new UsageError('--supervision-nice must be 0 to 19');
      opts.supervisionNice = value;
    } else throw new UsageError(`unknown argument ${arg}`);
  }
  if (opts.scenarios.size === 0) for (let n = 1; n <= SCENARIOS; n++) opts.scenarios.add(n);
  return opts;
}

export class UsageError extends Error {}

const SCENARIOS = 14;

/** `--name N` or `--name=N`: a whole number in [min, max]. `next`: the following argument, when there is no "=". */
function wholeNumber(arg: string, next: string | undefined, name: string, min: number, max: number): number {
  const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : next);
  if (!Number.isInteger(value) || value < min || value > max) throw new UsageError(`${name} must be a whole number, ${min} to ${max}`);
  return value;
}
