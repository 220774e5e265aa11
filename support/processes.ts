/**
 * The BUILT service as real child processes (`npm run build` first): ingress (`dist/src/server.js`), worker
 * (`dist/src/worker.js`), paper bridge (`dist/src/paper/main.js`) and the admin CLI (`dist/src/cli/admin.js`), against
 * the run's Temporal and Redis from jest's globalSetup. For e2e tests over HTTP and for fault tests (kill -9, restart).
 *
 * - Each long-running process runs under a small bash wrapper that leads its own process group; a watchdog in that
 *   group reads a pipe held by this process, so when this process dies (even by SIGKILL) the whole group is
 *   terminated. A process 'exit' hook also SIGKILLs every group still alive. No orphans either way.
 * - stdout and stderr go to separate files under `testEnv().runDir/processes/`, appended across restarts; each spawn
 *   writes a `--- <time> <command>` header line to both.
 * - Readiness is a condition, never a sleep: ingress answers GET /readyz (admin listener) with 200; the worker logged `worker running`;
 *   the paper bridge logged a `hello` for every account it runs. A process that exits while being waited for fails
 *   the wait at once with the end of its logs.
 * - stop(): SIGTERM to the group, SIGKILL past the grace deadline; resolves when no process of the group is left.
 *   kill9(): SIGKILL to the group (a crash). restart(): stop if running, spawn again with the same arguments, env
 *   and port, and wait until ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { testEnv } from './env';
import { freePort, REPO_ROOT, waitFor } from './infra';
import { groupAlive, terminateGroup, track, untrack, WRAPPER } from './process-group';
import { nodeFlags } from '../scripts/node-flags';

export const DIST = path.join(REPO_ROOT, 'dist');
export const ENTRIES = {
  ingress: path.join(DIST, 'src', 'server.js'),
  worker: path.join(DIST, 'src', 'worker.js'),
  'paper-bridge': path.join(DIST, 'src', 'paper', 'main.js'),
  admin: path.join(DIST, 'src', 'cli', 'admin.js'),
  'ctrader-connector': path.join(DIST, 'src', 'ctrader', 'main.js'),
} as const;
export type ProgramKind = keyof typeof ENTRIES;

// ---------------------------------------------------------------------------------------------------------------
// The build

function newestMtime(dir: string, ext: RegExp): { file: string; mtimeMs: number } | undefined {
  let best: { file: string; mtimeMs: number } | undefined;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    const hit = e.isDirectory() ? newestMtime(p, ext) : ext.test(e.name) ? { file: p, mtimeMs: fs.statSync(p).mtimeMs } : undefined;
    if (hit && (!best || hit.mtimeMs > best.mtimeMs)) best = hit;
  }
  return best;
}

/**
 * Throws unless every entry point and the workflow bundle exist and are newer than every source file, so an e2e test
 * never silently runs yesterday's code. E2E_ALLOW_STALE_DIST=1 turns the staleness check off.
 */
