/**
 * The cluster profile's Temporal for tests, the bench and `make cluster`: a private PostgreSQL 15 cluster (initdb on a
 * fresh directory, a free loopback port, TCP only, password auth) with Temporal's schemas created
 * by its own sql tool, and the real Temporal server (all four services in one process, N history shards) on free
 * loopback ports, with our namespaces and search attributes registered through its API. Every process runs in its own
 * process group under the watchdog of support/run.ts, so a killed run leaves nothing behind.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import {
  clusterServerConfig,
  DEFAULT_HISTORY_SHARDS,
  dynamicConfigYaml,
  type ClusterPorts,
  type ClusterServerConfigInput,
} from '../scripts/temporal-cluster-profile';
import { INDEXED_VALUE_TYPES, probeValue, SEARCH_ATTRIBUTES } from '../src/temporal/search-attributes';
import {
  freePortBelow,
  GroupProcess,
  instanceName,
  isPortOpen,
  REPO_ROOT,
  runDir,
  waitFor,
  waitPortClosed,
  waitTemporalReady,
  type TemporalServer,
} from './infra';

import { startPostgres, type PostgresServer } from './postgres';

export * from './postgres';

const run = promisify(execFile);

/** One binary of the cluster profile, from $TEMPORAL_SERVER_BIN / $TEMPORAL_SQL_BIN or scripts/ensure-temporal-server.sh. */
export function clusterBinary(which: 'server' | 'sql' | 'ui'): string {
  const fromEnv = process.env[`TEMPORAL_${which.toUpperCase()}_BIN`];
  if (fromEnv && fs.existsSync(fromEnv)) return fromEnv;
  const out = execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'ensure-temporal-server.sh'), which], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const bin = out.trim().split('\n').pop() ?? '';
  if (!bin || !fs.existsSync(bin)) throw new Error(`scripts/ensure-temporal-server.sh ${which} printed no usable binary: ${JSON.stringify(out)}`);
  return bin;
}

// ---------------------------------------------------------------------------------------------------------------
// The Temporal server

export interface TemporalCluster extends TemporalServer {
  postgres: PostgresServer;
  dispose(): Promise<void>;
  shards: number;
  metricsUrl: string;
  configFile: string;
}

export interface StartTemporalClusterOptions {
  /** Namespaces to register besides `default`. */
  namespaces?: string[];
  /** History shards (default 8, or $TEMPORAL_CLUSTER_SHARDS). */
  shards?: number;
  readyTimeoutMs?: number;
  /** Where its PostgreSQL, config and logs live; default a fresh directory in the run dir (a fresh database). */
  dir?: string;
  /** The frontend on TLS with client certificates required (scripts/temporal-cluster-profile.ts), and the client pair this helper uses. */
  tls?: NonNullable<ClusterServerConfigInput['tls']> & { clientCertFile: string; clientKeyFile: string };
}

