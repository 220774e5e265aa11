import fs from 'node:fs';
import path from 'node:path';
import { pruneStaleRunDirs, REPO_ROOT, RUN_ROOT, startRedis, startTemporal, temporalBinary, type RedisServer, type TemporalServer } from '../../support/infra';
import { startTemporalCluster, useExternalTemporal } from '../../support/temporal-cluster';

/** Shared with global-teardown.ts (jest runs both in its main process). */
export interface GlobalInfra {
  temporal?: TemporalServer;
  redis?: RedisServer;
}
export const GLOBAL_INFRA_KEY = '__externalSignalsTestInfra';
export const NAMESPACE_B = 'region-b';

/**
 * One Temporal (namespaces default and region-b) and one redis-server for the whole jest run, on free loopback ports.
 * Their coordinates go into process.env, which jest passes on to the test workers. Which Temporal:
 * - the dev server with the project's profile (default);
 * - `TEMPORAL_PROFILE=cluster`: the cluster profile, the real server on a fresh PostgreSQL (`make test-cluster`);
 * - `TEST_TEMPORAL_ADDRESS=host:port`: a Temporal someone else runs, in two fresh namespaces of this run's own.
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  pruneStaleRunDirs();
  const runDir = path.join(RUN_ROOT, `${process.pid}-${Date.now()}`);
  fs.mkdirSync(runDir, { recursive: true });
  process.env.TEST_RUN_DIR = runDir;
  process.env.TEMPORAL_BIN = temporalBinary();

  const infra: GlobalInfra = {};
  (globalThis as Record<string, unknown>)[GLOBAL_INFRA_KEY] = infra;
  const external = process.env.TEST_TEMPORAL_ADDRESS;
  const startingTemporal = external
    ? useExternalTemporal(external, `es-test-${process.pid}-${Date.now().toString(36)}`)
    : process.env.TEMPORAL_PROFILE === 'cluster'
      ? startTemporalCluster({ namespaces: [NAMESPACE_B] })
      : startTemporal({ namespaces: [NAMESPACE_B] });
  const [temporal, redis] = await Promise.allSettled([startingTemporal, startRedis()]);
  if (temporal.status === 'fulfilled') infra.temporal = temporal.value;
  if (redis.status === 'fulfilled') infra.redis = redis.value;
  if (temporal.status === 'rejected' || redis.status === 'rejected') {
    await Promise.allSettled([infra.temporal?.dispose ? infra.temporal.dispose() : infra.temporal?.stop(), infra.redis?.stop()]);
    const reasons = [temporal, redis].flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error)?.stack ?? r.reason)] : []));
    // scripts/test.sh prints this last, where a log cut to its head and tail still shows it.
    fs.writeFileSync(
      path.join(REPO_ROOT, '.run', 'infra-failure.txt'),
      [temporal, redis].flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error)?.message ?? r.reason)] : [])).join('\n'),
    );
    throw new Error(`test infrastructure did not start:\n${reasons.join('\n')}`);
  }

  Object.assign(process.env, {
    TEMPORAL_ADDRESS: temporal.value.address,
    TEMPORAL_NAMESPACE: temporal.value.namespaces[0],
    TEST_TEMPORAL_NAMESPACE_B: temporal.value.namespaces[1] ?? NAMESPACE_B,
    TEST_TEMPORAL_DB: temporal.value.dbFile,
    TEST_TEMPORAL_PROFILE: temporal.value.profile ?? 'dev',
    TEST_TEMPORAL_UI: temporal.value.uiUrl,
    REDIS_URL: redis.value.url,
  });
  process.stderr.write(
    `\n[test infra] Temporal ${temporal.value.address} (${temporal.value.profile ?? 'dev server'}, namespaces ${temporal.value.namespaces.join(', ')}; UI ${temporal.value.uiUrl || 'none'}), Redis ${redis.value.url}, ` +
      `ready in ${Date.now() - started} ms; logs in ${path.relative(process.cwd(), runDir)}\n`,
  );
}
