import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { COMMAND_AGES, SPEC_LIMITS } from './domain/limits';
import { allowedOriginsSchema } from './callbacks/origins';
import { RATE_LIMIT_KEY_PREFIX } from './redis-keys';
import { int, trustProxy } from './config-fields';
import { parseRegions, type RegionConfig } from './config-regions';
import { refuseRemovedSettings } from './config-removed';
import { REPLICA_ACK_TIMEOUT_MS, type RedisTlsFiles } from './redis';
import { REDELIVER_AFTER_MS } from './bridge/queue';
import { TEMPORAL_CONNECT_TIMEOUT_MS } from './temporal/regions';
import { BODY_READ_TIMEOUT_MS } from './http/middleware';
import { MAX_OVER_CAP_CONNECTIONS } from './http/connections';
import { SIGN_IN_IP_LIMIT, scaledLimits } from './ratelimit/per-caller';
import { FAIL_CLOSED_RETRY_AFTER_SECONDS } from './signals/fail-closed';
import { POLL_TEMPORAL_WAIT_MS } from './signals/status';
import { REPORTED_OUTCOMES_KEEP_SECONDS } from './signals/reported-outcomes';
import { OWNER_SETUP_TTL_SECONDS, SESSION_TTL_SECONDS } from './owners/sessions';
import { DEFAULT_OWNER_ACCOUNT_CAP } from './registry/capped-create';
import { FIGURES_MAX_AGE_MS } from './risk/figures-age';
import { MAX_ENDPOINTS_PER_OWNER } from './callbacks/owner-callbacks';
import { CALLBACK_URL_MAX_LENGTH } from './callbacks/guard';
import { CALLBACK_RESPONSE_MAX_BYTES, CALLBACK_TIMEOUT_MS } from './callbacks/delivery';
import { CALLBACK_ATTEMPTS_KEEP } from './callbacks/attempts';
import { CTRADER_AUTHORIZE_URL, CTRADER_CALLBACK_PATH, CTRADER_OAUTH_TIMEOUT_MS, CTRADER_TOKEN_URL } from './ctrader/oauth';
import { CTRADER_ACCOUNT_LIST_URL } from './ctrader/account-list';
import { DOOR_TUNING } from './signals/door';

/**
 * The one place that reads the environment: what an operator decides (addresses, ports, files of keys, the limits and
 * retention a deployment chooses, TLS), each documented once in docs/configuration.md. Internal tuning is not here: it
 * is a named constant next to the code that uses it, saying why that value; the Config below carries it so that a
 * test can shorten it on the Config it starts (test/helpers/stack.ts), never through the environment. There are no
 * secrets in the environment: webhook secrets, API tokens and bridge tokens live hashed in the registry.
 */

