import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import { loadConfig, type Config } from './config';
import { createLogger } from './logger';
import { connectRedis, waitUntilReady } from './redis';
import { RedisRegistry } from './registry/registry';
import { RedisThrottle } from './ratelimit/fairness';
import { RedisAccountSequencer } from './bridge/ordering';
import { RedisCommandQueue } from './bridge/queue';
import { COURIER_DEFAULTS, ReportCourier } from './bridge/report-courier';
import { Regions } from './temporal/regions';
import { TemporalExecutions } from './temporal/temporal-executions';
import { TemporalIdempotencyWindows } from './temporal/idempotency-windows';
import type { Express } from 'express';
import { createApp } from './http/app';
import { createAdminApp } from './http/admin';
import { createIngressMetrics } from './metrics';
import { RedisReportedOutcomes } from './signals/reported-outcomes';
import { RedisEndpointStore } from './callbacks/endpoints';
import { RedisFigures } from './bridge/figures';
import { RedisTradeJournal } from './trades/journal';
import { tradeEventPublisherOf } from './callbacks/wiring';
import { BridgePresence, RedisLastSeen } from './bridge/presence';
import { BridgeCallLog } from './bridge/bridge-state';
import { LaunchFailure } from './refusal';
import { AdmissionGate, RedisAdmissionLedger } from './signals/admission';
import type { AcceptanceDispatch } from './signals/dispatch';
import { ConnectionCap } from './http/connections';
import { ownerDashboard } from './owners/wiring';
import { OwnerStore } from './owners/owner-store';
import { RedisStopOuts } from './bridge/stop-outs';

export interface Ingress {
  url: string;
  port: number;
  /** The admin listener (/metrics, /readyz, /healthz); undefined when ADMIN_PORT=off. */
  adminUrl?: string;
  close(): Promise<void>;
}

/** Starts the ingress; a test starts and stops it the same way the process does. */
/** Test seams of the ingress (never set by the process): crash points of the submit path. */
export interface IngressSeams {
  dispatchFaults?: AcceptanceDispatch['faults'];
}

