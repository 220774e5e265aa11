/**
 * The ground the test infrastructure stands on (support/infra.ts gathers it): the run directory, waiting for a
 * condition with a deadline, free loopback ports, and servers spawned in a process group of their own.
 *
 * Every spawned server runs under a small bash wrapper that is the leader of its own process group. The wrapper
 * survives the group's SIGTERM long enough to reap the server, and a watchdog in the same group reads the wrapper's stdin, a pipe
 * held by this process: when this process dies for any reason (even SIGKILL), the pipe closes and the watchdog
 * terminates the whole group. So a crashed or killed test run leaves no servers behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { groupAlive, terminateGroup, track, untrack, WRAPPER } from './process-group';

/**
 * The checkout: the nearest directory above this file with a package.json. This file runs from its source
 * (support/, under jest) and compiled (dist/support/, under the bench and `make cluster`); dist/ has none.
 */
export const REPO_ROOT = ((): string => {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${__dirname}`);
  }
})();
/** Everything the test infrastructure writes: logs, SQLite files, the env of the current run. Gitignored. */
export const RUN_ROOT = path.join(REPO_ROOT, '.run', 'test');

/** The directory of the current jest run (set by globalSetup); a process-private one when used outside jest. */
export function runDir(): string {
  const dir = process.env.TEST_RUN_DIR ?? path.join(RUN_ROOT, `adhoc-${process.pid}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Unique even when jest loads this module afresh for every test file of a worker. */
export function instanceName(kind: string): string {
  return `${kind}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Polling and ports

/**
 * Polls `probe` every `intervalMs` until it yields a value other than undefined or false, and returns that value.
 * A probe that throws aborts the wait with its error (so a dead process fails fast); a probe that hangs is cut off
 * at the deadline. On timeout the error names `what`.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number, intervalMs = 50): Promise<T> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const timedOut = () => new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw timedOut();
    const ac = new AbortController();
    const expiry = delay(remaining, 'expired' as const, { signal: ac.signal }).catch(() => 'aborted' as const);
    const result = await Promise.race([probe(), expiry]).finally(() => ac.abort());
    if (result === 'expired') throw timedOut();
    if (result !== undefined && result !== false) return result as T;
    const left = deadline - Date.now();
    if (left <= 0) throw timedOut();
    await delay(Math.min(intervalMs, left));
  }
}

/** The first port of the kernel's ephemeral range (where it picks local ports of outgoing connections). */
function ephemeralFloor(): number {
  try {
    const first = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 1024 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A port that was free on 127.0.0.1 a moment ago, for another process to listen on later. It is taken from below the
 * kernel's ephemeral range: a port from inside it (what `listen(0)` gives) may become the local port of any outgoing
 * connection on the machine before that process binds it, and its listen then fails with EADDRINUSE (seen in CI).
 */
export async function freePort(): Promise<number> {
  const floor = ephemeralFloor();
  if (floor - 10_000 >= 4_096) return freePortBelow(floor, 10_000);
  const server = net.createServer();
  server.unref();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  if (address === null || typeof address === 'string') throw new Error('could not read the port of a listening socket');
  return address.port;
}

/**
 * A free port below `limit`, outside the kernel's ephemeral range: Temporal's SQL schema keeps membership ports in a
 * smallint (at most 32767). Random candidates, each checked by binding it.
 */
export async function freePortBelow(limit = 32_768, from = 20_000): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = from + Math.floor(Math.random() * (limit - from));
    const server = net.createServer();
    server.unref();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return port;
    }
  }
  throw new Error(`no free port between ${from} and ${limit} after 200 tries`);
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isPortOpen(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Process groups

export function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** One server process in its own process group, its output appended to a log file. */
export class GroupProcess {
  private child: ChildProcess | undefined;
  private exitPromise: Promise<void> | undefined;
  private logOffset = 0;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;

  constructor(
    readonly label: string,
    readonly logFile: string,
  ) {}

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  get running(): boolean {
    return this.child !== undefined && this.exitPromise !== undefined && this.exitCode === null && this.exitSignal === null;
  }

  /** Why it is not running, with the end of its log. */
  describeExit(): string {
    return `${this.label} exited (code ${this.exitCode}, signal ${this.exitSignal}); last lines of ${this.logFile}:\n${tail(this.logFile)}`;
  }

  /** What the process logged since its last spawn. */
  logSinceSpawn(): string {
    try {
      return fs.readFileSync(this.logFile).subarray(this.logOffset).toString('utf8');
    } catch {
      return '';
    }
  }

  spawn(command: string, args: string[]): void {
    if (this.running) throw new Error(`${this.label} is already running (pid ${this.pid})`);
    fs.mkdirSync(path.dirname(this.logFile), { recursive: true });
    const logFd = fs.openSync(this.logFile, 'a');
    this.logOffset = fs.fstatSync(logFd).size;
    fs.writeSync(logFd, `\n--- ${new Date().toISOString()} ${command} ${args.join(' ')}\n`);
    let child: ChildProcess;
    try {
      child = spawn('bash', ['-c', WRAPPER, this.label, command, ...args], {
        detached: true,
        stdio: ['pipe', logFd, logFd],
      });
    } finally {
      fs.closeSync(logFd);
    }
    if (child.pid === undefined) throw new Error(`could not spawn ${this.label}: ${command}`);
    const pgid = child.pid;
    track(pgid);
    this.child = child;
    this.exitCode = null;
    this.exitSignal = null;
    child.stdin?.on('error', () => undefined);
    // Neither the pipe nor the child may keep this process alive; the pipe only has to exist while we do.
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    child.unref();
    this.exitPromise = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        resolve();
      });
    });
  }

  /** SIGTERM to the group; SIGKILL past the deadline. Resolves when no process of the group is left. */
  /** `signal` first (SIGINT: PostgreSQL's fast shutdown), SIGKILL for what is left after `graceMs`. */
  stop(graceMs = 10_000, signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM'): Promise<void> {
    return this.terminate(signal, graceMs);
  }

  /** SIGKILL to the whole group at once (a crash: no shutdown, no final write). Resolves when it is gone. */
  kill9(): Promise<void> {
    return this.terminate('SIGKILL', 0);
  }

  private async terminate(first: 'SIGTERM' | 'SIGINT' | 'SIGKILL', graceMs: number): Promise<void> {
    const child = this.child;
    const exited = this.exitPromise;
    if (!child?.pid || !exited) return;
    const pgid = child.pid;
    await terminateGroup(pgid, exited, first, graceMs);
    await waitFor(`process group ${pgid} of ${this.label} to be gone`, async () => !groupAlive(pgid), 5_000);
    child.stdin?.destroy();
    untrack(pgid);
    this.child = undefined;
    this.exitPromise = undefined;
  }
}

export async function waitPortClosed(port: number, what: string): Promise<void> {
  await waitFor(`port ${port} (${what}) to close`, async () => !(await isPortOpen(port)), 10_000);
}

// ---------------------------------------------------------------------------------------------------------------
// Run directories

/** Removes run dirs of earlier jest runs whose process is gone (names are `<pid>-<time>` or `adhoc-<pid>`). */
export function pruneStaleRunDirs(): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(RUN_ROOT);
  } catch {
    return;
  }
  for (const entry of entries) {
    const m = /^(?:adhoc-)?(\d+)(?:-\d+)?$/.exec(entry);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid) continue;
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch (err) {
      alive = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (!alive) fs.rmSync(path.join(RUN_ROOT, entry), { recursive: true, force: true });
  }
}
