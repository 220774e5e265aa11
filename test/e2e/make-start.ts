import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort, REPO_ROOT } from '../../support/infra';
import { processTable, readProc, type Proc } from '../../support/proc';

/**
 * `make start` (scripts/start.sh) as a test drives it: on free loopback ports, with its own state and log
 * directories, in a process group of its own, and the processes it started read from /proc.
 */

export interface StartPorts {
  PORT: number;
  ADMIN_PORT: number;
  WORKER_METRICS_PORT: number;
  TEMPORAL_PORT: number;
  TEMPORAL_UI_PORT: number;
  REDIS_PORT: number;
}

export async function freeStartPorts(): Promise<StartPorts> {
  const taken = new Set<number>();
  const next = async (): Promise<number> => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) return (taken.add(p), p);
    }
  };
  return {
    PORT: await next(),
    ADMIN_PORT: await next(),
    WORKER_METRICS_PORT: await next(),
    TEMPORAL_PORT: await next(),
    TEMPORAL_UI_PORT: await next(),
    REDIS_PORT: await next(),
  };
}

/**
 * The environment of one `make start`: the ports, a private state directory (Temporal's database, Redis's AOF, the
 * sealing keys) and log directory, a task queue of its own. `temporalAddress` / `redisUrl` point it at a server it
 * should find running instead of its own port.
 */
export function startEnv(ports: StartPorts, opts: { temporalAddress?: string; redisUrl?: string } = {}): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'make-start-'));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // Not the jest run's own servers, nor a parent make's jobserver.
    if (v !== undefined && !['REDIS_URL', 'TEMPORAL_ADDRESS', 'MAKEFLAGS', 'MFLAGS', 'MAKELEVEL'].includes(k)) env[k] = v;
  }
  return {
    ...env,
    PORT: String(ports.PORT),
    ADMIN_PORT: String(ports.ADMIN_PORT),
    WORKER_METRICS_PORT: String(ports.WORKER_METRICS_PORT),
    TEMPORAL_ADDRESS: opts.temporalAddress ?? `127.0.0.1:${ports.TEMPORAL_PORT}`,
    TEMPORAL_UI_PORT: String(ports.TEMPORAL_UI_PORT),
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `make-start-${randomBytes(4).toString('hex')}`,
    REDIS_URL: opts.redisUrl ?? `redis://127.0.0.1:${ports.REDIS_PORT}`,
    EXTERNAL_SIGNALS_CACHE: path.join(dir, 'cache'),
    START_RUN_DIR: path.join(dir, 'run'),
    LOG_LEVEL: 'warn',
  };
}

export interface Started {
  child: ChildProcess;
  /** The process group: the leader's pid. */
  pgid: number;
  out: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns COMMAND in the checkout, as the leader of a new process group, stdout and stderr gathered into one text. */
export function spawnStart(command: string[], env: Record<string, string>): Started {
  const child = spawn(command[0]!, command.slice(1), { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, pgid: child.pid!, out: () => text, exited };
}

export async function untilExit(s: Started, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const ac = new AbortController();
  const result = await Promise.race([s.exited, delay(timeoutMs, undefined, { signal: ac.signal }).catch(() => undefined)]).finally(() => ac.abort());
  if (!result) throw new Error(`still running ${timeoutMs} ms later; its output:\n${s.out()}`);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// /proc

export type { Proc };

/** Every process below `root` (children, their children, …), from one read of /proc. */
export function descendants(root: number): Proc[] {
  const table = processTable();
  const out: Proc[] = [];
  const parents = [root];
  while (parents.length > 0) {
    const p = parents.pop()!;
    for (const c of table) {
      if (c.ppid === p) {
        out.push(c);
        parents.push(c.pid);
      }
    }
  }
  return out;
}

/** Still running: the same process (same start time), not a zombie. */
export function stillRunning(p: Proc): boolean {
  const now = readProc(p.pid);
  return now !== undefined && now.startedAt === p.startedAt && now.state !== 'Z';
}

/** SIGKILL to whatever of `procs` still runs: a failed test leaves nothing behind. */
export function killLeftovers(procs: readonly Proc[]): void {
  for (const p of procs) {
    if (!stillRunning(p)) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
