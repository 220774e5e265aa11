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
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import {
  loadHelpers,
  REPO_ROOT,
  type IngressProcess,
  type InfraModule,
  type PaperBridgeProcess,
  type ProcessesModule,
  type RedisServer,
  type ServiceProcess,
  type TemporalServer,
  type TemporalCluster,
  type ClusterModule,
} from './helpers';
import type { AcceptedRecord, LoadResult, LoadSpec } from './load';
import type { FloorResult, FloorSpec } from './floor';
import { goalRow, infoRow, renderTable, round, summarize, type Row, type Summary } from './stats';
import { oneAtATime, tallyOutcomes, type OneAtATime, type OutcomeTally } from './outcomes';

// ---------------------------------------------------------------------------------------------------------------
// Options

const USAGE = `usage: npm run bench -- [--quick] [--scenario N[,N...]] [--cpu-prof] [--temporal-db-dir DIR] [--steady-rate N] [--poll-rate N]

  --quick          shorter durations, one fan-out run (a smoke run; the figures are noisier)
  --scenario LIST  run only these scenarios (1 floor, 2 ingress, 3 end to end, 4 fan-out, 5 poll, 6 memory,
                   7 one signal at a time, 8 overload at twice the sustained rate);
                   3, 5 and 6 are measured in one steady-load phase, so any of them runs that phase
  --cpu-prof       profile the ingress and the worker (V8 sampling profiler, preloaded by bench/cpu-profile.ts); the
                   .cpuprofile files land in <run dir>/profiles when they stop
  --temporal-db-dir DIR
                   put the Temporal dev server's fresh SQLite file in DIR (e.g. /dev/shm, to take the disk's fsync
                   out of the figures) instead of the run directory; it is deleted at the end
  --steady-rate N  signals/s of the steady phase (scenarios 3, 5, 6); default 50, the scenario's rate. For diagnosis
                   (e.g. the end-to-end latency below the stack's capacity); the goals stay those of the 50/s run
  --poll-rate N    polls/s beside the steady phase and without the worker; default 100; 0 = no poll beside the
                   steady phase (diagnosis: the end-to-end latency without the poll's load)
  --temporal dev|cluster
                   which Temporal: the dev server with the project's profile (default), or the cluster profile (the
                   real server on a fresh PostgreSQL of the run's own; TEMPORAL_CLUSTER_SHARDS, default 8)
  --workers N      worker processes (default 1; 1 to 4)
  --ingress-node-options S
                   NODE_OPTIONS for the ingress process only (diagnosis: e.g. V8 heap flags against its peak RSS); the
                   flags of scripts/node-flags.ts come after NODE_OPTIONS on the command line and win
  --help`;

export interface Options {
  quick: boolean;
  scenarios: Set<number>;
  cpuProf: boolean;
  temporalDbDir?: string;
  steadyRate: number;
  pollRate: number;
  ingressNodeOptions?: string;
  temporal?: 'dev' | 'cluster';
  workers?: number;
}

function parseOptions(argv: string[]): Options | 'help' {
  const opts: Options = { quick: false, scenarios: new Set(), cpuProf: false, steadyRate: STEADY_RATE, pollRate: POLL_RATE };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--quick') opts.quick = true;
    else if (arg === '--cpu-prof') opts.cpuProf = true;
    else if (arg === '--temporal-db-dir' || arg.startsWith('--temporal-db-dir=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value) throw new UsageError('--temporal-db-dir needs a directory');
      if (!fs.existsSync(value) || !fs.statSync(value).isDirectory()) throw new UsageError(`--temporal-db-dir: ${value} is not a directory`);
      opts.temporalDbDir = path.resolve(value);
    } else if (arg === '--steady-rate' || arg.startsWith('--steady-rate=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(value) || value < 1 || value > 1000) throw new UsageError('--steady-rate must be a whole number of signals/s, 1 to 1000');
      opts.steadyRate = value;
    } else if (arg === '--poll-rate' || arg.startsWith('--poll-rate=')) {
      const value = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
      if (!Number.isInteger(value) || value < 0 || value > 1000) throw new UsageError('--poll-rate must be a whole number of polls/s, 0 to 1000');
      opts.pollRate = value;
    } else if (arg === '--scenario' || arg.startsWith('--scenario=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value) throw new UsageError('--scenario needs a value, e.g. --scenario 2 or --scenario 3,5');
      for (const part of value.split(',')) {
        const n = Number(part.trim());
        if (!Number.isInteger(n) || n < 1 || n > 8) throw new UsageError(`--scenario: "${part}" is not a scenario number 1 to 8`);
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
    } else throw new UsageError(`unknown argument ${arg}`);
  }
  if (opts.scenarios.size === 0) for (let n = 1; n <= 8; n++) opts.scenarios.add(n);
  return opts;
}

class UsageError extends Error {}
/** A stage that did not complete (by its deadline, or at all): the message says which and why. */
export class StageError extends Error {}

const ACCOUNTS = 200;
const CONCURRENCY = 50;
const STEADY_RATE = 40;
const STEADY_ACCOUNTS = 100;
const POLL_RATE = 100;
const LIMIT_RAISED = '1000000000';
const MAX_SIGNAL_AGE_MS = 30_000; // the ingress's DEFAULT_MAX_SIGNAL_AGE_MS, unchanged

const PLANS = {
  full: { floorSec: 20, saturationSec: 20, halfSec: 20, steadySec: 60, pollNoWorkerSec: 20, fanoutRuns: 3, oneAtATime: 100, overloadSec: 30 },
  quick: { floorSec: 5, saturationSec: 5, halfSec: 5, steadySec: 15, pollNoWorkerSec: 5, fanoutRuns: 1, oneAtATime: 30, overloadSec: 10 },
};
type Plan = (typeof PLANS)['full'];

const GOALS = {
  ingressVsFloor: 0.85,
  acceptP99HalfMs: 50,
  oneFilledP50Ms: 40,
  oneVisibleP50Ms: 60,
  steadyAcceptedRatio: 0.9,
  e2eP99Ms: 300,
  refusedP99Ms: 50,
  fanoutMs: 3000,
  pollP99Ms: 20,
  ingressRssMb: 200,
  workerRssMb: 400,
};

// ---------------------------------------------------------------------------------------------------------------
// Logging and small helpers

const benchStarted = Date.now();
export function log(message: string): void {
  process.stderr.write(`[bench +${((Date.now() - benchStarted) / 1000).toFixed(1)}s] ${message}\n`);
}

export function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'TZ']) if (process.env[name] !== undefined) out[name] = process.env[name]!;
  return out;
}