/** Ten distinct free ports below 32768: the SQL schema keeps membership ports in a smallint. */
async function clusterPorts(): Promise<ClusterPorts> {
  const taken = new Set<number>();
  const pick = async (): Promise<number> => {
    for (;;) {
      const port = await freePortBelow();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  return {
    frontendGrpc: await pick(),
    frontendHttp: await pick(),
    frontendMembership: await pick(),
    historyGrpc: await pick(),
    historyMembership: await pick(),
    matchingGrpc: await pick(),
    matchingMembership: await pick(),
    workerGrpc: await pick(),
    workerMembership: await pick(),
    metrics: await pick(),
  };
}

export async function startTemporalCluster(opts: StartTemporalClusterOptions = {}): Promise<TemporalCluster> {
  const name = instanceName('temporal-cluster');
  const dir = opts.dir ?? path.join(runDir(), name);
  fs.mkdirSync(dir, { recursive: true });
  const shards = opts.shards ?? Number(process.env.TEMPORAL_CLUSTER_SHARDS ?? DEFAULT_HISTORY_SHARDS);
  const namespaces = ['default', ...(opts.namespaces ?? []).filter((n) => n !== 'default')];
  const server = clusterBinary('server');
  const postgres = await startPostgres({ dir: path.join(dir, 'postgres'), keep: opts.dir !== undefined });
  try {
    await migrateTemporalSchemas(postgres);
  } catch (err) {
    await postgres.dispose();
    throw err;
  }
  let ports = await clusterPorts();
  const dynamicConfigFile = path.join(dir, 'dynamicconfig.yaml');
  fs.writeFileSync(dynamicConfigFile, dynamicConfigYaml());
  const configFile = path.join(dir, 'temporal.yaml');
  const tls = opts.tls
    ? {
        serverNameOverride: opts.tls.serverName,
        serverRootCACertificate: fs.readFileSync(opts.tls.caFile),
        clientCertPair: { crt: fs.readFileSync(opts.tls.clientCertFile), key: fs.readFileSync(opts.tls.clientKeyFile) },
      }
    : undefined;
  const logFile = path.join(dir, 'temporal.log');
  const proc = new GroupProcess(name, logFile);
  const addressOf = () => `127.0.0.1:${ports.frontendGrpc}`;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;

  const launch = async () => {
    proc.spawn(server, ['--config-file', configFile, '--allow-no-auth', 'start']);
    await registerNamespaces(addressOf(), namespaces, proc, readyTimeoutMs, tls);
    await waitTemporalReady(addressOf(), namespaces, proc, readyTimeoutMs, tls);
  };
  // A port found free may be taken by another process before the server binds it (one run in about twenty saw its
  // membership port go): then new ports, a few times.
  for (let attempt = 1; ; attempt++) {
    fs.writeFileSync(configFile, clusterServerConfig({ ports, postgres, shards, dynamicConfigFile, ...(opts.tls ? { tls: opts.tls } : {}) }), { mode: 0o600 });
    try {
      await launch();
      break;
    } catch (err) {
      await proc.stop();
      if (attempt < 3 && /address already in use/.test(String(err))) {
        ports = await clusterPorts();
        continue;
      }
      await postgres.dispose();
      throw err;
    }
  }
  const address = addressOf();
  const stop = async () => {
    await proc.stop(20_000);
    await waitPortClosed(ports.frontendGrpc, `${name} frontend`);
    await postgres.stop();
  };
  return {
    address,
    port: ports.frontendGrpc,
    uiUrl: '',
    dbFile: postgres.dataDir,
    namespaces,
    profile: 'cluster',
    logFile,
    postgres,
    shards,
    configFile,
    metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
    get pid() {
      return proc.pid;
    },
    stop,
    async dispose() {
      await stop();
      await postgres.dispose();
    },
    async start() {
      await postgres.start();
      if (!proc.running) await launch();
    },
  };
}

/**
 * Registers each namespace (a day's retention) and our search attributes, once the frontend answers; an existing
 * namespace or attribute is left as it is. A new namespace reaches every service's cache within seconds.
 */
async function registerNamespaces(address: string, namespaces: string[], proc: GroupProcess, timeoutMs: number, tls?: ConnectionOptions['tls']): Promise<void> {
  const connection = await waitFor(
    `the Temporal frontend at ${address}`,
    async () => {
      if (!proc.running) throw new Error(proc.describeExit());
      if (!(await isPortOpen(Number(address.split(':').pop()), 200))) return undefined;
      try {
        const c = await Connection.connect({ address, connectTimeout: 1_000, ...(tls ? { tls } : {}) });
        await c.withDeadline(Date.now() + 2_000, () => c.workflowService.getSystemInfo({}));
        return c;
      } catch {
        return undefined;
      }
    },
    timeoutMs,
    200,
  );
  try {
    for (const namespace of namespaces) {
      try {
        await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
      } catch (err) {
        if (!/already exists|AlreadyExists/i.test(String((err as Error).message))) throw err;
      }
      const searchAttributes = Object.fromEntries(SEARCH_ATTRIBUTES.map((a) => [a.name, INDEXED_VALUE_TYPES[a.type]]));
      // The namespace must be in the frontend's cache before attributes can be added to it.
      await waitFor(
        `search attributes on namespace ${namespace}`,
        async () => {
          try {
            await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
            return true;
          } catch (err) {
            if (/already exists|AlreadyExists/i.test(String((err as Error).message))) return true;
            return undefined;
          }
        },
        timeoutMs,
        250,
      );
      // Listing the attributes reads the database; a start is refused until the services' caches have them.
      const client = new Client({ connection, namespace });
      await waitFor(
        `namespace ${namespace} to take a workflow with our search attributes`,
        async () => {
          try {
            const handle = await client.workflow.start('readinessProbe', {
              taskQueue: 'readiness-probe',
              workflowId: `readiness-probe-${randomBytes(6).toString('hex')}`,
              searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((a) => [a.name, probeValue(a.type)])),
            });
            await handle.terminate('readiness probe');
            return true;
          } catch {
            return undefined;
          }
        },
        timeoutMs,
        500,
      );
    }
  } finally {
    await connection.close();
  }
}

/**
 * A Temporal someone else runs (TEST_TEMPORAL_ADDRESS): this run registers two namespaces of its own (`<prefix>` and
 * `<prefix>-b`) so that nothing of another run is seen, and on stop terminates whatever it left running in them.
 */
export async function useExternalTemporal(address: string, prefix: string): Promise<TemporalServer> {
  const namespaces = [prefix, `${prefix}-b`];
  const alive = { running: true, describeExit: () => `nothing answers at ${address}` } as unknown as GroupProcess;
  await registerNamespaces(address, namespaces, alive, 60_000);
  await waitTemporalReady(address, namespaces, alive, 60_000);
  return {
    address,
    port: Number(address.split(':').pop()),
    uiUrl: '',
    dbFile: `external:${address}`,
    namespaces,
    profile: 'external',
    logFile: '',
    pid: -1,
    async stop() {
      await terminateRunning(address, namespaces);
    },
    async start() {
      // Not ours to start.
    },
  };
}

/** Terminates every workflow still running in these namespaces (a run must leave none behind). */
export async function terminateRunning(address: string, namespaces: string[]): Promise<number> {
  const connection = await Connection.connect({ address });
  let terminated = 0;
  try {
    const deadline = Date.now() + 60_000;
    for (const namespace of namespaces) {
      // Visibility lags a termination by moments: listed again until empty, within a deadline.
      while (Date.now() < deadline) {
        const { executions } = await connection.workflowService.listWorkflowExecutions({ namespace, query: 'ExecutionStatus="Running"', pageSize: 500 });
        if (!executions?.length) break;
        await Promise.all(
          executions.map(async (e) => {
            try {
              await connection.workflowService.terminateWorkflowExecution({ namespace, workflowExecution: e.execution, reason: 'test run ended' });
              terminated++;
            } catch {
              // already closed
            }
          }),
        );
      }
    }
  } finally {
    await connection.close();
  }
  return terminated;
}

/** Creates (when missing) and migrates Temporal's two databases with its own sql tool; a current schema is left alone. */
export async function migrateTemporalSchemas(pg: PostgresServer): Promise<void> {
  const sql = clusterBinary('sql');
  const env = { ...process.env, SQL_HOST: pg.host, SQL_PORT: String(pg.port), SQL_USER: pg.user, SQL_PASSWORD: pg.password, SQL_PLUGIN: 'postgres12' };
  const tool = (db: string, args: string[]) => run(sql, ['--plugin', 'postgres12', '--db', db, ...args], { env, timeout: 120_000 });
  for (const [db, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ] as const) {
    try {
      await tool(db, ['create-database']);
      await tool(db, ['setup-schema', '-v', '0.0']);
    } catch (err) {
      if (!/already exists/i.test(String((err as { stderr?: string }).stderr ?? err))) throw err;
    }
    await tool(db, ['update-schema', '--schema-name', schema]);
  }
}
