/**
 * `make cluster`: the service on the cluster profile, on this machine. PostgreSQL 15 and the real Temporal server
 * (support/temporal-cluster.ts; its database kept in the cache dir between runs), the Temporal UI server,
 * redis-server with its append-only file, two workers and two ingress processes behind a loopback round-robin, and
 * the paper bridge for the demo registry. Ctrl-C stops everything. docs/cluster-profile.md explains each piece.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadHelpers, REPO_ROOT, type ServiceProcess } from '../bench/helpers';
import { startRoundRobin, type RoundRobin } from './round-robin';

const PORT = Number(process.env.PORT ?? 8080);
const UI_PORT = Number(process.env.TEMPORAL_UI_PORT ?? 8233);
const REGISTRY = path.join(REPO_ROOT, 'demo', 'registry.json');
const cacheRoot = process.env.EXTERNAL_SIGNALS_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'external-signals');

const stops: { name: string; stop: () => Promise<unknown> }[] = [];
const log = (line: string) => process.stderr.write(`cluster: ${line}\n`);

async function stopAll(): Promise<void> {
  for (const s of stops.reverse()) {
    log(`stopping ${s.name}`);
    await s.stop().catch((err: unknown) => log(`${s.name} did not stop cleanly: ${err instanceof Error ? err.message : String(err)}`));
  }
}

async function main(): Promise<void> {
  const runDir = path.join(REPO_ROOT, '.run', 'cluster');
  fs.mkdirSync(runDir, { recursive: true });
  process.env.TEST_RUN_DIR = runDir;
  const { infra, processes, cluster } = loadHelpers();
  processes.ensureBuilt();

  log('starting PostgreSQL and the Temporal server (the first run builds the server: several minutes)');
  const temporal = await cluster.startTemporalCluster({ dir: path.join(cacheRoot, 'state', 'cluster') });
  stops.push({ name: 'Temporal and PostgreSQL', stop: () => temporal.stop() });
  const redis = await infra.startRedis({ durable: true });
  stops.push({ name: 'redis-server', stop: () => redis.stop() });
  Object.assign(process.env, {
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    TEST_TEMPORAL_NAMESPACE_B: 'region-b',
    TEST_TEMPORAL_DB: temporal.dbFile,
    REDIS_URL: redis.url,
  });

  const ui = startUi(temporal.address);
  stops.push({ name: 'Temporal UI', stop: ui.stop });

  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    REDIS_URL: redis.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    LOG_LEVEL: 'info',
  };
  const admin = await processes.runAdminProcess(['import', REGISTRY], env);
  if (admin.code !== 0) throw new Error(`importing the demo registry failed: ${admin.stderr}`);

  const workers: ServiceProcess[] = [];
  for (const n of [1, 2]) workers.push(await processes.startWorkerProcess(env, { label: `worker-${n}` }));
  stops.push({ name: 'workers', stop: () => Promise.all(workers.map((w) => w.stop(15_000))) });
  const ingresses = await Promise.all([1, 2].map((n) => processes.startIngressProcess(env, { label: `ingress-${n}` })));
  stops.push({ name: 'ingresses', stop: () => Promise.all(ingresses.map((i) => i.stop(10_000))) });
  const rr: RoundRobin = await startRoundRobin(
    ingresses.map((i) => ({ host: '127.0.0.1', port: i.port })),
    { host: '127.0.0.1', port: PORT },
  );
  stops.push({ name: 'round-robin', stop: () => rr.close() });
  const url = `http://127.0.0.1:${rr.port}`;
  const bridge = await processes.startPaperBridgeProcess({
    registryFile: REGISTRY,
    ledgerFile: path.join(runDir, 'ledger.jsonl'),
    ingressUrl: url,
    label: 'paper-bridge',
  });
  stops.push({ name: 'paper bridge', stop: () => bridge.stop(10_000) });

  const doc = JSON.parse(fs.readFileSync(REGISTRY, 'utf8')) as { secrets: { secret: string }[]; tokens: { token: string }[] };
  process.stdout.write(`
External Signals Service is up on the cluster profile (demo credentials, for local use only).
  ingress      ${url}   (round-robin over ${ingresses.map((i) => i.url).join(' and ')})
  workers      2, task queue external-signals
  Temporal     ${temporal.address} (server v1.32.1 on PostgreSQL ${temporal.postgres.host}:${temporal.postgres.port}, ${temporal.shards} history shards)
  Temporal UI  http://127.0.0.1:${UI_PORT}
  logs         .run/cluster/

  curl -s -X POST ${url}/webhook/custom/demo-mt5 -H 'Content-Type: application/json' -d '{"secret":"${doc.secrets[0]!.secret}","action":"buy","symbol":"EURUSD","volume":0.1}'
  curl -s -H 'Authorization: Bearer ${doc.tokens[0]!.token}' ${url}/v1/signals/SIGNAL_ID

Ctrl-C stops everything started here.
`);
}

/** The Temporal UI server (its own Go module), configured by a file in the run dir. */
function startUi(address: string): { stop: () => Promise<void> } {
  const bin = loadHelpers().cluster.clusterBinary('ui');
  const root = path.join(REPO_ROOT, '.run', 'cluster', 'ui');
  fs.mkdirSync(path.join(root, 'config'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'config', 'development.yaml'),
    `temporalGrpcAddress: ${address}\nport: ${UI_PORT}\nenableUi: true\ndefaultNamespace: default\ncors:\n  cookieInsecure: true\n`,
  );
  const log = fs.openSync(path.join(root, 'ui.log'), 'a');
  const child = spawn(bin, ['--root', root, '--config', 'config', '--env', 'development', 'start'], { stdio: ['ignore', log, log] });
  return {
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

let stopping = false;
const onSignal = () => {
  if (stopping) process.exit(130);
  stopping = true;
  void stopAll().finally(() => process.exit(0));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
main().catch(async (err: unknown) => {
  log(`ERROR: ${err instanceof Error ? err.message : String(err)}`);
  await stopAll();
  process.exit(1);
});
