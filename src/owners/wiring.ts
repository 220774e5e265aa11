import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { RedisRegistry } from '../registry/registry';
import { PreAuthCap } from '../ratelimit/preauth';
import { RedisFigures } from '../bridge/figures';
import { RedisTradeJournal } from '../trades/journal';
import { RedisStopOuts } from '../bridge/stop-outs';
import { RedisLastSeen } from '../bridge/presence';
import { BridgeCallLog } from '../bridge/bridge-state';
import { OwnedAccounts } from '../registry/owned-accounts';
import { SecretBox } from '../secret-box';
import { ownerAuthDeps } from './sign-in';
import type { OwnerSessionDeps } from '../http/routes/owner-session';
import type { OwnerApiDeps } from '../http/routes/owner-api';
import type { OwnerActivityDeps } from '../http/routes/owner-activity';
import type { OwnerDownloadDeps } from '../http/routes/downloads';
import type { Regions } from '../temporal/regions';
import type { ReportedOutcomes } from '../signals/reported-outcomes';
import type { DeliveryTimes } from '../signals/log';
import { signalLog } from '../signals/log';
import { TemporalAccountRuns } from '../temporal/temporal-account-runs';
import { ownerCallbacksOf } from '../callbacks/wiring';
import { CtraderLinks } from '../ctrader/links';
import { accountsOfToken } from '../ctrader/account-list';
import type { CtraderConnectDeps } from './ctrader-connect';
import type { OwnerStore } from './owner-store';

/**
 * The owners' dashboard's parts, made from the config: undefined when OWNER_SECRETS_KEY_FILE is not set (the owner
 * routes then answer 503). A key file that is set but unreadable or malformed stops the ingress at start.
 */
export interface DashboardParts {
  session: OwnerSessionDeps;
  api: OwnerApiDeps;
  activity: OwnerActivityDeps;
  mt5Package: OwnerDownloadDeps;
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
  const ctrader = ctraderConnect(config, redis, registry, auth.owners, auth.now);
  const bodyReadTimeoutMs = config.ingress.bodyReadTimeoutMs;
  const accounts = {
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
    ...(ctrader ? { links: ctrader.links } : {}),
  };
  const parts = {
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
      accounts,
      trades: { accounts, journal: new RedisTradeJournal(redis), figures: accounts.figures, retentionMs: config.trades.retentionMs, now: auth.now },
      ...(ctrader ? { ctrader } : {}),
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
  const { credentials } = parts.api;
  return { ...parts, mt5Package: { auth, cookies, accounts, credentials, publicUrl: config.publicUrl } };
}

/** Connect with cTrader's parts, when the operator configured the Open API application (CTRADER_OAUTH_*). */
function ctraderConnect(config: Config, redis: Redis, registry: RedisRegistry, owners: OwnerStore, now: () => Date): CtraderConnectDeps | undefined {
  const oauth = config.ctraderOAuth;
  if (!oauth) return undefined;
  const box = SecretBox.fromFile(oauth.tokensKeyFile, 'CTRADER_TOKENS_KEY_FILE');
  // Read once at start: a missing or empty secret file stops the ingress now, not at an owner's click.
  const clientSecret = oauth.clientSecret();
  const app = { ...oauth, clientSecret };
  return {
    redis,
    registry,
    owners,
    links: new CtraderLinks(redis, box),
    box,
    app,
    listAccounts: (accessToken) =>
      accountsOfToken({ url: oauth.accountListUrl, clientId: oauth.clientId, clientSecret, timeoutMs: oauth.timeoutMs }, accessToken),
    accountCap: config.owners.accountCap,
    now,
  };
}