/** Exported so test/unit/configuration-doc.test.ts can hold docs/configuration.md to its keys and defaults. */
export const envSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: int(8080, 0, 65535),
  PUBLIC_URL: z.string().optional(),
  /** Port of the worker's /metrics (on HOST); "off" to serve none, 0 for any free port. */
  WORKER_METRICS_PORT: z.union([z.literal('off'), int(9464, 0, 65535)]),
  /** The admin listener: /metrics and /readyz (and /healthz), never on the public port. "off" serves none. */
  ADMIN_HOST: z.string().default('127.0.0.1'),
  ADMIN_PORT: z.union([z.literal('off'), int(9465, 0, 65535)]),
  /** Express `trust proxy`: unset (off), a hop count, or the proxies' addresses; decides which client IP the per-IP limits see. */
  TRUST_PROXY: trustProxy,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /**
   * How long one Redis command may take before a guard gives up and fails closed. It times the ingress's own event
   * loop as much as Redis: in a bar close of 1,000 alerts on two cores, 500 ms refused most of them as
   * store_unavailable with Redis answering in microseconds. 2 s still answers inside TradingView's 3 s; a Redis that
   * is down fails at once (no offline queue), so this bounds only a Redis that hangs.
   */
  REDIS_COMMAND_TIMEOUT_MS: int(2000, 1),
  /**
   * With replicas (Sentinel): a queued command and a new sequence number count as written only when this many replicas
   * hold them (Redis WAIT), so a failover cannot lose them with the old master; 0 (one Redis with its AOF) skips it.
   */
  REDIS_MIN_REPLICAS_ACK: int(0, 0, 5),
  /** TLS to Redis (a `rediss://` URL): a private CA, an mTLS client certificate and key, a server name; files are PEM. */
  REDIS_TLS_CA_FILE: z.string().min(1).optional(),
  REDIS_TLS_CERT_FILE: z.string().min(1).optional(),
  REDIS_TLS_KEY_FILE: z.string().min(1).optional(),
  REDIS_TLS_SERVER_NAME: z.string().min(1).optional(),

  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('external-signals'),
  /**
   * JSON array of {name, address, namespace, tls?, apiKeyFile?}; when unset, one region "default" from
   * TEMPORAL_ADDRESS/NAMESPACE, without TLS. TLS to Temporal is said here only (docs/configuration.md).
   */
  TEMPORAL_REGIONS: z.string().optional(),
  /** How long all Temporal calls of one submission may take together; past it the webhook answers 503 backpressure. */
  TEMPORAL_START_TIMEOUT_MS: int(1500, 1),

  /**
   * Requests being accepted at once by one ingress process (counted once their body is in); past it, 503 backpressure.
   * 2048 takes a bar close of 1,000 alerts from one TradingView address at once with room for its other addresses'.
   * Each holds at most one body (SPEC_LIMITS.bodyLimitBytes, 64 KiB): 2048 × 64 KiB = 128 MiB of bodies at worst;
   * alerts are a few hundred bytes, a few MiB in practice.
   */
  MAX_IN_FLIGHT: int(2048, 1),
  /**
   * Open connections one client IP may hold on one ingress process; past it a connection's request is answered 503
   * with Retry-After and the connection closed. TradingView posts every trader's alerts from a handful of addresses:
   * 2048 takes 1,000 alerts from one of them at the same second, with room for the keep-alive connections still open
   * from the bar before. A body being received holds at most SPEC_LIMITS.bodyLimitBytes (64 KiB) for at most
   * BODY_READ_TIMEOUT_MS (5 s): 2048 × 64 KiB = 128 MiB per address at worst. A flood of bad secrets is not bounded
   * here but by WEBHOOK_PREAUTH_IP_MAX. 0: no cap.
   */
  MAX_CONNECTIONS_PER_IP: int(2048, 0),

  /**
   * Webhook requests per client address per window that fail to authenticate; past it, 429 before any lookup. Only
   * failures are charged (a request that authenticates never is), so TradingView's shared addresses are not capped
   * for their good alerts, but every trader's failures behind one address share its budget.
   */
  WEBHOOK_PREAUTH_IP_MAX: int(300, 1),
  WEBHOOK_PREAUTH_IP_WINDOW_MS: int(60_000, 1),
  /**
   * Every per-caller limit (src/ratelimit/per-caller.ts: route, fairness, poll, bridge) multiplied by this: 1 is the
   * limits as documented; a deployment whose callers are all its own (or a bench) raises them together.
   */
  RATE_LIMIT_SCALE: int(1, 1, 1_000_000_000),
  /** Key prefix of every limiter's counters, so deployments (or test runs) sharing one Redis do not share counts. */
  RATE_LIMIT_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,32}$/)
    .default(RATE_LIMIT_KEY_PREFIX),

  /** Longest a bridge long-poll may hang. */
  BRIDGE_MAX_WAIT_MS: int(25_000, 0),
  /** The owners' dashboard (docs/owners.md): a file holding the key that seals TOTP seeds (32 bytes, base64); without it the dashboard and owner API answer 503. */
  OWNER_SECRETS_KEY_FILE: z.string().min(1).optional(),
  /** Secure, __Host- session cookies (the default); "false" only for plain-HTTP local use (make start). */
  DASHBOARD_SECURE_COOKIES: z.enum(['true', 'false']).default('true'),
  /** How long the trade journal keeps closed trades, their events and the equity curve (docs/trades.md); open trades stay. */
  TRADE_JOURNAL_RETENTION_DAYS: int(90, 1, 3650),

  /** Outcome callbacks (docs/callbacks.md): the key that seals the endpoints' signing secrets; unset, none can be registered. */
  CALLBACK_SECRET_KEY_FILE: z.string().min(1).optional(),
  /**
   * Origins (`https://receiver.internal`, `http://127.0.0.1:8080`) callbacks may reach although their address is
   * private (comma-separated): that port of that host only, the scheme's default port when none is given.
   */
  CALLBACK_ALLOWED_ORIGINS: allowedOriginsSchema,
  /** http:// callback URLs, for local use only; otherwise https:// is required. */
  CALLBACK_ALLOW_HTTP: z.enum(['true', 'false']).default('false'),

  /** "Connect with cTrader" (docs/ctrader-connector.md): the Open API application's client id; unset, the button is off. */
  CTRADER_OAUTH_CLIENT_ID: z.string().trim().min(1).max(256).optional(),
  /** A file holding the application's client secret. Never logged. */
  CTRADER_OAUTH_CLIENT_SECRET_FILE: z.string().min(1).optional(),
  /** The key (32 bytes, base64) that seals linked accounts' OAuth and bridge tokens in Redis; the connector has it too. */
  CTRADER_TOKENS_KEY_FILE: z.string().min(1).optional(),
});