export function ensureBuilt(): void {
  const outputs = [...Object.values(ENTRIES), path.join(DIST, 'workflow-bundle.js')];
  const missing = outputs.filter((f) => !fs.existsSync(f));
  if (missing.length > 0) throw new Error(`not built: ${missing.map((f) => path.relative(REPO_ROOT, f)).join(', ')} missing; run npm run build`);
  if (process.env.E2E_ALLOW_STALE_DIST === '1') return;
  const oldestOutput = Math.min(...outputs.map((f) => fs.statSync(f).mtimeMs));
  for (const dir of ['src', 'workflows', 'activities']) {
    const newest = newestMtime(path.join(REPO_ROOT, dir), /\.ts$/);
    if (newest && newest.mtimeMs > oldestOutput) {
      throw new Error(`dist/ is older than ${path.relative(REPO_ROOT, newest.file)}: run npm run build (or set E2E_ALLOW_STALE_DIST=1)`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Environment

/** The current test file's name without `.test.ts`, for names that say where they came from. */
function testFileTag(): string {
  const testPath = typeof expect !== 'undefined' ? expect.getState().testPath : undefined;
  return path.basename(testPath ?? 'adhoc', '.test.ts').replace(/[^A-Za-z0-9_-]/g, '-');
}

/**
 * The environment shared by the processes of one stack: the run's Redis and Temporal, a task queue and a rate-limit
 * key prefix of its own, generous limits (tests share one Redis and poll in loops), LOG_LEVEL=info. Only what the
 * programs need is passed on, not the jest worker's environment.
 */
export function serviceEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const t = testEnv();
  const tag = randomBytes(4).toString('hex');
  const base: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'TZ']) {
    const v = process.env[name];
    if (v !== undefined) base[name] = v;
  }
  return {
    ...base,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    REDIS_URL: t.redisUrl,
    TEMPORAL_ADDRESS: t.temporalAddress,
    TEMPORAL_NAMESPACE: t.temporalNamespace,
    TEMPORAL_TASK_QUEUE: `e2e-${testFileTag()}-${tag}`,
    WORKER_METRICS_PORT: '0',
    RATE_LIMIT_KEY_PREFIX: `e${tag}:`,
    ROUTE_LIMIT_MAX: '100000',
    WEBHOOK_PREAUTH_IP_MAX: '100000',
    FAIRNESS_ACCOUNT_MAX: '100000',
    FAIRNESS_BROADCAST_MAX: '100000',
    POLL_IP_MAX: '100000',
    POLL_ACCOUNT_MAX: '100000',
    // As in test/helpers/stack.ts: admission control has tests of its own.
    ADMISSION_MAX_LATE: '100000',
    // Two test files share two cores with a Temporal server: a guard's Redis call can wait past the 500 ms default
    // there without Redis being down. Fail-closed tests stop or freeze Redis, which no timeout hides.
    REDIS_COMMAND_TIMEOUT_MS: '2000',
    BRIDGE_LIMIT_MAX: '100000',
    ...overrides,
  };
}

/** Where the processes of this run write their output. */
export function processLogDir(): string {
  const dir = path.join(testEnv().runDir, 'processes');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

// ---------------------------------------------------------------------------------------------------------------
// Process groups

function readFrom(file: string, offset: number): string {
  try {
    return fs.readFileSync(file).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

function tail(text: string, lines = 25): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n') || '(nothing)';
}

/** How a process ended: `code` is the program's exit status (128+n when it died of signal n under the wrapper). */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceSpec {
  /** One of our programs (run with this node), or `external` with `program` (another language's bridge, say). */
  kind: ProgramKind | 'external';
  /** For `external`: the executable and its leading arguments (spec.args follow them). */
  program?: string[];
  /** Unique within the run: names the log files. */
  name: string;
  args: string[];
  env: Record<string, string>;
  /** Resolves true when the process is ready; may throw to abort. Called repeatedly, after each spawn. */
  ready: (proc: ServiceProcess) => Promise<boolean>;
  readyTimeoutMs: number;
}

/** One program of the service, spawned under the wrapper in its own process group. */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private exitPromise: Promise<ExitInfo> | undefined;
  private offsets = { stdout: 0, stderr: 0 };
  /** How the last run ended; null while running or never started. */
  lastExit: ExitInfo | null = null;
  /** How many times it was spawned. */
  spawns = 0;
  readonly stdoutFile: string;
  readonly stderrFile: string;

  constructor(readonly spec: ServiceSpec) {
    const dir = processLogDir();
    this.stdoutFile = path.join(dir, `${spec.name}.stdout.log`);
    this.stderrFile = path.join(dir, `${spec.name}.stderr.log`);
  }

  get name(): string {
    return this.spec.name;
  }

  /** The process group id (the wrapper's pid); -1 when not running. */
  get pid(): number {
    return this.child?.pid ?? -1;
  }

  get running(): boolean {
    return this.child !== undefined && this.lastExit === null;
  }

  /** stdout / stderr of the current (or last) run only. */
  stdout(): string {
    return readFrom(this.stdoutFile, this.offsets.stdout);
  }
  stderr(): string {
    return readFrom(this.stderrFile, this.offsets.stderr);
  }

  /** The JSON lines of the current run's stdout or stderr (other lines skipped). */
  jsonLines(stream: 'stdout' | 'stderr'): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const line of (stream === 'stdout' ? this.stdout() : this.stderr()).split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a line being written
      }
    }
    return out;
  }

  describe(): string {
    const state = this.running ? `running (pgid ${this.pid})` : `exited (code ${this.lastExit?.code}, signal ${this.lastExit?.signal})`;
    return (
      `${this.name} ${state}\n--- last lines of ${this.stdoutFile}:\n${tail(this.stdout())}` + `\n--- last lines of ${this.stderrFile}:\n${tail(this.stderr())}`
    );
  }

  /** Spawns the program and waits until it is ready; if it never gets ready, it is stopped again and this throws. */
  async start(): Promise<void> {
    this.spawnOnce();
    try {
      await this.waitReady();
    } catch (err) {
      await this.stop(2_000);
      throw err;
    }
  }

  /** Spawns the program without waiting for readiness. */
  spawnOnce(): void {
    if (this.running) throw new Error(`${this.name} is already running (pgid ${this.pid})`);
    const command = this.commandLine();
    const header = `--- ${new Date().toISOString()} ${(this.spec.kind === 'external' ? command : command.slice(1)).join(' ')}\n`;
    const outFd = fs.openSync(this.stdoutFile, 'a');
    const errFd = fs.openSync(this.stderrFile, 'a');
    let child: ChildProcess;
    try {
      this.offsets = { stdout: fs.fstatSync(outFd).size, stderr: fs.fstatSync(errFd).size };
      fs.writeSync(outFd, header);
      fs.writeSync(errFd, header);
      child = spawn('bash', ['-c', WRAPPER, this.name, ...command], {
        cwd: REPO_ROOT,
        env: this.spec.env,
        detached: true,
        stdio: ['pipe', outFd, errFd],
      });
    } finally {
      fs.closeSync(outFd);
      fs.closeSync(errFd);
    }
    if (child.pid === undefined) throw new Error(`could not spawn ${this.name}`);
    track(child.pid);
    this.child = child;
    this.lastExit = null;
    this.spawns++;
    child.stdin?.on('error', () => undefined);
    // Neither the pipe nor the child may keep the jest worker alive; the pipe only has to exist while it does.
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    child.unref();
    this.exitPromise = new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => {
        this.lastExit = { code, signal };
        resolve(this.lastExit);
      });
    });
  }

  private commandLine(): string[] {
    const { kind, program, args } = this.spec;
    if (kind !== 'external') return [process.execPath, ...nodeFlags(kind), ENTRIES[kind], ...args];
    if (!program || program.length === 0) throw new Error(`${this.name}: an external program needs spec.program`);
    return [...program, ...args];
  }

  /** Waits for the spec's readiness condition; fails at once, with the logs, if the process exits meanwhile. */
  async waitReady(timeoutMs = this.spec.readyTimeoutMs): Promise<void> {
    try {
      await waitFor(
        `${this.name} to be ready`,
        async () => {
          if (!this.running) throw new Error(`${this.name} exited before it was ready`);
          return this.spec.ready(this);
        },
        timeoutMs,
        50,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${this.describe()}`);
    }
  }

  /** Resolves with how the process ended (at once if it is not running). */
  async exited(): Promise<ExitInfo | null> {
    return this.exitPromise ? this.exitPromise : this.lastExit;
  }

  /**
   * SIGTERM to the group, SIGKILL past `graceMs`; resolves when no process of the group is left, with how the program
   * ended (null when it was not running).
   */
  async stop(graceMs = 10_000): Promise<ExitInfo | null> {
    return this.terminate('SIGTERM', graceMs);
  }

  /** SIGKILL to the whole group at once: a crash, no chance to clean up. */
  async kill9(): Promise<ExitInfo | null> {
    return this.terminate('SIGKILL', 0);
  }

  /** Stops it if it runs (gracefully), spawns it again with the same arguments, env and port, and waits until ready. */
  async restart(graceMs = 10_000): Promise<void> {
    await this.stop(graceMs);
    await this.start();
  }

  private async terminate(first: 'SIGTERM' | 'SIGKILL', graceMs: number): Promise<ExitInfo | null> {
    const child = this.child;
    const exited = this.exitPromise;
    if (!child?.pid || !exited) return this.lastExit;
    const pgid = child.pid;
    const info = await terminateGroup(pgid, exited, first, graceMs);
    await waitFor(`process group ${pgid} of ${this.name} to be gone`, async () => !groupAlive(pgid), 5_000);
    child.stdin?.destroy();
    untrack(pgid);
    this.child = undefined;
    this.exitPromise = undefined;
    return info;
  }
}

/** SIGKILL the process's whole group (a crash) and wait until it is gone. */
export function kill9(proc: ServiceProcess): Promise<ExitInfo | null> {
  return proc.kill9();
}

/** Stop (if running) and start again with the same arguments, env and port; resolves when ready. */
export function restart(proc: ServiceProcess, graceMs?: number): Promise<void> {
  return proc.restart(graceMs);
}

// ---------------------------------------------------------------------------------------------------------------
// The programs

function uniqueName(kind: string, label?: string): string {
  return `${testFileTag()}-${label ?? kind}-${randomBytes(3).toString('hex')}`;
}

export interface IngressProcess extends ServiceProcess {
  readonly url: string;
  readonly port: number;
  /** The admin listener: /metrics, /readyz, /healthz. */
  readonly adminUrl: string;
}

/** GET url → status, or undefined when nothing answers within the deadline. */
async function httpStatus(url: string, timeoutMs = 1_000): Promise<number | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

/**
 * `node dist/src/server.js` on a free port, its admin listener on another; ready when the admin GET /readyz answers 200
 * (Redis and Temporal reachable). If another process took a port meanwhile (EADDRINUSE), it tries again on new ones.
 * Restarts keep the ports.
 */
export async function startIngressProcess(env: Record<string, string>, opts: { label?: string; readyTimeoutMs?: number } = {}): Promise<IngressProcess> {
  const name = uniqueName('ingress', opts.label);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const adminPort = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const proc = new ServiceProcess({
      kind: 'ingress',
      name,
      args: [],
      env: { ...env, HOST: '127.0.0.1', PORT: String(port), ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(adminPort) },
      ready: async () => (await httpStatus(`${adminUrl}/readyz`)) === 200,
      readyTimeoutMs: opts.readyTimeoutMs ?? 30_000,
    });
    try {
      await proc.start();
      return Object.assign(proc, { url, port, adminUrl });
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test(proc.stderr())) throw err;
    }
  }
}

/** `node dist/src/worker.js`; ready when it logged `worker running` (its Temporal workers are created and polling). */
export async function startWorkerProcess(env: Record<string, string>, opts: { label?: string; readyTimeoutMs?: number } = {}): Promise<ServiceProcess> {
  const proc = new ServiceProcess({
    kind: 'worker',
    name: uniqueName('worker', opts.label),
    args: [],
    env,
    ready: async (p) => p.jsonLines('stdout').some((l) => l.msg === 'worker running'),
    readyTimeoutMs: opts.readyTimeoutMs ?? 60_000,
  });
  await proc.start();
  return proc;
}

export interface PaperBridgeOptions {
  registryFile: string;
  ledgerFile?: string;
  ingressUrl: string;
  /** More flags, e.g. ['--fault', 'drop-before-report:1'] or ['--closed', 'US30']. */
  extraArgs?: string[];
  env?: Record<string, string>;
  label?: string;
  readyTimeoutMs?: number;
}

export interface PaperBridgeProcess extends ServiceProcess {
  /** The accounts it runs a terminal for (those of the registry document with a bridge token). */
  readonly accountIds: string[];
  /** The `event: "command"` lines of its stdout (current run). */
  commands(): Record<string, unknown>[];
}

/**
 * `node dist/src/paper/main.js --registry FILE [--ledger FILE] --ingress URL`; ready when its stderr has a `hello`
 * line for every account of the document that has a bridge token (each terminal is connected). After a restart only
 * the new run's lines count, so ready means connected again.
 */
export async function startPaperBridgeProcess(opts: PaperBridgeOptions): Promise<PaperBridgeProcess> {
  const doc = JSON.parse(fs.readFileSync(opts.registryFile, 'utf8')) as { accounts?: { id: string; bridgeToken?: string }[] };
  const accountIds = (doc.accounts ?? []).filter((a) => a.bridgeToken).map((a) => a.id);
  const args = ['--registry', opts.registryFile, '--ingress', opts.ingressUrl];
  if (opts.ledgerFile) args.push('--ledger', opts.ledgerFile);
  args.push(...(opts.extraArgs ?? []));
  const base: Record<string, string> = {};
  for (const n of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) if (process.env[n] !== undefined) base[n] = process.env[n]!;
  const proc = new ServiceProcess({
    kind: 'paper-bridge',
    name: uniqueName('paper-bridge', opts.label),
    args,
    env: { ...base, ...opts.env },
    ready: async (p) => {
      const hellos = new Set(
        p
          .jsonLines('stderr')
          .filter((l) => l.event === 'hello')
          .map((l) => l.accountId),
      );
      return accountIds.every((id) => hellos.has(id));
    },
    readyTimeoutMs: opts.readyTimeoutMs ?? 30_000,
  });
  const bridge = Object.assign(proc, {
    accountIds,
    commands: () => proc.jsonLines('stdout').filter((l) => l.event === 'command'),
  });
  await bridge.start();
  return bridge;
}

export interface AdminRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Admin CLI runs in flight; SIGKILLed if this process exits first. */
const liveAdmins = new Set<ChildProcess>();
function killLiveAdmins(): void {
  for (const c of liveAdmins) c.kill('SIGKILL');
}

/**
 * `node dist/src/cli/admin.js ARGS` to completion (SIGKILLed past `timeoutMs`). Its output is returned and also
 * appended to `admin.log` in the run's process directory.
 */
export function runAdminProcess(args: string[], env: Record<string, string>, opts: { stdin?: string; timeoutMs?: number } = {}): Promise<AdminRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENTRIES.admin, ...args], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    if (liveAdmins.size === 0) process.on('exit', killLiveAdmins);
    liveAdmins.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    const forget = () => {
      clearTimeout(timer);
      liveAdmins.delete(child);
      if (liveAdmins.size === 0) process.removeListener('exit', killLiveAdmins);
    };
    child.on('error', (err) => {
      forget();
      reject(err);
    });
    child.on('close', (code, signal) => {
      forget();
      // Not the stdout: it may hold credentials the CLI printed once.
      fs.appendFileSync(
        path.join(processLogDir(), 'admin.log'),
        `--- ${new Date().toISOString()} admin ${args.join(' ')} → code ${code} signal ${signal}\n${stderr}`,
      );
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin ?? '');
  });
}

// ---------------------------------------------------------------------------------------------------------------
// A whole stack

export interface ProcessStack {
  env: Record<string, string>;
  worker: ServiceProcess;
  ingress: IngressProcess;
  bridge: PaperBridgeProcess;
  /** Every process, in the order they are stopped: bridge, ingress, worker. */
  all(): ServiceProcess[];
  /** SIGTERM (then SIGKILL) to each, bridge first; how each ended, by name. */
  stop(graceMs?: number): Promise<Record<string, ExitInfo | null>>;
}

/**
 * Worker and ingress (in parallel, same task queue), then a paper bridge for `registryFile` pointed at the ingress.
 * The registry document must already be imported. On any failure, whatever started is stopped again.
 */
export async function startProcessStack(opts: {
  registryFile: string;
  ledgerFile?: string;
  env?: Record<string, string>;
  bridgeArgs?: string[];
}): Promise<ProcessStack> {
  ensureBuilt();
  const env = serviceEnv(opts.env);
  // A start that fails stops its own process; the ones that did start are stopped here.
  const [w, i] = await Promise.allSettled([startWorkerProcess(env), startIngressProcess(env)]);
  if (w.status === 'rejected' || i.status === 'rejected') {
    await Promise.allSettled([w, i].flatMap((r) => (r.status === 'fulfilled' ? [r.value.stop()] : [])));
    throw w.status === 'rejected' ? w.reason : (i as PromiseRejectedResult).reason;
  }
  const worker = w.value;
  const ingress = i.value;
  try {
    const bridge = await startPaperBridgeProcess({
      registryFile: opts.registryFile,
      ledgerFile: opts.ledgerFile,
      ingressUrl: ingress.url,
      extraArgs: opts.bridgeArgs,
    });
    const all = () => [bridge, ingress, worker];
    return {
      env,
      worker,
      ingress,
      bridge,
      all,
      async stop(graceMs?: number) {
        const result: Record<string, ExitInfo | null> = {};
        for (const p of all()) result[p.name] = await p.stop(graceMs);
        return result;
      },
    };
  } catch (err) {
    await ingress.stop();
    await worker.stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP: the same helpers as the in-process tests (support/http.ts loads none of the service's modules)

export { get as httpGet, post as httpPost, type HttpResult } from './http';