function tailFile(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

function credential(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** A timestamp usable as a file name everywhere (ISO 8601 with the colons as dashes). */
export function fileStamp(d: Date): string {
  return d.toISOString().replace(/:/g, '-');
}

export async function httpJson(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 10_000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/** Runs `fn` against a deadline; past it, a StageError naming the stage. */
async function withDeadline<T>(stage: string, ms: number, fn: () => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const timeout = sleep(ms, 'timeout' as const, { signal: ac.signal }).catch(() => 'aborted' as const);
  try {
    const result = await Promise.race([fn(), timeout]);
    if (result === 'timeout') throw new StageError(`${stage} did not complete within ${Math.round(ms / 1000)} s`);
    return result as T;
  } finally {
    ac.abort();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Child processes of the bench (load generators, the floor client)

const liveChildren = new Set<ChildProcess>();

async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const ac = new AbortController();
  const graceful = await Promise.race([exited.then(() => true), sleep(graceMs, false, { signal: ac.signal }).catch(() => false)]);
  ac.abort();
  if (!graceful) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** `node dist/bench/<script>.js SPEC OUT` to completion within `deadlineMs`; its result file, parsed. */
async function runChild<T>(runDir: string, label: string, script: 'load' | 'floor', spec: unknown, deadlineMs: number): Promise<T> {
  const specFile = path.join(runDir, `${label}.spec.json`);
  const outFile = path.join(runDir, `${label}.out.json`);
  const logFile = path.join(runDir, `${label}.log`);
  fs.writeFileSync(specFile, JSON.stringify(spec, null, 2));
  fs.rmSync(outFile, { force: true });
  const fd = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [path.join(__dirname, `${script}.js`), specFile, outFile], {
      cwd: REPO_ROOT,
      env: baseEnv(),
      stdio: ['pipe', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  liveChildren.add(child);
  child.stdin?.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  try {
    const ac = new AbortController();
    const result = await Promise.race([exited, sleep(deadlineMs, 'timeout' as const, { signal: ac.signal }).catch(() => 'aborted' as const)]);
    ac.abort();
    if (result === 'timeout') {
      await stopChild(child);
      throw new StageError(`${label} did not finish within ${Math.round(deadlineMs / 1000)} s; last lines of ${logFile}:\n${tailFile(logFile)}`);
    }
    if (result === 'aborted' || result.code !== 0) {
      throw new StageError(`${label} failed (exit ${JSON.stringify(result)}); last lines of ${logFile}:\n${tailFile(logFile)}`);
    }
    return JSON.parse(fs.readFileSync(outFile, 'utf8')) as T;
  } finally {
    liveChildren.delete(child);
    child.stdin?.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The ledger of the paper bridge, read incrementally

interface Fill {
  /** ms since the epoch: the ledger line's time (when the paper broker filled the order). */
  t: number;
  accountId: string;
}

class LedgerTail {
  private offset = 0;
  private rest = '';
  /** commandId → the fill (op open or place). */
  readonly fills = new Map<string, Fill>();
  /** signalId → its fills. */
  readonly bySignal = new Map<string, Fill[]>();

  constructor(readonly file: string) {}

  update(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size <= this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      const read = fs.readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += read;
      const lines = (this.rest + buf.subarray(0, read).toString('utf8')).split('\n');
      this.rest = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        let entry: { time?: string; op?: string; commandId?: string; accountId?: string };
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if ((entry.op !== 'open' && entry.op !== 'place') || !entry.commandId || !entry.time || this.fills.has(entry.commandId)) continue;
        const fill = { t: Date.parse(entry.time), accountId: entry.accountId ?? '' };
        this.fills.set(entry.commandId, fill);
        const signalId = entry.commandId.split('/')[1];
        if (signalId) {
          const list = this.bySignal.get(signalId) ?? [];
          list.push(fill);
          this.bySignal.set(signalId, list);
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Memory: /proc/<pid>/status of the node process inside a program's process group

function nodePidInGroup(pgid: number, entry: string): number | undefined {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0] ?? '').startsWith('node') && argv.some((a) => a.endsWith(entry))) return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

function readMemory(pid: number): { rssKb: number; hwmKb: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    if (!rss || !hwm) return undefined;
    return { rssKb: Number(rss[1]), hwmKb: Number(hwm[1]) };
  } catch {
    return undefined;
  }
}

interface MemoryFigures {
  pid: number;
  samples: number;
  /** Largest VmRSS sampled during the window (every 250 ms). */
  peakRssMb: number | null;
  /** VmHWM at the end of the window: the peak since the process started. */
  hwmMb: number | null;
  lastRssMb: number | null;
}

class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private readonly state = new Map<string, { pid: number; samples: number; peakKb: number; lastKb: number }>();

  constructor(targets: { name: string; pid: number }[]) {
    for (const t of targets) this.state.set(t.name, { pid: t.pid, samples: 0, peakKb: 0, lastKb: 0 });
  }

  start(intervalMs = 250): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    for (const s of this.state.values()) {
      const m = readMemory(s.pid);
      if (!m) continue;
      s.samples++;
      s.lastKb = m.rssKb;
      s.peakKb = Math.max(s.peakKb, m.rssKb);
    }
  }

  stop(): Record<string, MemoryFigures> {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const out: Record<string, MemoryFigures> = {};
    for (const [name, s] of this.state) {
      const m = readMemory(s.pid);
      out[name] = {
        pid: s.pid,
        samples: s.samples,
        peakRssMb: s.samples ? round(s.peakKb / 1024, 1) : null,
        hwmMb: m ? round(m.hwmKb / 1024, 1) : null,
        lastRssMb: s.samples ? round(s.lastKb / 1024, 1) : null,
      };
    }
    return out;
  }
}

/** Peak RSS of each program per phase of the whole run, sampled every 250 ms. */
class MemoryTimeline {
  private timer: NodeJS.Timeout | undefined;
  private current = 'start';
  readonly peaks: Record<string, Record<string, number>> = {};

  constructor(private readonly targets: { name: string; pid: number }[]) {}

  start(intervalMs = 250): void {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  phase(name: string): void {
    this.sample();
    this.current = name;
  }

  private sample(): void {
    const row = (this.peaks[this.current] ??= {});
    for (const t of this.targets) {
      const m = readMemory(t.pid);
      if (m) row[t.name] = Math.max(row[t.name] ?? 0, round(m.rssKb / 1024, 1));
    }
  }

  stop(): void {
    this.sample();
    if (this.timer) clearInterval(this.timer);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// CPU: where the machine's CPU went during a stage (this machine is shared; what others used is reported too)

const CLK_TCK = 100; // USER_HZ of /proc/stat and /proc/<pid>/stat on Linux

interface CpuSnapshot {
  t: number;
  /** Busy ticks of the whole machine (/proc/stat: user nice system irq softirq steal). */
  busy: number;
  steal: number;
  /** Ticks of every process in each named process group (utime+stime+cutime+cstime). */
  groups: Record<string, number>;
  /** This process and its reaped children (the load generators). */
  self: number;
}

export interface CpuUsage {
  seconds: number;
  /** Cores busy on the whole machine. */
  machine: number;
  /** Cores used by each program of the stack. */
  byProgram: Record<string, number>;
  /** Cores used by the bench itself and its load generators. */
  benchAndLoad: number;
  /** Cores used by everything else on the machine (other people's processes). */
  others: number;
  /** Cores the hypervisor stole. */
  steal: number;
}

function ticksOf(statLine: string): { ppid: number; pgrp: number; ticks: number } {
  const f = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), pgrp: Number(f[2]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
}

/**
 * `groups`: program name → process group. `trees`: program name → a parent pid whose children count for it (a
 * PostgreSQL backend puts itself in a process group of its own, so its postmaster's group does not hold it).
 */
function cpuSnapshot(groups: Record<string, number>, trees: Record<string, number> = {}): CpuSnapshot {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  const byPgid = new Map<number, string>();
  for (const [name, pgid] of Object.entries(groups)) if (pgid > 0) byPgid.set(pgid, name);
  const byParent = new Map<number, string>();
  for (const [name, pid] of Object.entries(trees)) if (pid > 0) byParent.set(pid, name);
  const out: Record<string, number> = Object.fromEntries([...Object.keys(groups), ...Object.keys(trees)].map((n) => [n, 0]));
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const { ppid, pgrp, ticks } = ticksOf(fs.readFileSync(`/proc/${d}/stat`, 'utf8'));
      const name = byPgid.get(pgrp) ?? byParent.get(ppid) ?? byParent.get(Number(d));
      if (name !== undefined) out[name] = (out[name] ?? 0) + ticks;
    } catch {
      // gone meanwhile
    }
  }
  return {
    t: Date.now(),
    busy: user + nice + system + irq + softirq + steal,
    steal,
    groups: out,
    self: ticksOf(fs.readFileSync('/proc/self/stat', 'utf8')).ticks,
  };
}

function cpuUsage(a: CpuSnapshot, b: CpuSnapshot): CpuUsage {
  const seconds = Math.max(0.001, (b.t - a.t) / 1000);
  const cores = (ticks: number) => round(ticks / CLK_TCK / seconds, 2);
  const byProgram: Record<string, number> = {};
  let ours = b.self - a.self;
  for (const name of Object.keys(b.groups)) {
    const d = Math.max(0, (b.groups[name] ?? 0) - (a.groups[name] ?? 0));
    byProgram[name] = cores(d);
    ours += d;
  }
  return {
    seconds: round(seconds, 1),
    machine: cores(b.busy - a.busy),
    byProgram,
    benchAndLoad: cores(b.self - a.self),
    others: cores(Math.max(0, b.busy - a.busy - ours)),
    steal: cores(b.steal - a.steal),
  };
}

function describeCpu(u: CpuUsage): string {
  const programs = Object.entries(u.byProgram)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `CPU (cores) over ${u.seconds} s: machine ${u.machine}; ${programs}, bench+load ${u.benchAndLoad}; other processes ${u.others}; steal ${u.steal}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Temporal's own metrics (the dev server's Prometheus endpoint): persistence calls and their latency per stage

/** The metrics port of the Temporal dev server in a process group, from its command line. */
function temporalMetricsPort(pgid: number): number | undefined {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      const i = argv.indexOf('--metrics-port');
      if (i >= 0 && path.basename(argv[0] ?? '') === 'temporal') return Number(argv[i + 1]);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** The postmaster of a PostgreSQL cluster: its backends are its children (each in a process group of its own). */
function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export type PersistenceTotals = Record<string, { count: number; sumS: number }>;

export async function scrapePersistence(port: number | undefined): Promise<PersistenceTotals | undefined> {
  if (!port) return undefined;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
    const text = await res.text();
    const out: PersistenceTotals = {};
    for (const line of text.split('\n')) {
      const m = /^(visibility_)?persistence_latency_(count|sum)\{([^}]*)\} ([0-9.e+-]+)$/.exec(line);
      if (!m) continue;
      const op = `${m[1] ? 'visibility:' : ''}${/operation="([^"]*)"/.exec(m[3]!)?.[1] ?? '?'}`;
      const entry = (out[op] ??= { count: 0, sumS: 0 });
      if (m[2] === 'count') entry.count += Number(m[4]);
      else entry.sumS += Number(m[4]);
    }
    return out;
  } catch {
    return undefined;
  }
}

export interface PersistenceUsage {
  calls: number;
  meanMs: number;
  /** Summed latency of all calls (they overlap; SQLite serializes writes). */
  totalMs: number;
  callsPerSignal: number | null;
  top: { op: string; calls: number; meanMs: number; totalMs: number }[];
}

export function persistenceUsage(a: PersistenceTotals | undefined, b: PersistenceTotals | undefined, signals: number): PersistenceUsage | undefined {
  if (!a || !b) return undefined;
  const ops = Object.keys(b).map((op) => {
    const calls = (b[op]?.count ?? 0) - (a[op]?.count ?? 0);
    const totalMs = ((b[op]?.sumS ?? 0) - (a[op]?.sumS ?? 0)) * 1000;
    return { op, calls, totalMs: round(totalMs, 1), meanMs: calls > 0 ? round(totalMs / calls, 2) : 0 };
  });
  const calls = ops.reduce((s, o) => s + o.calls, 0);
  const totalMs = ops.reduce((s, o) => s + o.totalMs, 0);
  return {
    calls,
    meanMs: calls > 0 ? round(totalMs / calls, 2) : 0,
    totalMs: round(totalMs, 0),
    callsPerSignal: signals > 0 ? round(calls / signals, 1) : null,
    top: ops
      .filter((o) => o.calls > 0)
      .sort((x, y) => y.totalMs - x.totalMs)
      .slice(0, 8),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The stack

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
  accounts: string[];
  secret: string;
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

function registryDocument(accounts: string[], tokens: Record<string, string>, secret: string, token: string) {
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
    secrets: [{ secret, owner: 'bench-owner', accounts }],
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
  for (const f of ['load.js', 'floor.js']) {
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

  // The registry: 200 accounts (mt5 and ctrader), one owner, one secret linking all, one token granting all.
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `bench-${String(i).padStart(3, '0')}`);
  const bridgeTokens = Object.fromEntries(accounts.map((id) => [id, credential('brg_bench_')]));
  const secret = credential('whsec_bench_');
  const token = credential('tok_bench_');
  const registryFile = path.join(runDir, 'registry.json');
  fs.writeFileSync(registryFile, JSON.stringify(registryDocument(accounts, bridgeTokens, secret, token), null, 2), { mode: 0o600 });
  const imported = await processes.runAdminProcess(['import', registryFile], { ...baseEnv(), REDIS_URL: redis.url }, { timeoutMs: 60_000 });
  if (imported.code !== 0) throw new StageError(`admin import failed (exit ${imported.code}): ${imported.stderr.trim()}`);
  log(`registry imported: ${ACCOUNTS} accounts, 1 secret, 1 token`);

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
    ROUTE_LIMIT_MAX: LIMIT_RAISED,
    WEBHOOK_PREAUTH_IP_MAX: LIMIT_RAISED,
    FAIRNESS_ACCOUNT_MAX: LIMIT_RAISED,
    FAIRNESS_BROADCAST_MAX: LIMIT_RAISED,
    POLL_IP_MAX: LIMIT_RAISED,
    POLL_ACCOUNT_MAX: LIMIT_RAISED,
    BRIDGE_LIMIT_MAX: LIMIT_RAISED,
    // Every client of the bench (200 bridge long-polls, the load generators) comes from 127.0.0.1: no per-address
    // connection cap. Admission control stays at its defaults: it is what scenarios 3 and 8 measure.
    MAX_CONNECTIONS_PER_IP: '0',
  };
  const profiled = (kind: string): Record<string, string> => {
    const extra = kind === 'ingress' && opts.ingressNodeOptions ? [opts.ingressNodeOptions] : [];
    if (!opts.cpuProf) return extra.length ? { ...env, NODE_OPTIONS: extra.join(' ') } : env;
    const dir = path.join(runDir, 'profiles', kind);
    fs.mkdirSync(dir, { recursive: true });
    return { ...env, NODE_OPTIONS: [`--require ${path.join(__dirname, 'cpu-profile.js')}`, ...extra].join(' '), BENCH_CPU_PROFILE_DIR: dir };
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

  log(`starting the paper bridge for ${ACCOUNTS} accounts against ${ingress.url}`);
  const ledgerFile = path.join(runDir, 'ledger.jsonl');
  let bridge: PaperBridgeProcess;
  try {
    bridge = await processes.startPaperBridgeProcess({ registryFile, ledgerFile, ingressUrl: ingress.url, label: 'paper-bridge', readyTimeoutMs: 60_000 });
  } catch (err) {
    throw new StageError(`paper bridge did not connect all ${ACCOUNTS} terminals: ${(err as Error).message}`);
  }
  started.push({ name: 'paper bridge', stop: () => bridge.stop(10_000) });

  const connection = await Connection.connect({ address: temporal.address, connectTimeout: 5_000 });
  started.push({ name: 'Temporal client', stop: () => connection.close() });
  const client = new Client({ connection, namespace: 'default' });

  const pids = {
    ingress: nodePidInGroup(ingress.pid, path.join('dist', 'src', 'server.js')),
    worker: nodePidInGroup(worker.pid, path.join('dist', 'src', 'worker.js')),
    bridge: nodePidInGroup(bridge.pid, path.join('dist', 'src', 'paper', 'main.js')),
  };
  log(`stack ready: ingress ${ingress.url} (pid ${pids.ingress}), worker pid ${pids.worker}, paper bridge pid ${pids.bridge}`);
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
    secret,
    token,
    taskQueue,
    pids,
    temporalMetricsPort: temporalMetricsPortFound,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Stages shared by the scenarios

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

function loadSpec(stack: Stack, spec: Omit<LoadSpec, 'baseUrl'>): LoadSpec {
  return { baseUrl: stack.ingress.url, ...spec };
}

function loadDeadline(durationSec: number): number {
  return (durationSec + 45) * 1000;
}

function describeLoad(r: LoadResult): string {
  const s = r.okLatencyMs;
  return `${r.requests} answers ${JSON.stringify(r.statusCounts)}, ${r.okPerSec.toFixed(1)} ok/s, p50 ${s.p50?.toFixed(1)} ms, p99 ${s.p99?.toFixed(1)} ms, errors ${r.errors}, timeouts ${r.timeouts}`;
}

function stripLoad(r: LoadResult | undefined): Omit<LoadResult, 'accepted'> | undefined {
  if (!r) return undefined;
  const { accepted: _accepted, ...rest } = r;
  return rest;
}

// ---------------------------------------------------------------------------------------------------------------
// The scenarios

interface FanoutRun {
  signalId: string;
  accountsResolved: number;
  acceptMs: number;
  /** max(occurredAt) − the 202. */
  allReportedMs: number;
  /** Earliest occurredAt − the 202. */
  firstReportedMs: number;
  /** When the poll first answered reported = 200 (depends on the 100 ms poll interval). */
  observedMs: number;
  filled: number;
  rejected: number;
  polls: number;
  /** The signal workflow's history once closed (Temporal's limits: 51,200 events and 50 MB; 2 MB per payload). */
  parentHistory?: { events: number; bytes: number; startedEventBytes: number };
}

async function fanoutOnce(stack: Stack, deadlineMs: number): Promise<FanoutRun> {
  const t0 = Date.now();
  const res = await httpJson(`${stack.ingress.url}/webhook/custom`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ secret: stack.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 }),
  });
  const t202 = Date.now();
  if (res.status !== 202) throw new StageError(`fan-out: the broadcast answered ${res.status} ${JSON.stringify(res.body)} instead of 202`);
  const signalId = res.body.signalId as string;
  let polls = 0;
  let last: { reported: number; accounts: { outcome: string; occurredAt: string }[] };
  const deadline = t202 + deadlineMs;
  for (;;) {
    polls++;
    const poll = await httpJson(`${stack.ingress.url}/v1/signals/${signalId}`, { headers: { authorization: `Bearer ${stack.token}` } });
    if (poll.status !== 200) throw new StageError(`fan-out: the poll answered ${poll.status} ${JSON.stringify(poll.body)}`);
    last = poll.body;
    if (last.reported >= ACCOUNTS) break;
    if (Date.now() >= deadline) {
      throw new StageError(
        `fan-out: only ${last.reported} of ${ACCOUNTS} outcomes recorded ${Math.round(deadlineMs / 1000)} s after the 202 (signal ${signalId})`,
      );
    }
    await sleep(100);
  }
  const observed = Date.now();
  const times = last.accounts.map((a) => Date.parse(a.occurredAt));
  const parentHistory = await historySize(stack, signalId).catch(() => undefined);
  return {
    signalId,
    accountsResolved: res.body.accountsResolved as number,
    acceptMs: t202 - t0,
    allReportedMs: Math.max(...times) - t202,
    firstReportedMs: Math.min(...times) - t202,
    observedMs: observed - t202,
    filled: last.accounts.filter((a) => a.outcome === 'filled').length,
    rejected: last.accounts.filter((a) => a.outcome === 'rejected').length,
    polls,
    ...(parentHistory ? { parentHistory } : {}),
  };
}

/** Events and encoded bytes of a signal workflow's history, once it has closed. */
async function historySize(stack: Stack, signalId: string): Promise<{ events: number; bytes: number; startedEventBytes: number }> {
  const handle = stack.client.workflow.getHandle(`signal/${signalId}`);
  await handle.result();
  const history = await handle.fetchHistory();
  const { History, HistoryEvent } = temporal.api.history.v1;
  const first = history.events?.[0];
  return {
    events: history.events?.length ?? 0,
    bytes: History.encode(history).finish().byteLength,
    startedEventBytes: first ? HistoryEvent.encode(first).finish().byteLength : 0,
  };
}

interface Results {
  floor?: FloorResult & { drain?: { ms: number } };
  saturation?: LoadResult;
  half?: LoadResult;
  drains: Record<string, { ms: number }>;
  steady?: {
    load: LoadResult;
    poll: LoadResult;
    accepted: number;
    filled: number;
    notFilled: number;
    /** The fill wait hit its deadline: e2eMs covers only the signals filled by then. */
    incomplete: boolean;
    e2eMs: Summary;
    check: { sampled: number; filled: number; maxAbsOccurredVsLedgerMs: number | null };
    memory: Record<string, MemoryFigures>;
    /** Every accepted signal's outcome, read through the poll once the phase has drained. */
    outcomes?: OutcomeTally;
  };
  oneAtATime?: OneAtATime;
  overload?: { load: LoadResult; offeredRate: number; sustainedRate: number; outcomes: OutcomeTally };
  fanout?: { runs: FanoutRun[] };
  pollNoWorker?: LoadResult;
  loadavg: Record<string, number[]>;
  cpu: Record<string, CpuUsage>;
  /** Stages that did not complete. */
  errors: string[];
  /** Signal workflows started per phase against the 202s given. */
  startedVs202: Record<
    string,
    {
      started: number;
      answered202: number;
      answered503: number;
      pollable503: number;
      inFlightAtStop: number;
      startedDespite503AtLeast: number;
      startedDespiteRetryAtLeast: number;
    }
  >;
  /** Temporal dev server persistence calls per stage (from its metrics). */
  temporalPersistence: Record<string, PersistenceUsage>;
  /** Peak RSS (MB) of each program in each phase of the run (drains included). */
  memoryByPhase: Record<string, Record<string, number>>;
  /** RSS of the programs when ready and after the warm-up (MB). */
  memoryBaseline: Record<string, Record<string, { rssMb: number; hwmMb: number }>>;
}

async function runScenarios(stack: Stack, helpers: { infra: InfraModule }, opts: Options, plan: Plan, results: Results): Promise<void> {
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
  const trees = (): Record<string, number> => (stack.postgresPid ? { postgres: stack.postgresPid } : {});
  const groups = () => ({
    temporal: stack.temporal.pid,
    redis: stack.redis.pid,
    ingress: stack.ingress.pid,
    worker: stack.worker.pid,
    ...Object.fromEntries(stack.moreWorkers.map((w, i) => [`worker${i + 2}`, w.pid])),
    bridge: stack.bridge.pid,
  });
  /** Runs a stage and records where the machine's CPU went meanwhile. */
  const measure = async <T>(stage: string, fn: () => Promise<T>, signalsOf?: (r: T) => number): Promise<T> => {
    const before = cpuSnapshot(groups(), trees());
    const persistenceBefore = await scrapePersistence(stack.temporalMetricsPort);
    let result: T | undefined;
    try {
      result = await fn();
      return result;
    } finally {
      const usage = cpuUsage(before, cpuSnapshot(groups(), trees()));
      results.cpu[stage] = usage;
      log(`${stage}: ${describeCpu(usage)}`);
      const p = persistenceUsage(
        persistenceBefore,
        await scrapePersistence(stack.temporalMetricsPort),
        result !== undefined && signalsOf ? signalsOf(result) : 0,
      );
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
  const signalWorkflows = async () => (await stack.client.workflow.count('WorkflowType="signalWorkflow"')).count;
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

  // 1. Floor
  if (want(1))
    await scenario('1', async () => {
      mark('floor');
      log(`scenario 1 (floor): signalWorkflow started straight through @temporalio/client, concurrency ${CONCURRENCY}, ${plan.floorSec} s`);
      const spec: FloorSpec = {
        temporalAddress: stack.temporal.address,
        namespace: 'default',
        taskQueue: stack.taskQueue,
        redisUrl: stack.redis.url,
        accounts: stack.accounts,
        concurrency: CONCURRENCY,
        durationSec: plan.floorSec,
        warmupStarts: 100,
        maxSignalAgeMs: MAX_SIGNAL_AGE_MS,
        symbol: 'EURUSD',
        volume: 0.01,
      };
      const floor = await measure(
        'floor',
        () => runChild<FloorResult>(stack.runDir, 'scenario1-floor', 'floor', spec, (plan.floorSec + 90) * 1000),
        (f) => f.starts,
      );
      results.floor = floor;
      log(
        `floor: ${floor.starts} starts, ${floor.startsPerSec.toFixed(1)}/s, start p50 ${floor.startLatencyMs.p50?.toFixed(1)} ms, p99 ${floor.startLatencyMs.p99?.toFixed(1)} ms, errors ${floor.errors}`,
      );
      results.drains.floor = await drainMeasured('floor', 'scenario 1', floor.starts + 100);
    });

  // 2. Ingress at saturation, then at half that rate
  if (want(2))
    await scenario('2', async () => {
      mark('saturation');
      const workflowsBeforeSat = await signalWorkflows();
      log(`scenario 2 (ingress): POST /webhook/custom/<account> over ${ACCOUNTS} accounts, ${CONCURRENCY} connections, ${plan.saturationSec} s`);
      const sat = await measure(
        'saturation',
        () =>
          runChild<LoadResult>(
            stack.runDir,
            'scenario2-saturation',
            'load',
            loadSpec(stack, {
              label: 'saturation',
              kind: 'webhook',
              durationSec: plan.saturationSec,
              connections: CONCURRENCY,
              secret: stack.secret,
              accounts: stack.accounts,
              recordAccepted: true,
              maxRecords: 200_000,
            }),
            loadDeadline(plan.saturationSec),
          ),
        (r) => r.statusCounts['202'] ?? 0,
      );
      results.saturation = sat;
      log(`saturation: ${describeLoad(sat)}`);
      if ((sat.statusCounts['202'] ?? 0) === 0) throw new StageError(`scenario 2: no 202 at all at saturation: ${JSON.stringify(sat.statusCounts)}`);
      results.drains.saturation = await drainMeasured('saturation', 'scenario 2 (saturation)', sat.statusCounts['202'] ?? 0);
      await unanswered('saturation', workflowsBeforeSat, sat);

      const halfRate = Math.max(1, Math.round(sat.okPerSec / 2));
      mark('half');
      const workflowsBeforeHalf = await signalWorkflows();
      log(`scenario 2 (ingress): the same at half the saturated rate, ${halfRate}/s paced, ${plan.halfSec} s`);
      const half = await measure(
        'half',
        () =>
          runChild<LoadResult>(
            stack.runDir,
            'scenario2-half',
            'load',
            loadSpec(stack, { label: 'half', kind: 'webhook', durationSec: plan.halfSec, rate: halfRate, secret: stack.secret, accounts: stack.accounts }),
            loadDeadline(plan.halfSec),
          ),
        (r) => r.statusCounts['202'] ?? 0,
      );
      results.half = half;
      log(`half rate: ${describeLoad(half)}`);
      results.drains.half = await drainMeasured('half', 'scenario 2 (half rate)', half.statusCounts['202'] ?? 0);
      await unanswered('half', workflowsBeforeHalf, half);
    });

  // Signals to poll: accepted ones from earlier scenarios, spread over the accounts.
  const pollIds = (() => {
    const fromSat = (results.saturation?.accepted ?? []).map((a) => a.signalId);
    const pool = fromSat.length > 0 ? fromSat : (results.floor?.signalIds ?? []).length > 0 ? results.floor!.signalIds : warmIds;
    const step = Math.max(1, Math.floor(pool.length / 200));
    return pool.filter((_, i) => i % step === 0).slice(0, 200);
  })();

  // 7. One signal at a time: what a single caller sees, with nothing else going on.
  if (want(7))
    await scenario('7', async () => {
      mark('oneAtATime');
      log(`scenario 7: ${plan.oneAtATime} signals one at a time over 10 accounts: 202 → filled (ledger) and 202 → visible to the poll`);
      results.oneAtATime = await measure(
        'oneAtATime',
        () =>
          oneAtATime({
            http: httpJson,
            ingressUrl: stack.ingress.url,
            secret: stack.secret,
            token: stack.token,
            accounts: stack.accounts.slice(0, 10),
            count: plan.oneAtATime,
            fillTimeOf: (id) => {
              stack.ledger.update();
              return stack.ledger.bySignal.get(id)?.[0]?.t;
            },
            deadlineMs: 30_000,
          }),
        (r) => r.signals,
      );
      log(
        `one at a time: filled p50 ${results.oneAtATime.filledMs.p50} ms p99 ${results.oneAtATime.filledMs.p99} ms; visible p50 ${results.oneAtATime.visibleMs.p50} ms p99 ${results.oneAtATime.visibleMs.p99} ms`,
      );
      results.drains.oneAtATime = await drainMeasured('oneAtATime', 'scenario 7', plan.oneAtATime);
    });

  // 3, 5, 6: one steady phase: 50 signals/s on 10 accounts, the poll at 100/s beside it, memory sampled.
  if (want(3) || want(5) || want(6))
    await scenario('3/5/6', async () => {
      mark('steady');
      const workflowsBeforeSteady = await signalWorkflows();
      const steadyAccounts = stack.accounts.slice(0, STEADY_ACCOUNTS);
      log(
        `scenarios 3, 5, 6: ${opts.steadyRate} signals/s on ${STEADY_ACCOUNTS} accounts for ${plan.steadySec} s, ${opts.pollRate > 0 ? `the poll at ${opts.pollRate}/s beside it` : 'no poll beside it'}, RSS every 250 ms`,
      );
      const sampler = new RssSampler((['ingress', 'worker', 'bridge'] as const).flatMap((name) => (stack.pids[name] ? [{ name, pid: stack.pids[name] }] : [])));
      sampler.start(250);
      let memory: Record<string, MemoryFigures>;
      let load: LoadResult;
      let poll: LoadResult;
      try {
        const idle: LoadResult = {
          label: 'poll (off)',
          kind: 'poll',
          mode: 'paced',
          connections: 0,
          instances: 0,
          targetRate: 0,
          durationSec: 0,
          startedAt: 0,
          endedAt: 0,
          elapsedMs: 0,
          requests: 0,
          sent: 0,
          statusCounts: {},
          errors: 0,
          timeouts: 0,
          okLatencyMs: summarize([]),
          allLatencyMs: summarize([]),
          okPerSec: 0,
        };
        [load, poll] = await measure(
          'steady',
          () =>
            Promise.all([
              runChild<LoadResult>(
                stack.runDir,
                'scenario3-steady',
                'load',
                loadSpec(stack, {
                  label: 'steady',
                  kind: 'webhook',
                  durationSec: plan.steadySec,
                  rate: opts.steadyRate,
                  secret: stack.secret,
                  accounts: steadyAccounts,
                  recordAccepted: true,
                }),
                loadDeadline(plan.steadySec),
              ),
              opts.pollRate > 0
                ? runChild<LoadResult>(
                    stack.runDir,
                    'scenario5-poll',
                    'load',
                    loadSpec(stack, { label: 'poll', kind: 'poll', durationSec: plan.steadySec, rate: opts.pollRate, token: stack.token, signalIds: pollIds }),
                    loadDeadline(plan.steadySec),
                  )
                : Promise.resolve(idle),
            ]),
          ([l]) => l.statusCounts['202'] ?? 0,
        );
      } finally {
        memory = sampler.stop();
      }
      log(`steady load: ${describeLoad(load)}`);
      log(`poll beside it: ${describeLoad(poll)}`);
      log(
        `memory: ${Object.entries(memory)
          .map(([k, v]) => `${k} peak ${v.peakRssMb} MB (VmHWM ${v.hwmMb} MB)`)
          .join(', ')}`,
      );

      const accepted: AcceptedRecord[] = load.accepted ?? [];
      // Wait for the fills: every accepted signal in the ledger, or nothing running any more (the rest were refused).
      // On the deadline the figures measured so far are kept (the scenario is still reported as failed).
      let running = -1;
      let incomplete: string | undefined;
      const fillDeadlineMs = 120_000 + accepted.length * 200;
      await helpers.infra
        .waitFor(
          `the ${accepted.length} signals of scenario 3 to be filled (or finished)`,
          async () => {
            stack.ledger.update();
            if (accepted.every((a) => stack.ledger.bySignal.has(a.signalId))) return true;
            running = (await stack.client.workflow.count('ExecutionStatus="Running"')).count;
            return running === 0;
          },
          fillDeadlineMs,
          500,
        )
        .catch((err: Error) => {
          incomplete = `scenario 3: ${err.message} (${running} workflows still running); the end-to-end figures cover the signals filled by then`;
        });
      stack.ledger.update();
      const e2e: number[] = [];
      let notFilled = 0;
      for (const a of accepted) {
        const fill = stack.ledger.bySignal.get(a.signalId)?.[0];
        if (fill) e2e.push(fill.t - a.t202);
        else notFilled++;
      }
      // Cross-check a sample against the recorded outcomes (the poll's occurredAt).
      const sample = accepted.filter((_, i) => i % Math.max(1, Math.floor(accepted.length / 40)) === 0).slice(0, 40);
      let checkFilled = 0;
      let maxDiff: number | null = null;
      for (const a of sample) {
        const r = await httpJson(`${stack.ingress.url}/v1/signals/${a.signalId}`, { headers: { authorization: `Bearer ${stack.token}` } }).catch(() => ({
          status: 0,
          body: undefined,
        }));
        const item = r.status === 200 ? (r.body.accounts?.[0] as { outcome: string; occurredAt: string } | undefined) : undefined;
        if (item?.outcome === 'filled') {
          checkFilled++;
          const fill = stack.ledger.bySignal.get(a.signalId)?.[0];
          if (fill) maxDiff = Math.max(maxDiff ?? 0, Math.abs(Date.parse(item.occurredAt) - fill.t));
        }
      }
      results.steady = {
        load,
        poll,
        accepted: accepted.length,
        filled: e2e.length,
        notFilled,
        incomplete: incomplete !== undefined,
        e2eMs: summarize(e2e),
        check: { sampled: sample.length, filled: checkFilled, maxAbsOccurredVsLedgerMs: maxDiff },
        memory,
      };
      log(
        `end to end: ${e2e.length} filled of ${accepted.length}, p50 ${results.steady.e2eMs.p50} ms, p99 ${results.steady.e2eMs.p99} ms; sample check ${checkFilled}/${sample.length} filled, |occurredAt − ledger| ≤ ${maxDiff} ms`,
      );
      results.drains.steady = await drainMeasured('steady', 'scenario 3', accepted.length);
      results.steady.outcomes = await tallyOutcomes(
        httpJson,
        stack.ingress.url,
        stack.token,
        accepted.map((a) => a.signalId),
      );
      log(`outcomes of the ${accepted.length} accepted: ${JSON.stringify(results.steady.outcomes)}`);
      await unanswered('steady', workflowsBeforeSteady, load);
      if (incomplete) throw new StageError(incomplete);
    });

  // 4. Fan-out
  if (want(4))
    await scenario('4', async () => {
      mark('fanout');
      results.fanout = { runs: [] };
      for (let i = 0; i < plan.fanoutRuns; i++) {
        log(`scenario 4 (fan-out): one broadcast buy to ${ACCOUNTS} accounts (run ${i + 1} of ${plan.fanoutRuns})`);
        const run = await measure(`fanout${i + 1}`, () => fanoutOnce(stack, 120_000));
        results.fanout.runs.push(run);
        log(
          `fan-out: 202 in ${run.acceptMs} ms; all ${ACCOUNTS} reported ${run.allReportedMs} ms after it (first ${run.firstReportedMs} ms; poll saw it at ${run.observedMs} ms); ${run.filled} filled, ${run.rejected} rejected; parent history ${JSON.stringify(run.parentHistory ?? null)}`,
        );
        results.drains[`fanout${i + 1}`] = await drainMeasured(`fanout${i + 1}`, `fan-out run ${i + 1}`, ACCOUNTS);
      }
    });

  // 8. Overload: twice what the stack sustains. The excess must be refused at once, and nothing accepted may expire.
  if (want(8))
    await scenario('8', async () => {
      mark('overload');
      // What the stack sustains: the best of the closed-loop saturation (where a storm of instant 503s competes for
      // the CPU) and the steady phase's accepted rate; the steady rate itself when neither ran.
      const steadyRate = results.steady ? results.steady.accepted / plan.steadySec : 0;
      const sustainedRate = Math.round(Math.max(results.saturation?.okPerSec ?? 0, steadyRate) || opts.steadyRate);
      const offeredRate = Math.min(1000, 2 * sustainedRate);
      const workflowsBefore = await signalWorkflows();
      log(
        `scenario 8 (overload): ${offeredRate} signals/s (twice ${sustainedRate}/s, what scenarios 2 and 3 sustained) over ${STEADY_ACCOUNTS} accounts for ${plan.overloadSec} s`,
      );
      const load = await measure(
        'overload',
        () =>
          runChild<LoadResult>(
            stack.runDir,
            'scenario8-overload',
            'load',
            loadSpec(stack, {
              label: 'overload',
              kind: 'webhook',
              durationSec: plan.overloadSec,
              rate: offeredRate,
              secret: stack.secret,
              accounts: stack.accounts.slice(0, STEADY_ACCOUNTS),
              recordAccepted: true,
            }),
            loadDeadline(plan.overloadSec),
          ),
        (l) => l.statusCounts['202'] ?? 0,
      );
      log(`overload: ${describeLoad(load)}; 503 p50 ${load.refusedLatencyMs?.p50 ?? '—'} ms p99 ${load.refusedLatencyMs?.p99 ?? '—'} ms`);
      const accepted = load.accepted ?? [];
      results.drains.overload = await drainMeasured('overload', 'scenario 8', accepted.length);
      const outcomes = await tallyOutcomes(
        httpJson,
        stack.ingress.url,
        stack.token,
        accepted.map((a) => a.signalId),
      );
      log(`outcomes of the ${accepted.length} accepted under overload: ${JSON.stringify(outcomes)}`);
      results.overload = { load, offeredRate, sustainedRate, outcomes };
      await unanswered('overload', workflowsBefore, load);
    });

  // 5 (second half): the poll with the worker stopped.
  if (want(5))
    await scenario('5 (no worker)', async () => {
      mark('pollNoWorker');
      log('scenario 5: stopping the worker (SIGTERM), then the poll alone');
      await withDeadline('stopping the workers', 30_000, () => Promise.all([stack.worker, ...stack.moreWorkers].map((w) => w.stop(15_000))));
      log(`scenario 5: GET /v1/signals/<id> at ${opts.pollRate || POLL_RATE}/s for ${plan.pollNoWorkerSec} s, no worker running`);
      results.pollNoWorker = await measure('pollNoWorker', () =>
        runChild<LoadResult>(
          stack.runDir,
          'scenario5-poll-no-worker',
          'load',
          loadSpec(stack, {
            label: 'poll-no-worker',
            kind: 'poll',
            durationSec: plan.pollNoWorkerSec,
            rate: opts.pollRate || POLL_RATE,
            token: stack.token,
            signalIds: pollIds,
          }),
          loadDeadline(plan.pollNoWorkerSec),
        ),
      );
      log(`poll without a worker: ${describeLoad(results.pollNoWorker)}`);
    });
  timeline.stop();
}

// ---------------------------------------------------------------------------------------------------------------
// The table

function rowsOf(r: Results, opts: Options): Row[] {
  const rows: Row[] = [];
  const want = (n: number) => opts.scenarios.has(n);
  if (want(1)) {
    const f = r.floor;
    rows.push(infoRow('1 floor', `starts/s (concurrency ${CONCURRENCY})`, f ? round(f.startsPerSec, 1) : null, '/s'));
    rows.push(infoRow('1 floor', 'start latency p50', f?.startLatencyMs.p50 ?? null, 'ms'));
    rows.push(infoRow('1 floor', 'start latency p99', f?.startLatencyMs.p99 ?? null, 'ms'));
  }
  if (want(2)) {
    const s = r.saturation;
    const h = r.half;
    const non202 = s ? s.requests - (s.statusCounts['202'] ?? 0) + s.errors + s.timeouts : null;
    rows.push(
      infoRow('2 ingress', `accepted/s at saturation (${CONCURRENCY} conns)`, s ? round(s.okPerSec, 1) : null, '/s', non202 ? `${non202} not 202` : undefined),
    );
    const ratio = s && r.floor ? round(s.okPerSec / r.floor.startsPerSec, 3) : null;
    rows.push(
      goalRow('2 ingress', 'ingress / floor', ratio, '', '>=', GOALS.ingressVsFloor, `≥ ${GOALS.ingressVsFloor}`, r.floor ? undefined : 'needs scenario 1'),
    );
    rows.push(infoRow('2 ingress', 'accept p50 at saturation', s?.okLatencyMs.p50 ?? null, 'ms'));
    rows.push(infoRow('2 ingress', 'accept p99 at saturation', s?.okLatencyMs.p99 ?? null, 'ms'));
    const halfNon202 = h ? h.requests - (h.statusCounts['202'] ?? 0) + h.errors + h.timeouts : null;
    rows.push(
      infoRow(
        '2 ingress',
        `accept p50 at half rate (${h?.targetRate ?? '—'}/s)`,
        h?.okLatencyMs.p50 ?? null,
        'ms',
        halfNon202 ? `${halfNon202} not 202` : undefined,
      ),
    );
    rows.push(goalRow('2 ingress', 'accept p99 at half rate', h?.okLatencyMs.p99 ?? null, 'ms', '<=', GOALS.acceptP99HalfMs));
  }
  if (want(7)) {
    const o = r.oneAtATime;
    rows.push(
      goalRow(
        '7 one at a time',
        '202 → filled p50',
        o?.filledMs.p50 ?? null,
        'ms',
        '<=',
        GOALS.oneFilledP50Ms,
        undefined,
        o ? `p99 ${o.filledMs.p99} ms over ${o.signals}` : undefined,
      ),
    );
    rows.push(
      goalRow(
        '7 one at a time',
        '202 → visible to the poll p50',
        o?.visibleMs.p50 ?? null,
        'ms',
        '<=',
        GOALS.oneVisibleP50Ms,
        undefined,
        o ? `p99 ${o.visibleMs.p99} ms` : undefined,
      ),
    );
  }
  if (want(3)) {
    const st = r.steady;
    // Offered is what the paced load was asked to send; a slow ingress makes it send fewer, and that counts against it.
    const offered = st ? Math.max(Math.round((st.load.targetRate ?? 0) * st.load.durationSec), st.load.requests + st.load.errors + st.load.timeouts) : 0;
    const ratio = st && offered > 0 ? round(st.accepted / offered, 3) : null;
    const out = st?.outcomes;
    const expired = out ? (out.rejected['signal_expired'] ?? 0) : null;
    const note = st ? `${st.accepted} of ${offered} accepted; ${st.load.statusCounts['503'] ?? 0} got 503` : undefined;
    rows.push(
      goalRow(
        '3 end to end',
        `accepted of offered (${opts.steadyRate}/s, ${STEADY_ACCOUNTS} accts)`,
        ratio,
        '',
        '>=',
        GOALS.steadyAcceptedRatio,
        undefined,
        note,
      ),
    );
    rows.push(
      goalRow(
        '3 end to end',
        'accepted not filled (expired, unreported, rejected)',
        out ? out.signals - out.filled : null,
        '',
        '<=',
        0,
        '0',
        out ? `expired ${expired}, unreported ${out.unreported}, rejected ${JSON.stringify(out.rejected)}` : undefined,
      ),
    );
    rows.push(infoRow('3 end to end', '202 → filled p50', st?.e2eMs.p50 ?? null, 'ms'));
    rows.push(goalRow('3 end to end', '202 → filled p99', st?.e2eMs.p99 ?? null, 'ms', '<=', GOALS.e2eP99Ms));
  }
  if (want(8)) {
    const o = r.overload;
    const note = o
      ? `offered ${o.offeredRate}/s (2 × ${o.sustainedRate}/s): ${o.load.statusCounts['202'] ?? 0} × 202, ${o.load.statusCounts['503'] ?? 0} × 503`
      : undefined;
    rows.push(goalRow('8 overload', '503 answered within (p99)', o?.load.refusedLatencyMs?.p99 ?? null, 'ms', '<=', GOALS.refusedP99Ms, undefined, note));
    const expired = o ? (o.outcomes.rejected['signal_expired'] ?? 0) : null;
    rows.push(
      goalRow(
        '8 overload',
        'accepted signals expired',
        expired,
        '',
        '<=',
        0,
        '0',
        o ? `${o.outcomes.filled} of ${o.outcomes.signals} filled, unreported ${o.outcomes.unreported}` : undefined,
      ),
    );
  }
  if (want(4)) {
    const runs = r.fanout?.runs ?? [];
    const worst = runs.length ? Math.max(...runs.map((x) => x.allReportedMs)) : null;
    const note = runs.length
      ? `${runs.length === 1 ? 'one run' : `worst of ${runs.length}: ${runs.map((x) => x.allReportedMs).join(', ')} ms`}; ${runs.map((x) => x.filled).join('/')} filled`
      : undefined;
    rows.push(goalRow('4 fan-out', `202 → all ${ACCOUNTS} outcomes (max occurredAt)`, worst, 'ms', '<=', GOALS.fanoutMs, undefined, note));
  }
  if (want(5)) {
    const p = r.steady?.poll;
    const q = r.pollNoWorker;
    rows.push(infoRow('5 poll', `p50 under scenario 3 (${opts.pollRate}/s)`, p?.okLatencyMs.p50 ?? null, 'ms'));
    rows.push(goalRow('5 poll', 'p99 under scenario 3', p?.okLatencyMs.p99 ?? null, 'ms', '<=', GOALS.pollP99Ms));
    rows.push(infoRow('5 poll', 'p50, worker stopped', q?.okLatencyMs.p50 ?? null, 'ms'));
    rows.push(goalRow('5 poll', 'p99, worker stopped', q?.okLatencyMs.p99 ?? null, 'ms', '<=', GOALS.pollP99Ms));
  }
  if (want(6)) {
    const m = r.steady?.memory;
    rows.push(
      goalRow(
        '6 memory',
        'ingress peak RSS (scenario 3)',
        m?.ingress?.peakRssMb ?? null,
        'MB',
        '<=',
        GOALS.ingressRssMb,
        undefined,
        m?.ingress ? `VmHWM ${m.ingress.hwmMb} MB` : undefined,
      ),
    );
    const u = r.cpu['steady'];
    const cpuMsPer202 =
      u && r.steady && r.steady.accepted > 0 ? round(((u.byProgram['ingress'] ?? 0) * u.seconds * 1000) / (r.steady.load.requests || 1), 2) : null;
    rows.push(
      infoRow(
        '6 memory',
        'ingress CPU per request (scenario 3)',
        cpuMsPer202,
        'ms',
        u
          ? `ingress ${u.byProgram['ingress'] ?? 0} cores over ${u.seconds} s, ${r.steady?.load.requests ?? 0} webhook requests and the polls beside them`
          : undefined,
      ),
    );
    rows.push(
      goalRow(
        '6 memory',
        'worker peak RSS (scenario 3)',
        m?.worker?.peakRssMb ?? null,
        'MB',
        '<=',
        GOALS.workerRssMb,
        undefined,
        m?.worker ? `VmHWM ${m.worker.hwmMb} MB` : undefined,
      ),
    );
  }
  // The machine is shared: what other processes used while each stage ran.
  for (const [stage, label] of [
    ['floor', '1'],
    ['saturation', '2 saturation'],
    ['half', '2 half rate'],
    ['steady', '3/5/6 steady'],
    ['fanout1', '4 fan-out'],
    ['pollNoWorker', '5 no worker'],
    ['oneAtATime', '7 one at a time'],
    ['overload', '8 overload'],
  ] as const) {
    const u = r.cpu[stage];
    if (u)
      rows.push(
        infoRow(
          '· machine',
          `CPU of other processes during ${label}`,
          u.others,
          'cores',
          `machine busy ${u.machine} of ${os.cpus().length}; ours: ${Object.entries(u.byProgram)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}, load ${u.benchAndLoad}`,
        ),
      );
  }
  return rows;
}

/** The code measured: the commit and whether src/workflows/activities differ from it (at the start), and when dist/ was built. */
function gitState(): { commit: string | null; dirty: boolean | null; distBuiltAt: string | null } {
  let distBuiltAt: string | null = null;
  try {
    distBuiltAt = fs.statSync(path.join(REPO_ROOT, 'dist', 'src', 'server.js')).mtime.toISOString();
  } catch {
    // not built
  }
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'workflows', 'activities'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty, distBuiltAt };
  } catch {
    return { commit: null, dirty: null, distBuiltAt };
  }
}

export function writeResults(doc: unknown, stamp: string, prefix = ''): string {
  const dir = path.join(REPO_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const file = path.join(dir, `${prefix}${stamp}.json`);
  for (const target of [file, path.join(dir, `${prefix}latest.json`)]) {
    fs.writeFileSync(`${target}.tmp`, text);
    fs.renameSync(`${target}.tmp`, target);
  }
  return file;
}

// ---------------------------------------------------------------------------------------------------------------
// Main

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
  const plan = opts.quick ? PLANS.quick : PLANS.full;
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
    `${opts.quick ? 'quick' : 'full'} run of scenarios ${[...opts.scenarios].sort().join(', ')} on ${os.cpus().length} CPUs; load average before: ${loadBefore.join(' ')}`,
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
    scenarios: [...opts.scenarios].sort(),
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
      logLevel: 'info',
      limitsRaisedTo: Number(LIMIT_RAISED),
      cpuProf: opts.cpuProf,
      ingressNodeOptions: opts.ingressNodeOptions ?? null,
      temporal: opts.temporal ?? 'dev',
      workers: opts.workers ?? 1,
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
