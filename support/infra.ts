/**
 * Real infrastructure for integration and e2e tests: a Temporal CLI dev server and a redis-server, each on free
 * loopback ports, each in its own process group. Used by jest's globalSetup (one of each for the whole run) and by
 * tests that need a private instance they can stop and start (outage and restart scenarios).
 *
 * Every spawned server runs under a small bash wrapper that is the leader of its own process group. The wrapper
 * survives the group's SIGTERM long enough to reap the server, and a watchdog in the same group reads the wrapper's stdin, a pipe
 * held by this process: when this process dies for any reason (even SIGKILL), the pipe closes and the watchdog
 * terminates the whole group. So a crashed or killed test run leaves no servers behind.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { groupAlive, terminateGroup, track, untrack, WRAPPER } from './process-group';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import Redis, { type RedisOptions } from 'ioredis';
import { SEARCH_ATTRIBUTE_NAMES, SEARCH_ATTRIBUTES } from '../src/temporal/search-attributes';
import { temporalDevProfileArgs } from '../scripts/temporal-profile';

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

/** A port that was free on 127.0.0.1 a moment ago (the kernel picks it). */
export async function freePort(): Promise<number> {
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

function tail(file: string, lines = 30): string {
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
// Temporal

export const TEMPORAL_SEARCH_ATTRIBUTES: readonly string[] = SEARCH_ATTRIBUTE_NAMES;

/** The Temporal CLI binary: $TEMPORAL_BIN, else whatever scripts/ensure-temporal.sh prints (builds it once). */
export function temporalBinary(): string {
  const fromEnv = process.env.TEMPORAL_BIN;
  if (fromEnv && fs.existsSync(fromEnv)) return fromEnv;
  const out = execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'ensure-temporal.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const bin = out.trim().split('\n').pop() ?? '';
  if (!bin || !fs.existsSync(bin)) throw new Error(`scripts/ensure-temporal.sh printed no usable binary: ${JSON.stringify(out)}`);
  return bin;
}

export interface TemporalServer {
  /** gRPC frontend, `127.0.0.1:PORT`. */
  address: string;
  port: number;
  uiUrl: string;
  dbFile: string;
  /** `default` plus the extra namespaces (for an external server: this run's own, the first in place of `default`). */
  namespaces: string[];
  /** Which Temporal: undefined for the dev server, `cluster`, or `external`. */
  profile?: 'cluster' | 'external';
  logFile: string;
  /** Process group id (the wrapper's pid); -1 while stopped. */
  readonly pid: number;
  /** Stops the server and waits until its process group is gone and its port is closed. */
  stop(): Promise<void>;
  /** Starts it again on the same ports with the same database (state survives). */
  start(): Promise<void>;
  /** Stops it for good and removes what it kept outside the run directory (the cluster profile's PostgreSQL). */
  dispose?(): Promise<void>;
}

export interface StartTemporalOptions {
  /** SQLite file; default: a fresh file in the run dir. */
  dbFile?: string;
  /** Namespaces to create besides `default`. */
  namespaces?: string[];
  /** How long to wait for readiness (default 60 s). */
  readyTimeoutMs?: number;
  /**
   * `project` (default): the project's dev-server profile (scripts/temporal-profile.ts); `stock`: the CLI's defaults,
   * for before/after measurements. `TEMPORAL_DEV_PROFILE=stock` sets it for a whole run.
   */
  profile?: 'project' | 'stock';
}

interface TemporalPorts {
  grpc: number;
  ui: number;
  http: number;
  metrics: number;
}

/**
 * Starts `temporal server start-dev` on free loopback ports (gRPC, UI, HTTP API and metrics all chosen here, so
 * parallel runs never collide), with our search attributes, and waits until every namespace answers and lists them.
 */
export async function startTemporal(opts: StartTemporalOptions = {}): Promise<TemporalServer> {
  const bin = temporalBinary();
  const name = instanceName('temporal');
  const dir = path.join(runDir(), name);
  fs.mkdirSync(dir, { recursive: true });
  const dbFile = path.resolve(opts.dbFile ?? path.join(dir, 'temporal.db'));
  const namespaces = ['default', ...(opts.namespaces ?? []).filter((n) => n !== 'default')];
  const logFile = path.join(dir, 'temporal.log');
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const profile = opts.profile ?? (process.env.TEMPORAL_DEV_PROFILE === 'stock' ? 'stock' : 'project');
  const proc = new GroupProcess(name, logFile);

  const argsFor = (p: TemporalPorts) => [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(p.grpc),
    '--ui-port',
    String(p.ui),
    '--http-port',
    String(p.http),
    '--metrics-port',
    String(p.metrics),
    '--db-filename',
    dbFile,
    '--log-level',
    'error',
    ...namespaces.filter((n) => n !== 'default').flatMap((n) => ['--namespace', n]),
    ...SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a.name}=${a.type}`]),
    ...(profile === 'project' ? temporalDevProfileArgs(process.env.TEMPORAL_DEV_PROFILE_WITHOUT || undefined) : []),
  ];

  const launch = async (p: TemporalPorts) => {
    proc.spawn(bin, argsFor(p));
    await waitTemporalReady(`127.0.0.1:${p.grpc}`, namespaces, proc, readyTimeoutMs);
  };

  // First start: if another process grabbed one of our ports in the meantime, pick new ones and try again.
  const fixed = await (async () => {
    for (let attempt = 1; ; attempt++) {
      const candidate = { grpc: await freePort(), ui: await freePort(), http: await freePort(), metrics: await freePort() };
      try {
        await launch(candidate);
        return candidate;
      } catch (err) {
        await proc.stop();
        if (attempt >= 3 || !/address already in use/i.test(proc.logSinceSpawn())) throw err;
      }
    }
  })();
  const server: TemporalServer = {
    address: `127.0.0.1:${fixed.grpc}`,
    port: fixed.grpc,
    uiUrl: `http://127.0.0.1:${fixed.ui}`,
    dbFile,
    namespaces,
    logFile,
    get pid() {
      return proc.pid;
    },
    async stop() {
      await proc.stop();
      await waitPortClosed(fixed.grpc, `${name} gRPC`);
    },
    async start() {
      if (proc.running) return;
      await launch(fixed);
    },
  };
  return server;
}

export async function waitTemporalReady(
  address: string,
  namespaces: string[],
  proc: GroupProcess,
  timeoutMs: number,
  tls?: ConnectionOptions['tls'],
): Promise<void> {
  let connection: Connection | undefined;
  let last = 'no attempt yet';
  try {
    await waitFor(
      `Temporal at ${address} to serve namespaces [${namespaces.join(', ')}] with search attributes [${TEMPORAL_SEARCH_ATTRIBUTES.join(', ')}]`,
      async () => {
        if (!proc.running) throw new Error(`Temporal did not become ready: ${proc.describeExit()}`);
        // A refused port answers at once; a gRPC connect to it would back off for up to its timeout.
        if (!connection && !(await isPortOpen(Number(address.split(':').pop()), 200))) return undefined;
        try {
          connection ??= await Connection.connect({ address, connectTimeout: 1_000, ...(tls ? { tls } : {}) });
          const conn = connection;
          await conn.withDeadline(Date.now() + 2_000, async () => {
            for (const namespace of namespaces) {
              await conn.workflowService.describeNamespace({ namespace });
              const { customAttributes } = await conn.operatorService.listSearchAttributes({ namespace });
              const missing = TEMPORAL_SEARCH_ATTRIBUTES.filter((a) => !(customAttributes && a in customAttributes));
              if (missing.length > 0) throw new Error(`namespace ${namespace} lacks search attributes ${missing.join(', ')}`);
            }
          });
          return true;
        } catch (err) {
          last = (err as Error).message;
          return undefined;
        }
      },
      timeoutMs,
      100,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last probe: ${last}; last lines of ${proc.logFile}:\n${tail(proc.logFile)}`);
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Redis

export interface RedisServer {
  url: string;
  port: number;
  logFile: string;
  /** Where it keeps its append-only file (durable servers only). */
  dir: string;
  durable: boolean;
  readonly pid: number;
  /** Stops the server (SIGTERM) and waits until the port is closed. A throwaway server's data is gone. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash or the OOM killer would: no shutdown, no final write. Waits until the port is closed. */
  kill9(): Promise<void>;
  /** Starts it again on the same port: empty, or for a durable server with every write it acknowledged. */
  start(): Promise<void>;
}

export interface StartRedisOptions {
  readyTimeoutMs?: number;
  /**
   * An append-only file (`appendonly yes`, `appendfsync everysec`, the settings of `make start` and docker-compose):
   * the data survives stop/start and kill9/start. Default false: a throwaway server with no persistence.
   */
  durable?: boolean;
  /** More redis-server arguments (e.g. `--replicaof 127.0.0.1 PORT` for a replica). */
  args?: string[];
  /**
   * TLS only (no plain port; client certificates required: mTLS) and one ACL user instead of the default user. The
   * URL is then `rediss://user:password@127.0.0.1:port`; readiness is checked over TLS with the CA and the client pair.
   */
  tls?: { caFile: string; certFile: string; keyFile: string; clientCertFile: string; clientKeyFile: string; user: string; password: string };
}

/** The persistence flags of a redis-server: none, or the AOF of `make start` and docker-compose.yml. */
function persistenceArgs(durable: boolean): string[] {
  return durable ? ['--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--save', '', '--appendonly', 'no'];
}

/** Starts a redis-server on a free loopback port (throwaway unless `durable`) and waits until it answers PING. */
export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const name = instanceName('redis');
  const dir = path.join(runDir(), name);
  fs.mkdirSync(dir, { recursive: true });
  const logFile = path.join(dir, 'redis.log');
  const readyTimeoutMs = opts.readyTimeoutMs ?? 10_000;
  const durable = opts.durable ?? false;
  const proc = new GroupProcess(name, logFile);
  const bin = process.env.REDIS_SERVER_BIN ?? 'redis-server';

  const tls = opts.tls;
  const tlsArgs = (port: number) =>
    tls
      ? [
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          '--tls-ca-cert-file',
          tls.caFile,
          '--tls-auth-clients',
          'yes',
          '--user',
          'default',
          'off',
          '--user',
          tls.user,
          'on',
          `>${tls.password}`,
          '~*',
          '&*',
          '+@all',
        ]
      : ['--port', String(port)];
  const urlOf = (port: number) => (tls ? `rediss://${tls.user}:${tls.password}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`);
  const pingOptions = tls
    ? { tls: { ca: fs.readFileSync(tls.caFile), cert: fs.readFileSync(tls.clientCertFile), key: fs.readFileSync(tls.clientKeyFile) } }
    : {};
  const launch = async (port: number) => {
    proc.spawn(bin, [
      ...tlsArgs(port),
      '--bind',
      '127.0.0.1',
      ...persistenceArgs(durable),
      '--daemonize',
      'no',
      '--dir',
      dir,
      '--logfile',
      '',
      ...(opts.args ?? []),
    ]);
    await waitRedisReady(urlOf(port), proc, readyTimeoutMs, pingOptions);
  };

  const fixed = await (async () => {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        await launch(port);
        return port;
      } catch (err) {
        await proc.stop();
        if (attempt >= 3 || !/address already in use/i.test(proc.logSinceSpawn())) throw err;
      }
    }
  })();
  return {
    url: urlOf(fixed),
    port: fixed,
    logFile,
    dir,
    durable,
    get pid() {
      return proc.pid;
    },
    async stop() {
      await proc.stop();
      await waitPortClosed(fixed, name);
    },
    async kill9() {
      await proc.kill9();
      await waitPortClosed(fixed, name);
    },
    async start() {
      if (proc.running) return;
      await launch(fixed);
    },
  };
}

