import { existsSync } from 'node:fs';
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogEntry } from '@temporalio/worker';
import { createActivities } from '../activities';
import { RedisCommandQueue } from './bridge/queue';
import { RedisAccountSequencer } from './bridge/ordering';
import { loadConfig, type Config } from './config';
import { logRedisErrors, openRedis } from './redis';
import { createLogger } from './logger';
import { createWorkerMetrics, reasonLabel } from './metrics';
import { serveMetrics } from './metrics-server';
import type { InjectedSinks } from '@temporalio/worker';
import type { OutcomeSinks } from '../workflows/sinks';
import { temporalConnectionOptions } from './temporal/connection-options';
import { callbackAttemptDeps } from './callbacks/wiring';
import { RedisTradeCallbackCap } from './callbacks/trade-coalescing';

export interface RunningWorker {
  /** Resolves when every region's worker has stopped. */
  done: Promise<void>;
  /** Where the worker serves /metrics, when it does. */
  metricsUrl?: string;
  shutdown(): Promise<void>;
}

/** The prebuilt bundle (npm run build) when there is one; else the worker bundles the sources itself. */
function workflowSource(config: Config): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  const bundle = config.temporal.workflowBundlePath ?? path.resolve(__dirname, '..', 'workflow-bundle.js');
  if (existsSync(bundle)) return { workflowBundle: { codePath: bundle } };
  return { workflowsPath: require.resolve('../workflows') };
}

/** One Temporal worker per execution region, all on the same task queue and the same activities. */
export async function startWorker(config: Config = loadConfig()): Promise<RunningWorker> {
  const logger = createLogger(config.logLevel, 'worker');
  // The SDK's own logs go through pino, at our level; the runtime is a process singleton, installed once.
  if (!Runtime._instance) {
    const levels = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
    Runtime.install({
      logger: new DefaultLogger('INFO', (entry: LogEntry) => logger[levels[entry.level]]({ ...entry.meta }, entry.message)),
    });
  }
  // Activities may wait for Redis to come back (Temporal retries them), so this connection queues while offline.
  const redis = openRedis(config.redis, { connectionName: 'worker', commandTimeout: 5000, maxRetriesPerRequest: 2 });
  logRedisErrors(redis, 'worker', logger);
  const metrics = createWorkerMetrics();
  const activities = createActivities({
    queue: new RedisCommandQueue(redis, { redeliverAfterMs: config.redis.redeliverAfterMs, replicaAck: config.redis.replicaAck }),
    sequencer: new RedisAccountSequencer(redis, config.redis.replicaAck),
    callbacks: { ...callbackAttemptDeps(config, redis), onAttempt: (result) => metrics.callbackAttempts.inc({ result }) },
    tradeCallbacks: new RedisTradeCallbackCap(redis),
  });
  const source = workflowSource(config);
  const sinks: InjectedSinks<OutcomeSinks> = {
    outcomes: {
      record: {
        fn: (_info, outcome, reason, action, platform) => metrics.outcomes.inc({ outcome, reason: reasonLabel(reason), action, platform }),
        callDuringReplay: false,
      },
    },
  };
  const metricsServer = config.workerMetricsPort === undefined ? undefined : await serveMetrics(metrics.registry, config.host, config.workerMetricsPort);

  const connections: NativeConnection[] = [];
  const workers: Worker[] = [];
  for (const region of config.temporal.regions) {
    const connection = await NativeConnection.connect(temporalConnectionOptions(region));
    connections.push(connection);
    workers.push(
      await Worker.create({
        connection,
        namespace: region.namespace,
        taskQueue: config.temporal.taskQueue,
        activities,
        sinks,
        // The SDK's default cache (thousands of executions) lets a backlog grow the worker past its memory goal
        // (1,200 measured 947 MB peak under the bench); a child evicted meanwhile replays its short history.
        maxCachedWorkflows: 500,
        // Every signal starts two executions, whose first tasks come on the normal queue (the SDK's default gives that
        // queue 2 of 10 pollers). A task that finds a waiting poller is handed over without being written to the
        // database; one that does not is written, then read back.
        maxConcurrentWorkflowTaskPolls: 16,
        nonStickyToStickyPollRatio: 0.5,
        ...source,
      }),
    );
  }
  logger.info({ regions: config.temporal.regions.map((r) => r.name) }, 'worker running');
  const done = Promise.all(workers.map((w) => w.run())).then(async () => {
    await Promise.allSettled(connections.map((c) => c.close()));
    await metricsServer?.close();
    redis.disconnect();
  });
  return {
    done,
    metricsUrl: metricsServer?.url,
    async shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

if (require.main === module) {
  startWorker()
    .then((worker) => {
      const stop = () => void worker.shutdown().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      return worker.done;
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