export async function startIngress(config: Config = loadConfig(), seams: IngressSeams = {}): Promise<Ingress> {
  const logger = createLogger(config.logLevel, 'ingress');
  const redis = connectRedis(config.redis, { commandTimeoutMs: config.redis.commandTimeoutMs, logger, name: 'ingress' });
  const regions = new Regions(config.temporal.regions, config.temporal.startTimeoutMs, config.temporal.connectTimeoutMs);
  const registry = new RedisRegistry(redis);
  const throttle = new RedisThrottle(
    redis,
    {
      account_write: config.limits.fairnessAccount,
      broadcast: config.limits.fairnessBroadcast,
      account_read: config.limits.pollAccount,
    },
    config.limits.keyPrefix,
  );
  const executions = new TemporalExecutions(regions, config.temporal.taskQueue);
  // Long-polls block on their own connection, never on the guards' fail-fast one.
  const queueRedis = connectRedis(config.redis, { commandTimeoutMs: config.redis.commandTimeoutMs, logger, name: 'ingress-bridge' });
  const queue = new RedisCommandQueue(queueRedis, { redeliverAfterMs: config.redis.redeliverAfterMs, replicaAck: config.redis.replicaAck });
  // Serve as soon as Redis answers, but never wait long: with Redis down the guards fail closed until it is back.
  await Promise.all([waitUntilReady(redis, 3000), waitUntilReady(queueRedis, 3000)]);
  const courier = new ReportCourier(executions, COURIER_DEFAULTS, logger);
  const admissionLedger = new RedisAdmissionLedger(redis, config.temporal.taskQueue, config.bridge.defaultCommandTtlMs);
  const admission = new AdmissionGate(admissionLedger, config.admission);
  admission.start();
  const metrics = createIngressMetrics();
  const presence = new BridgePresence(60_000, new RedisLastSeen(redis));
  const bridgeCalls = new BridgeCallLog(redis);
  const reported = new RedisReportedOutcomes(redis, config.poll.reportedOutcomesKeepSeconds);
  metrics.bridgesOnline(() => presence.online());
  let stopping = false;
  const connectionCap = new ConnectionCap({
    max: config.ingress.maxConnectionsPerIp,
    answeredMax: config.ingress.maxOverCapConnections,
    retryAfterSeconds: 1,
    onRefused: () => metrics.connectionsRefused.inc(),
  });
  const app = createApp({
    connectionCap,
    owners: ownerDashboard(config, redis, registry, { regions, reported, deliveries: queue }),
    config,
    metrics,
    logger,
    redis,
    accept: {
      registry,
      throttle,
      sequencer: new RedisAccountSequencer(redis, config.redis.replicaAck),
      executions,
      logger,
      onStartError: (region, err) =>
        metrics.temporalStartErrors.inc({ region, kind: err instanceof LaunchFailure && err.overloaded ? 'backpressure' : 'other' }),
      onBridgeTooOld: (accountId, message) => void bridgeCalls.refused(accountId, { status: 412, reason: 'bridge_too_old', message }),
      windows: new TemporalIdempotencyWindows(regions, config.temporal.regions[0]!.name, config.temporal.taskQueue),
      admission: { decide: () => admission.decide(), ledger: admissionLedger },
      callbacks: new RedisEndpointStore(redis),
      ...(config.bridge.dispatchAtAcceptance ? { dispatch: { queue, logger, ...(seams.dispatchFaults ? { faults: seams.dispatchFaults } : {}) } } : {}),
      settings: {
        idempotencyKeyMaxLength: config.ingress.idempotencyKeyMaxLength,
        idempotencyWindowMs: config.ingress.idempotencyWindowMs,
        temporalBudgetMs: config.temporal.startTimeoutMs,
        defaultMaxSignalAgeMs: config.bridge.defaultMaxSignalAgeMs,
        defaultCommandTtlMs: config.bridge.defaultCommandTtlMs,
        figuresMaxAgeMs: config.bridge.figuresMaxAgeMs,
        failClosedRetryAfterSeconds: config.limits.failClosedRetryAfterSeconds,
      },
    },
    status: {
      registry,
      throttle,
      executions,
      reported,
      temporalWaitMs: config.poll.temporalWaitMs,
      failClosedRetryAfterSeconds: config.limits.failClosedRetryAfterSeconds,
    },
    gateway: {
      registry,
      queue,
      executions,
      courier,
      maxWaitMs: config.bridge.maxWaitMs,
      presence,
      calls: bridgeCalls,
      reported,
      figures: new RedisFigures(redis, config.trades.retentionMs),
      logger,
      trades: {
        journal: new RedisTradeJournal(redis),
        retentionMs: config.trades.retentionMs,
        logger,
        // Each recorded position/order event to the owner's callbacks (docs/callbacks.md); started once per event id.
        publish: tradeEventPublisherOf(config, redis, regions, registry),
      },
      figuresMaxAgeMs: config.bridge.figuresMaxAgeMs,
      stopOuts: {
        store: new RedisStopOuts(redis),
        audit: (owner, entry) => new OwnerStore(redis).audit(owner, entry),
        counted: () => metrics.stopOuts.inc(),
        logger,
      },
    },
  });

  const server = await listen(app, config.port, config.host);
  const admin = config.admin
    ? await listen(createAdminApp({ metrics, redis, regions, readyTimeoutMs: config.temporal.startTimeoutMs }), config.admin.port, config.admin.host).catch(
        async (err: unknown) => {
          await new Promise<void>((resolve) => server.close(() => resolve()));
          throw err;
        },
      )
    : undefined;
  // While stopping, every answer closes its connection (also those of requests already in flight, like long-polls),
  // so kept-alive clients such as bridges let the server finish.
  const inFlight = new Set<ServerResponse>();
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (stopping) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  // A trusted proxy's connections carry many clients: the cap counts clients at the proxy instead (docs/deployment.md).
  const trusted = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  connectionCap.watch(server, (address) => trusted(address, 0));
  // Long-polls outlive the default keep-alive; give them room.
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = config.bridge.maxWaitMs + 30_000;
  const port = (server.address() as AddressInfo).port;
  const adminPort = admin ? (admin.address() as AddressInfo).port : undefined;
  logger.info({ port, adminPort }, 'ingress listening');

  return {
    url: `http://${config.host}:${port}`,
    port,
    adminUrl: admin ? `http://${config.admin!.host}:${adminPort}` : undefined,
    async close() {
      stopping = true;
      admission.stop();
      presence.stop();
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      await queue.close();
      // In-flight requests finish; idle keep-alive connections close now; anything still open after 5 s is cut.
      const cut = setTimeout(() => server.closeAllConnections(), 5000);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      clearTimeout(cut);
      // Reports answered already are handed over before Temporal's connections close; what is left, the workflows
      // read from Redis themselves.
      await courier.drain(2000);
      courier.close();
      if (admin) {
        await new Promise<void>((resolve) => {
          admin.close(() => resolve());
          admin.closeAllConnections();
        });
      }
      await regions.close();
      redis.disconnect();
      queueRedis.disconnect();
    },
  };
}

function listen(app: Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = app.listen(port, host, () => resolve(s));
    s.once('error', reject);
  });
}

if (require.main === module) {
  startIngress()
    .then((ingress) => {
      const stop = () => void ingress.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
