/** A Temporal CLI dev server on free loopback ports, with the project's profile and search attributes. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_NAMES, SEARCH_ATTRIBUTES } from '../src/temporal/search-attributes';
import { temporalDevProfileArgs, temporalDevProfilePlusArgs } from '../scripts/temporal-profile';
import { freePort, GroupProcess, instanceName, isPortOpen, REPO_ROOT, runDir, tail, waitFor, waitPortClosed } from './run';

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
    // Diagnosis only (nothing sets it): candidates measured on top of the profile (docs/temporal-profile.md).
    ...temporalDevProfilePlusArgs(process.env.TEMPORAL_DEV_PROFILE_PLUS),
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
