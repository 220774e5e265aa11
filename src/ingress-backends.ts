import type { Logger } from 'pino';
import type { Config } from './config';
import { connectRedis, waitUntilReady } from './redis';
import { RedisRegistry } from './registry/registry';
import { RedisThrottle } from './ratelimit/fairness';
import { RedisAccountSequencer } from './bridge/ordering';
import { RedisCommandQueue } from './bridge/queue';
import { COURIER_DEFAULTS, ReportCourier } from './bridge/report-courier';
import { Regions } from './temporal/regions';
import { TemporalExecutions } from './temporal/temporal-executions';
import { createIngressMetrics } from './metrics';
import { RedisReportedOutcomes } from './signals/reported-outcomes';
import { RedisEndpointStore } from './callbacks/endpoints';
import { RedisFigures } from './bridge/figures';
import { RedisTradeJournal } from './trades/journal';
import { tradeEventPublisherOf } from './callbacks/wiring';
import { BridgePresence, RedisLastSeen } from './bridge/presence';
import { BridgeCallLog } from './bridge/bridge-state';
import { LaunchFailure } from './refusal';
import { AcceptanceDoor, readDoor } from './signals/door';
import { RedisPendingStarts } from './signals/pending-starts';
import { RedisIdempotencyWindows } from './signals/idempotency';
import { SignalStarter } from './signals/starter';
import type { AcceptanceDispatch } from './signals/dispatch';
import type { AcceptDeps } from './signals/acceptance';
import type { GatewayDeps } from './bridge/gateway';
import { ConnectionCap } from './http/connections';
import { OwnerStore } from './owners/owner-store';
import { RedisStopOuts } from './bridge/stop-outs';

/** What the ingress is built of: its Redis connections, Temporal regions and the stores and gates over them. */
export type Backends = Awaited<ReturnType<typeof connectBackends>>;

/** Test seams of the ingress (never set by the process): crash points of the submit path. */
export interface IngressSeams {
  dispatchFaults?: AcceptanceDispatch['faults'];
}

export async function connectBackends(config: Config, logger: Logger) {
  const redis = connectRedis(config.redis, { commandTimeoutMs: config.redis.commandTimeoutMs, logger, name: 'ingress' });
  const regions = new Regions(config.temporal.regions, config.temporal.startTimeoutMs, config.temporal.connectTimeoutMs);
  const executions = new TemporalExecutions(regions, config.temporal.taskQueue);
  // Long-polls block on their own connection, never on the guards' fail-fast one.
  const queueRedis = connectRedis(config.redis, { commandTimeoutMs: config.redis.commandTimeoutMs, logger, name: 'ingress-bridge' });
  const queue = new RedisCommandQueue(queueRedis, { redeliverAfterMs: config.redis.redeliverAfterMs, replicaAck: config.redis.replicaAck });
  // Serve as soon as Redis answers, but never wait long: with Redis down the guards fail closed until it is back.
  await Promise.all([waitUntilReady(redis, 3000), waitUntilReady(queueRedis, 3000)]);
  const starts = new RedisPendingStarts(redis, config.temporal.taskQueue, config.redis.replicaAck);
  const door = new AcceptanceDoor(
    () => readDoor(redis, starts, Date.now(), config.door.minReplicas),
    config.door,
    Date.now,
    (shut, reading) =>
      shut === undefined
        ? logger.info({ reading }, 'door open again: new signals accepted')
        : logger.warn({ reason: shut, reading }, 'door shut: new signals refused'),
  );
  door.start();
  const metrics = createIngressMetrics();
  const starter = new SignalStarter(starts, executions, logger, Date.now, (result) => metrics.signalStarts.inc({ result }));
  starter.run();
  metrics.pendingStarts(() => starter.backlog);
  const presence = new BridgePresence(60_000, new RedisLastSeen(redis));
  metrics.bridgesOnline(() => presence.online());
  return {
    redis,
    queueRedis,
    regions,
    executions,
    queue,
    registry: new RedisRegistry(redis),
    throttle: new RedisThrottle(
      redis,
      { account_write: config.limits.fairnessAccount, broadcast: config.limits.fairnessBroadcast, account_read: config.limits.pollAccount },
      config.limits.keyPrefix,
    ),
    courier: new ReportCourier(executions, COURIER_DEFAULTS, logger),
    door,
    starts,
    starter,
    metrics,
    presence,
    bridgeCalls: new BridgeCallLog(redis),
    reported: new RedisReportedOutcomes(redis, config.poll.reportedOutcomesKeepSeconds),
    connectionCap: new ConnectionCap({
      max: config.ingress.maxConnectionsPerIp,
      answeredMax: config.ingress.maxOverCapConnections,
      retryAfterSeconds: 1,
      onRefused: () => metrics.connectionsRefused.inc(),
    }),
  };
}

/** The submit use case's ports and settings (src/signals/acceptance.ts). */
export function acceptDeps(config: Config, seams: IngressSeams, b: Backends, logger: Logger): AcceptDeps {
  return {
    registry: b.registry,
    throttle: b.throttle,
    sequencer: new RedisAccountSequencer(b.redis, config.redis.replicaAck),
    executions: b.executions,
    starts: b.starts,
    starter: b.starter,
    logger,
    onStartError: (region, err) =>
      b.metrics.temporalStartErrors.inc({ region, kind: err instanceof LaunchFailure && err.overloaded ? 'backpressure' : 'other' }),
    onBridgeTooOld: (accountId, message) => void b.bridgeCalls.refused(accountId, { status: 412, reason: 'bridge_too_old', message }),
    windows: new RedisIdempotencyWindows(b.redis, config.redis.replicaAck),
    door: { decide: () => b.door.decide() },
    callbacks: new RedisEndpointStore(b.redis),
    dispatch: { queue: b.queue, logger, ...(seams.dispatchFaults ? { faults: seams.dispatchFaults } : {}) },
    settings: {
      idempotencyKeyMaxLength: config.ingress.idempotencyKeyMaxLength,
      idempotencyWindowMs: config.ingress.idempotencyWindowMs,
      temporalBudgetMs: config.temporal.startTimeoutMs,
      defaultMaxSignalAgeMs: config.bridge.defaultMaxSignalAgeMs,
      defaultCommandTtlMs: config.bridge.defaultCommandTtlMs,
      figuresMaxAgeMs: config.bridge.figuresMaxAgeMs,
      failClosedRetryAfterSeconds: config.limits.failClosedRetryAfterSeconds,
    },
  };
}

/** The bridge API's ports (src/bridge/gateway.ts). */
export function gatewayDeps(config: Config, b: Backends, logger: Logger): GatewayDeps {
  return {
    registry: b.registry,
    queue: b.queue,
    executions: b.executions,
    courier: b.courier,
    maxWaitMs: config.bridge.maxWaitMs,
    presence: b.presence,
    calls: b.bridgeCalls,
    reported: b.reported,
    figures: new RedisFigures(b.redis, config.trades.retentionMs),
    logger,
    trades: {
      journal: new RedisTradeJournal(b.redis),
      retentionMs: config.trades.retentionMs,
      logger,
      // Each recorded position/order event to the owner's callbacks (docs/callbacks.md); started once per event id.
      publish: tradeEventPublisherOf(config, b.redis, b.regions, b.registry),
    },
    figuresMaxAgeMs: config.bridge.figuresMaxAgeMs,
    stopOuts: {
      store: new RedisStopOuts(b.redis),
      audit: (owner, entry) => new OwnerStore(b.redis).audit(owner, entry),
      counted: () => b.metrics.stopOuts.inc(),
      logger,
    },
  };
}