export type Config = ReturnType<typeof loadConfig>;

/** TLS settings for Redis go with a TLS URL, and a client certificate with its key; anything else is a mistake. */
function redisTls(e: z.infer<typeof envSchema>): { tls?: RedisTlsFiles } {
  const files = { caFile: e.REDIS_TLS_CA_FILE, certFile: e.REDIS_TLS_CERT_FILE, keyFile: e.REDIS_TLS_KEY_FILE, serverName: e.REDIS_TLS_SERVER_NAME };
  const given = Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined)) as RedisTlsFiles;
  if (Object.keys(given).length === 0) return {};
  const problems = [
    ...(/^rediss(\+sentinel)?:\/\//.test(e.REDIS_URL) ? [] : ['REDIS_TLS_*: set for a REDIS_URL that is not rediss:// (or rediss+sentinel://)']),
    ...(!given.certFile === !given.keyFile ? [] : ['REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE go together (an mTLS client certificate and its key)']),
  ];
  if (problems.length > 0) throw new Error(`Invalid configuration:\n${problems.join('\n')}`);
  return { tls: given };
}

/** The environment through one schema; every problem in one error (names and rules only, never a value). */
export function parseEnv<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  refuseRemovedSettings(env);
  const e = parseEnv(envSchema, env);
  if (e.ADMIN_PORT !== 'off' && e.ADMIN_PORT !== 0 && e.ADMIN_PORT === e.PORT) {
    throw new Error('Invalid configuration:\nADMIN_PORT: must differ from PORT (the admin listener is never the public one)');
  }
  const regions: RegionConfig[] = e.TEMPORAL_REGIONS
    ? parseRegions(e.TEMPORAL_REGIONS)
    : [{ name: 'default', address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE }];
  const limits = scaledLimits(e.RATE_LIMIT_SCALE);
  const publicUrl = e.PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`;
  return {
    host: e.HOST,
    port: e.PORT,
    publicUrl,
    logLevel: e.LOG_LEVEL,
    admin: e.ADMIN_PORT === 'off' ? undefined : { host: e.ADMIN_HOST, port: e.ADMIN_PORT },
    trustProxy: e.TRUST_PROXY,
    workerMetricsPort: e.WORKER_METRICS_PORT === 'off' ? undefined : e.WORKER_METRICS_PORT,
    redis: {
      url: e.REDIS_URL,
      commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
      replicaAck: { min: e.REDIS_MIN_REPLICAS_ACK, timeoutMs: REPLICA_ACK_TIMEOUT_MS },
      redeliverAfterMs: REDELIVER_AFTER_MS,
      ...redisTls(e),
    },
    temporal: {
      regions,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      startTimeoutMs: e.TEMPORAL_START_TIMEOUT_MS,
      connectTimeoutMs: TEMPORAL_CONNECT_TIMEOUT_MS,
      /** Unset: the bundle built beside the compiled worker (src/worker.ts); a test names the one it built. */
      workflowBundlePath: undefined as string | undefined,
    },
    ingress: {
      bodyLimitBytes: SPEC_LIMITS.bodyLimitBytes,
      idempotencyKeyMaxLength: SPEC_LIMITS.idempotencyKeyMaxLength as number,
      idempotencyWindowMs: SPEC_LIMITS.replayWindowMs as number,
      maxInFlight: e.MAX_IN_FLIGHT,
      bodyReadTimeoutMs: BODY_READ_TIMEOUT_MS,
      maxConnectionsPerIp: e.MAX_CONNECTIONS_PER_IP,
      maxOverCapConnections: MAX_OVER_CAP_CONNECTIONS,
    },
    door: { ...DOOR_TUNING, minReplicas: e.REDIS_MIN_REPLICAS_ACK },
    limits: {
      webhookPreAuthIp: { max: e.WEBHOOK_PREAUTH_IP_MAX, windowMs: e.WEBHOOK_PREAUTH_IP_WINDOW_MS },
      route: limits.route,
      fairnessAccount: limits.fairnessAccount,
      fairnessBroadcast: limits.fairnessBroadcast,
      pollIp: limits.pollIp,
      pollAccount: limits.pollAccount,
      failClosedRetryAfterSeconds: FAIL_CLOSED_RETRY_AFTER_SECONDS,
      keyPrefix: e.RATE_LIMIT_KEY_PREFIX,
    },
    poll: { temporalWaitMs: POLL_TEMPORAL_WAIT_MS, reportedOutcomesKeepSeconds: REPORTED_OUTCOMES_KEEP_SECONDS },
    owners: {
      secretsKeyFile: e.OWNER_SECRETS_KEY_FILE,
      secureCookies: e.DASHBOARD_SECURE_COOKIES === 'true',
      sessionTtlSeconds: SESSION_TTL_SECONDS,
      setupTtlSeconds: OWNER_SETUP_TTL_SECONDS,
      accountCap: DEFAULT_OWNER_ACCOUNT_CAP,
      signInIp: { ...SIGN_IN_IP_LIMIT },
    },
    bridge: {
      maxWaitMs: e.BRIDGE_MAX_WAIT_MS,
      limit: limits.bridge,
      defaultMaxSignalAgeMs: COMMAND_AGES.marketEntryMs as number,
      defaultCommandTtlMs: COMMAND_AGES.otherMs as number,
      figuresMaxAgeMs: FIGURES_MAX_AGE_MS,
    },
    trades: { retentionMs: e.TRADE_JOURNAL_RETENTION_DAYS * 86_400_000 },
    callbacks: {
      sealingKeyFile: e.CALLBACK_SECRET_KEY_FILE,
      guard: { allowedOrigins: e.CALLBACK_ALLOWED_ORIGINS, allowHttp: e.CALLBACK_ALLOW_HTTP === 'true', maxUrlLength: CALLBACK_URL_MAX_LENGTH },
      maxEndpointsPerOwner: MAX_ENDPOINTS_PER_OWNER,
      post: { timeoutMs: CALLBACK_TIMEOUT_MS, maxResponseBytes: CALLBACK_RESPONSE_MAX_BYTES },
      attemptsKeep: { count: CALLBACK_ATTEMPTS_KEEP.count as number, seconds: CALLBACK_ATTEMPTS_KEEP.seconds },
    },
    ctraderOAuth: ctraderOAuth(e, publicUrl),
  };
}

/**
 * The Open API application of "Connect with cTrader", or undefined when CTRADER_OAUTH_CLIENT_ID is unset. Given a
 * client id, the secret's file and the tokens' key are required (fail at start, not at the owner's click). The secret
 * is read when asked for, so it sits in no config object that could be printed.
 */
function ctraderOAuth(e: z.infer<typeof envSchema>, publicUrl: string) {
  if (e.CTRADER_OAUTH_CLIENT_ID === undefined) return undefined;
  const missing = [
    e.CTRADER_OAUTH_CLIENT_SECRET_FILE === undefined && 'CTRADER_OAUTH_CLIENT_SECRET_FILE',
    e.CTRADER_TOKENS_KEY_FILE === undefined && 'CTRADER_TOKENS_KEY_FILE',
  ].filter((m): m is string => m !== false);
  if (missing.length > 0) throw new Error(`Invalid configuration:\n${missing.map((m) => `${m}: required with CTRADER_OAUTH_CLIENT_ID`).join('\n')}`);
  const secretFile = e.CTRADER_OAUTH_CLIENT_SECRET_FILE!;
  return {
    clientId: e.CTRADER_OAUTH_CLIENT_ID,
    clientSecret: (): string => readSecretFile(secretFile, 'CTRADER_OAUTH_CLIENT_SECRET_FILE'),
    /** The redirect URI to declare for the application: the dashboard's callback under PUBLIC_URL. */
    redirectUrl: `${publicUrl.replace(/\/+$/, '')}${CTRADER_CALLBACK_PATH}`,
    authorizeUrl: CTRADER_AUTHORIZE_URL as string,
    tokenUrl: CTRADER_TOKEN_URL as string,
    timeoutMs: CTRADER_OAUTH_TIMEOUT_MS,
    accountListUrl: CTRADER_ACCOUNT_LIST_URL as string,
    tokensKeyFile: e.CTRADER_TOKENS_KEY_FILE!,
  };
}

/** A secret kept in a file (trimmed, 1 to 256 characters); the error names the setting, never the content. */
export function readSecretFile(file: string, setting: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(`${setting} cannot be read`);
  }
  if (text === '' || text.length > 256) throw new Error(`${setting} must hold the secret itself (1 to 256 characters)`);
  return text;
}