/** True when a Redis at `url` answers PING within `timeoutMs`. Never retries on its own. */
export async function redisPing(url: string, timeoutMs = 1_000, options: RedisOptions = {}): Promise<boolean> {
  const client = new Redis(url, {
    ...options,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Where a durable server's append-only file stands: `pendingBytes` acknowledged but not yet handed to the kernel, and
 * how many times it postponed that write. With `appendfsync everysec`, Redis answers a write before writing it to
 * the file whenever a background fsync is still running (a busy disk), for up to 2 s: a SIGKILL then loses those
 * acknowledged writes (docs/deployment.md). `pendingBytes` 0 means every write acknowledged so far survives a SIGKILL.
 */
export async function aofState(url: string): Promise<{ pendingBytes: number; postponedWrites: number }> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 2_000 });
  client.on('error', () => undefined);
  try {
    const info = await client.info('persistence');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
    return { pendingBytes: field('aof_buffer_length'), postponedWrites: field('aof_delayed_fsync') };
  } finally {
    client.disconnect();
  }
}

async function waitRedisReady(url: string, proc: GroupProcess, timeoutMs: number, options: RedisOptions = {}): Promise<void> {
  try {
    await waitFor(
      `redis-server on ${url.replace(/\/\/[^@]*@/, '//')} to answer PING`,
      async () => {
        if (!proc.running) throw new Error(`redis-server did not become ready: ${proc.describeExit()}`);
        return redisPing(url, 500, options);
      },
      timeoutMs,
    );
  } catch (err) {
    if (!proc.running) throw err;
    throw new Error(`${(err as Error).message}; last lines of ${proc.logFile}:\n${tail(proc.logFile)}`);
  }
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
