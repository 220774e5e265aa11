import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { RedisRegistry } from '../registry/registry';
import { PreAuthCap } from '../ratelimit/preauth';
import { RedisFigures } from '../bridge/figures';
import { RedisStopOuts } from '../bridge/stop-outs';
import { RedisLastSeen } from '../bridge/presence';
import { BridgeCallLog } from '../bridge/bridge-state';
import { OwnedAccounts } from '../registry/owned-accounts';
import { SecretBox } from '../secret-box';
import { ownerAuthDeps } from './sign-in';
import type { OwnerSessionDeps } from '../http/routes/owner-session';
import type { OwnerApiDeps } from '../http/routes/owner-api';
import type { OwnerActivityDeps } from '../http/routes/owner-activity';
import type { Regions } from '../temporal/regions';
import type { ReportedOutcomes } from '../signals/reported-outcomes';
import type { DeliveryTimes } from '../signals/log';
import { signalLog } from '../signals/log';
import { TemporalAccountRuns } from '../temporal/account-runs';
import { ownerCallbacksOf } from '../callbacks/wiring';

/**
 * The owners' dashboard's parts, made from the config: undefined when OWNER_SECRETS_KEY_FILE is not set (the owner
 * routes then answer 503). A key file that is set but unreadable or malformed stops the ingress at start.
 */
export interface DashboardParts {
  session: OwnerSessionDeps;
  api: OwnerApiDeps;
  activity: OwnerActivityDeps;
}

export function ownerDashboard(
  config: Config,
  redis: Redis,
  registry: RedisRegistry,
  sources: { regions: Regions; reported: ReportedOutcomes; deliveries: DeliveryTimes },
): DashboardParts | undefined {
  const file = config.owners.secretsKeyFile;
  if (file === undefined) return undefined;
  const box = SecretBox.fromFile(file, 'OWNER_SECRETS_KEY_FILE');
  const auth = ownerAuthDeps(redis, {
    box,
    sessionTtlSeconds: config.owners.sessionTtlSeconds,
    setupTtlSeconds: config.owners.setupTtlSeconds,
    issuer: 'External Signals',
  });
  const cookies = { secure: config.owners.secureCookies, ttlSeconds: config.owners.sessionTtlSeconds };
  const bodyReadTimeoutMs = config.ingress.bodyReadTimeoutMs;
  return {
    session: {
      auth,
      cookies,
      signInCap: new PreAuthCap(redis, config.owners.signInIp, `${config.limits.keyPrefix}sign-in:`),
      failClosedRetryAfterSeconds: config.limits.failClosedRetryAfterSeconds,
      bodyReadTimeoutMs,
    },
    api: {
      auth,
      cookies,
      bodyReadTimeoutMs,
      accounts: {
        registry,
        owners: auth.owners,
        lastSeen: new RedisLastSeen(redis),
        figures: new RedisFigures(redis),
        stopOuts: new RedisStopOuts(redis),
        calls: new BridgeCallLog(redis),
        waits: { marketEntryMs: config.bridge.defaultMaxSignalAgeMs, otherMs: config.bridge.defaultCommandTtlMs },
        owned: new OwnedAccounts(redis),
        defaultCap: config.owners.accountCap,
        now: auth.now,
      },
      credentials: { registry, owners: auth.owners, now: auth.now },
    },
    activity: {
      auth,
      cookies,
      bodyReadTimeoutMs,
      signals: signalLog({ runs: new TemporalAccountRuns(sources.regions), registry, reported: sources.reported, deliveries: sources.deliveries }),
      callbacks: ownerCallbacksOf(config, redis),
    },
  };
}
