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
import { REPO_ROOT, waitFor } from './infra';
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
export function testFileTag(): string {
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
    RATE_LIMIT_SCALE: '1000',
    WEBHOOK_PREAUTH_IP_MAX: '100000',
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
