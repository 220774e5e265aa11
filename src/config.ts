import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SPEC_LIMITS } from './domain/limits';
import { allowedOriginsSchema, type AllowedOrigin } from './callbacks/origins';
import { RATE_LIMIT_KEY_PREFIX } from './redis-keys';
import { int, trustProxy } from './config-fields';
import { parseRegions, singleRegion, type RegionConfig } from './config-regions';

/**
 * The one place that reads the environment. Every number the spec leaves open has a default here and an
 * environment variable; the spec's own numbers (64 KB, 45 s, 128 characters) may be shortened for tests only.
 * There are no secrets in the environment: webhook secrets, API tokens and bridge tokens live hashed in the registry.
 */

/** The callbacks' allow-list under its name or its old one; both at once is a mistake to point out, not to merge. */
function allowedOrigins(e: z.infer<typeof envSchema>): AllowedOrigin[] {
  if (e.CALLBACK_ALLOWED_ORIGINS.length > 0 && e.CALLBACK_ALLOWED_HOSTS.length > 0) {
    throw new Error('Invalid configuration:\nCALLBACK_ALLOWED_HOSTS: the old name of CALLBACK_ALLOWED_ORIGINS; set one of them');
  }
  return e.CALLBACK_ALLOWED_ORIGINS.length > 0 ? e.CALLBACK_ALLOWED_ORIGINS : e.CALLBACK_ALLOWED_HOSTS;
}

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
  /** How long one Redis command may take before a guard gives up and fails closed. */
  REDIS_COMMAND_TIMEOUT_MS: int(500, 1),
  /**
   * With replicas (Sentinel): a queued command and a new sequence number count as written only when this many replicas
   * hold them (Redis WAIT), so a failover cannot lose them with the old master; 0 (one Redis with its AOF) skips it.
   */
  REDIS_MIN_REPLICAS_ACK: int(0, 0, 5),
  REDIS_REPLICA_ACK_TIMEOUT_MS: int(200, 1, 5000),
  /** A command a bridge took and has not reported on for this long is handed out again (the bridge dedups by commandId). */
  BRIDGE_REDELIVER_AFTER_MS: int(15_000, 1000, 600_000),
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
   * TEMPORAL_ADDRESS/NAMESPACE and the TEMPORAL_TLS_* / TEMPORAL_API_KEY_FILE settings below.
   */
  TEMPORAL_REGIONS: z.string().optional(),
  /** TLS to Temporal (on with any TEMPORAL_TLS_* file); files are PEM. docs/cluster-profile.md, "Connections". */
  TEMPORAL_TLS: z.enum(['true', 'false']).default('false'),
  TEMPORAL_TLS_CA_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_CERT_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** A file holding a Temporal Cloud API key (sent as a bearer token; TLS required). */
  TEMPORAL_API_KEY_FILE: z.string().min(1).optional(),
  /** How long all Temporal calls of one submission may take together; past it the webhook answers 503 backpressure. */
  TEMPORAL_START_TIMEOUT_MS: int(1500, 1),
  /** How long to try to reach an unreachable Temporal before answering 503 backpressure. */
  TEMPORAL_CONNECT_TIMEOUT_MS: int(1000, 1),
  WORKFLOW_BUNDLE_PATH: z.string().optional(),

  BODY_LIMIT_BYTES: int(SPEC_LIMITS.bodyLimitBytes, 1),
  IDEMPOTENCY_KEY_MAX_LENGTH: int(SPEC_LIMITS.idempotencyKeyMaxLength, 1),
  IDEMPOTENCY_WINDOW_MS: int(SPEC_LIMITS.replayWindowMs, 1),
  /**
   * Requests being accepted at once by one ingress process (counted once their body is in); past it, 503 backpressure.
   * 2048 takes a bar close of 1,000 alerts from one TradingView address at once with room for its other addresses'.
   * Each holds at most one body (BODY_LIMIT_BYTES, 64 KiB): 2048 × 64 KiB = 128 MiB of bodies at worst; alerts are a
   * few hundred bytes, a few MiB in practice.
   */
  MAX_IN_FLIGHT: int(2048, 1),
  /**
   * The commands reach the bridges without Temporal; what the door bounds is Temporal's supervision lag: a target
   * whose workflow has not adopted its command after this is late (docs/admission-control.md).
   */
  ADMISSION_SUPERVISION_LAG_MS: int(10_000, 1),
  /** More late targets than this, and new signals get 503 backpressure until the backlog drains. */
  ADMISSION_MAX_LATE: int(40, 0),
  /** How often each ingress reads the admission backlog. */
  ADMISSION_REFRESH_MS: int(100, 10, 5000),
  /**
   * While the door is shut, a pair pending longer than this whose signal is not running in Temporal is forgotten: it
   * will never settle (src/signals/lost-starts.ts). Past the idempotency window (a replay starts a signal under its
   * first acceptance time) and the start's budget, so a start still under way is never taken for lost.
   */
  ADMISSION_LOST_START_AFTER_MS: int(60_000, 1),
  /** How long a client may take to send a request body; past it, 408 and the connection is closed. */
  BODY_READ_TIMEOUT_MS: int(5000, 1),
  /**
   * Open connections one client IP may hold on one ingress process; past it a connection's request is answered 503
   * with Retry-After and the connection closed. TradingView posts every trader's alerts from a handful of addresses:
   * 2048 takes 1,000 alerts from one of them at the same second, with room for the keep-alive connections still open
   * from the bar before. A body being received holds at most BODY_LIMIT_BYTES (64 KiB) for at most BODY_READ_TIMEOUT_MS:
   * 2048 × 64 KiB = 128 MiB per address at worst. A flood of bad secrets is not bounded here but by
   * WEBHOOK_PREAUTH_IP_MAX. 0: no cap.
   */
  MAX_CONNECTIONS_PER_IP: int(2048, 0),
  /** Connections past the per-IP cap that are answered rather than closed, open at once in one ingress process. */
  MAX_OVER_CAP_CONNECTIONS: int(4096, 0),

  /**
   * Webhook requests per client address per window that fail to authenticate; past it, 429 before any lookup. Only
   * failures are charged (a request that authenticates never is), so TradingView's shared addresses are not capped
   * for their good alerts, but every trader's failures behind one address share its budget.
   */
  WEBHOOK_PREAUTH_IP_MAX: int(300, 1),
  WEBHOOK_PREAUTH_IP_WINDOW_MS: int(60_000, 1),
  ROUTE_LIMIT_MAX: int(120, 1),
  ROUTE_LIMIT_WINDOW_MS: int(60_000, 1),
  FAIRNESS_ACCOUNT_MAX: int(60, 1),
  FAIRNESS_ACCOUNT_WINDOW_MS: int(10_000, 1),
  FAIRNESS_BROADCAST_MAX: int(60, 1),
  FAIRNESS_BROADCAST_WINDOW_MS: int(10_000, 1),
  POLL_IP_MAX: int(600, 1),
  POLL_IP_WINDOW_MS: int(60_000, 1),
  POLL_ACCOUNT_MAX: int(300, 1),
  POLL_ACCOUNT_WINDOW_MS: int(60_000, 1),
  /** How long the status poll waits for Temporal before it answers from what it has (docs/poll.md). */
  POLL_TEMPORAL_WAIT_MS: int(10, 1, 5_000),
  /** How long the outcomes bridges reported stay in Redis for the poll; past it the poll reads Temporal alone. */
  REPORTED_OUTCOMES_KEEP_SECONDS: int(3_600, 60),
  /** Key prefix of every limiter's counters, so deployments (or test runs) sharing one Redis do not share counts. */
  RATE_LIMIT_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,32}$/)
    .default(RATE_LIMIT_KEY_PREFIX),
  /** Seconds a client is told to wait when a limiter cannot reach its store. */
  FAIL_CLOSED_RETRY_AFTER_SECONDS: int(5, 1),

  /** Longest a bridge long-poll may hang. */
  BRIDGE_MAX_WAIT_MS: int(25_000, 0),
  /** Bridge API requests (hello, commands, reports) per bridge token per window; past it, 429. */
  BRIDGE_LIMIT_MAX: int(600, 1),
  BRIDGE_LIMIT_WINDOW_MS: int(60_000, 1),
  /** The owners' dashboard (docs/owners.md): a file holding the key that seals TOTP seeds (32 bytes, base64); without it the dashboard and owner API answer 503. */
  OWNER_SECRETS_KEY_FILE: z.string().min(1).optional(),
  /** Secure, __Host- session cookies (the default); "false" only for plain-HTTP local use (make start). */
  DASHBOARD_SECURE_COOKIES: z.enum(['true', 'false']).default('true'),
  SESSION_TTL_SECONDS: int(12 * 3600, 300, 7 * 24 * 3600),
  OWNER_SETUP_TTL_SECONDS: int(24 * 3600, 300, 7 * 24 * 3600),
  /** The most accounts an owner may have when adding one on the dashboard; per owner: `admin owner account-cap`. */
  OWNER_ACCOUNT_CAP: int(10, 0, 1000),
  /** Failed sign-ins per client address per window; past it, 429 for that address only (never for the owner). */
  SIGN_IN_IP_MAX: int(20, 1),
  SIGN_IN_IP_WINDOW_MS: int(15 * 60_000, 1),
  /** Default max signal age for market entries when an account sets none. */
  DEFAULT_MAX_SIGNAL_AGE_MS: int(30_000, 1),
  /** Max age of the other commands (pending entries, closes, modifies) when an account sets none. */
  DEFAULT_COMMAND_TTL_MS: int(300_000, 1),
  /** The oldest a quote behind an entry's risk figures may be (docs/risk-sizing.md): older, the bridge refuses it `risk_figures_stale`. */
  RISK_FIGURES_MAX_AGE_MS: int(60_000, 1, 86_400_000),
  /** How long the trade journal keeps closed trades, their events and the equity curve (docs/trades.md); open trades stay. */
  TRADE_JOURNAL_RETENTION_DAYS: int(90, 1, 3650),

  /** Outcome callbacks (docs/callbacks.md): the key that seals the endpoints' signing secrets; unset, none can be registered. */
  CALLBACK_SECRET_KEY_FILE: z.string().min(1).optional(),
  /**
   * Origins (`https://receiver.internal`, `http://127.0.0.1:8080`) callbacks may reach although their address is
   * private (comma-separated): that port of that host only, the scheme's default port when none is given.
   */
  CALLBACK_ALLOWED_ORIGINS: allowedOriginsSchema,
  /** The old name of CALLBACK_ALLOWED_ORIGINS, read the same way (an entry without a port no longer opens every port). */
  CALLBACK_ALLOWED_HOSTS: allowedOriginsSchema,
  /** http:// callback URLs, for local use only; otherwise https:// is required. */
  CALLBACK_ALLOW_HTTP: z.enum(['true', 'false']).default('false'),
  CALLBACK_MAX_ENDPOINTS_PER_OWNER: int(5, 1, 50),
  CALLBACK_URL_MAX_LENGTH: int(512, 16, 2048),
  /** One delivery attempt, from connect to the answer's status and its bounded read. */
  CALLBACK_TIMEOUT_MS: int(10_000, 100, 60_000),
  CALLBACK_RESPONSE_MAX_BYTES: int(4096, 0, 1_048_576),
  /** Delivery attempts kept per owner for the owner to read, and for how long. */
  CALLBACK_ATTEMPTS_KEEP: int(200, 1, 10_000),
  CALLBACK_ATTEMPTS_KEEP_SECONDS: int(7 * 86_400, 60),

  /** "Connect with cTrader" (docs/ctrader-connector.md): the Open API application's client id; unset, the button is off. */
  CTRADER_OAUTH_CLIENT_ID: z.string().trim().min(1).max(256).optional(),
  /** The application's client secret: a file holding it (preferred), or the value itself. Never logged. */
  CTRADER_OAUTH_CLIENT_SECRET_FILE: z.string().min(1).optional(),
  CTRADER_OAUTH_CLIENT_SECRET: z.string().min(1).max(256).optional(),
  /** The redirect URI declared for the application: this service's /dashboard/ctrader/callback. */
  CTRADER_OAUTH_REDIRECT_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Spotware's granting-access page and token endpoint (other values for tests only). */
  CTRADER_OAUTH_AUTHORIZE_URL: z.url({ protocol: /^https?$/ }).default('https://id.ctrader.com/my/settings/openapi/grantingaccess/'),
  CTRADER_OAUTH_TOKEN_URL: z.url({ protocol: /^https?$/ }).default('https://openapi.ctrader.com/apps/token'),
  /** The token exchange, and separately the account list over Open API, must each answer within this. */
  CTRADER_OAUTH_TIMEOUT_MS: int(10_000, 100, 60_000),
  /** Where the account list (ProtoOAGetAccountListByAccessTokenReq) is asked; Spotware answers it on either host. */
  CTRADER_ACCOUNT_LIST_URL: z
    .string()
    .regex(/^wss?:\/\//)
    .default('wss://live.ctraderapi.com:5036'),
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

export interface RedisTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  serverName?: string;
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
  const e = parseEnv(envSchema, env);
  if (e.ADMIN_PORT !== 'off' && e.ADMIN_PORT !== 0 && e.ADMIN_PORT === e.PORT) {
    throw new Error('Invalid configuration:\nADMIN_PORT: must differ from PORT (the admin listener is never the public one)');
  }
  const regions: RegionConfig[] = e.TEMPORAL_REGIONS ? parseRegions(e.TEMPORAL_REGIONS) : [singleRegion(e)];
  return {
    host: e.HOST,
    port: e.PORT,
    publicUrl: e.PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`,
    logLevel: e.LOG_LEVEL,
    admin: e.ADMIN_PORT === 'off' ? undefined : { host: e.ADMIN_HOST, port: e.ADMIN_PORT },
    trustProxy: e.TRUST_PROXY,
    workerMetricsPort: e.WORKER_METRICS_PORT === 'off' ? undefined : e.WORKER_METRICS_PORT,
    redis: {
      url: e.REDIS_URL,
      commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
      replicaAck: { min: e.REDIS_MIN_REPLICAS_ACK, timeoutMs: e.REDIS_REPLICA_ACK_TIMEOUT_MS },
      redeliverAfterMs: e.BRIDGE_REDELIVER_AFTER_MS,
      ...redisTls(e),
    },
    temporal: {
      regions,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      startTimeoutMs: e.TEMPORAL_START_TIMEOUT_MS,
      connectTimeoutMs: e.TEMPORAL_CONNECT_TIMEOUT_MS,
      workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
    },
    ingress: {
      bodyLimitBytes: e.BODY_LIMIT_BYTES,
      idempotencyKeyMaxLength: e.IDEMPOTENCY_KEY_MAX_LENGTH,
      idempotencyWindowMs: e.IDEMPOTENCY_WINDOW_MS,
      maxInFlight: e.MAX_IN_FLIGHT,
      bodyReadTimeoutMs: e.BODY_READ_TIMEOUT_MS,
      maxConnectionsPerIp: e.MAX_CONNECTIONS_PER_IP,
      maxOverCapConnections: e.MAX_OVER_CAP_CONNECTIONS,
    },
    admission: {
      lateAfterMs: e.ADMISSION_SUPERVISION_LAG_MS,
      maxLate: e.ADMISSION_MAX_LATE,
      refreshMs: e.ADMISSION_REFRESH_MS,
      lostStarts: { afterMs: e.ADMISSION_LOST_START_AFTER_MS, limit: 50, everyMs: 5_000 },
    },
    limits: {
      webhookPreAuthIp: { max: e.WEBHOOK_PREAUTH_IP_MAX, windowMs: e.WEBHOOK_PREAUTH_IP_WINDOW_MS },
      route: { max: e.ROUTE_LIMIT_MAX, windowMs: e.ROUTE_LIMIT_WINDOW_MS },
      fairnessAccount: { max: e.FAIRNESS_ACCOUNT_MAX, windowMs: e.FAIRNESS_ACCOUNT_WINDOW_MS },
      fairnessBroadcast: { max: e.FAIRNESS_BROADCAST_MAX, windowMs: e.FAIRNESS_BROADCAST_WINDOW_MS },
      pollIp: { max: e.POLL_IP_MAX, windowMs: e.POLL_IP_WINDOW_MS },
      pollAccount: { max: e.POLL_ACCOUNT_MAX, windowMs: e.POLL_ACCOUNT_WINDOW_MS },
      failClosedRetryAfterSeconds: e.FAIL_CLOSED_RETRY_AFTER_SECONDS,
      keyPrefix: e.RATE_LIMIT_KEY_PREFIX,
    },
    poll: { temporalWaitMs: e.POLL_TEMPORAL_WAIT_MS, reportedOutcomesKeepSeconds: e.REPORTED_OUTCOMES_KEEP_SECONDS },
    owners: {
      secretsKeyFile: e.OWNER_SECRETS_KEY_FILE,
      secureCookies: e.DASHBOARD_SECURE_COOKIES === 'true',
      sessionTtlSeconds: e.SESSION_TTL_SECONDS,
      setupTtlSeconds: e.OWNER_SETUP_TTL_SECONDS,
      accountCap: e.OWNER_ACCOUNT_CAP,
      signInIp: { max: e.SIGN_IN_IP_MAX, windowMs: e.SIGN_IN_IP_WINDOW_MS },
    },
    bridge: {
      maxWaitMs: e.BRIDGE_MAX_WAIT_MS,
      limit: { max: e.BRIDGE_LIMIT_MAX, windowMs: e.BRIDGE_LIMIT_WINDOW_MS },
      defaultMaxSignalAgeMs: e.DEFAULT_MAX_SIGNAL_AGE_MS,
      defaultCommandTtlMs: e.DEFAULT_COMMAND_TTL_MS,
      figuresMaxAgeMs: e.RISK_FIGURES_MAX_AGE_MS,
    },
    trades: { retentionMs: e.TRADE_JOURNAL_RETENTION_DAYS * 86_400_000 },
    callbacks: {
      sealingKeyFile: e.CALLBACK_SECRET_KEY_FILE,
      guard: { allowedOrigins: allowedOrigins(e), allowHttp: e.CALLBACK_ALLOW_HTTP === 'true', maxUrlLength: e.CALLBACK_URL_MAX_LENGTH },
      maxEndpointsPerOwner: e.CALLBACK_MAX_ENDPOINTS_PER_OWNER,
      post: { timeoutMs: e.CALLBACK_TIMEOUT_MS, maxResponseBytes: e.CALLBACK_RESPONSE_MAX_BYTES },
      attemptsKeep: { count: e.CALLBACK_ATTEMPTS_KEEP, seconds: e.CALLBACK_ATTEMPTS_KEEP_SECONDS },
    },
    ctraderOAuth: ctraderOAuth(e),
  };
}

/**
 * The Open API application of "Connect with cTrader", or undefined when CTRADER_OAUTH_CLIENT_ID is unset. Given a
 * client id, the rest is required (fail at start, not at the owner's click). The secret is read when asked for, so it
 * sits in no config object that could be printed.
 */
function ctraderOAuth(e: z.infer<typeof envSchema>) {
  if (e.CTRADER_OAUTH_CLIENT_ID === undefined) return undefined;
  const missing = [
    e.CTRADER_OAUTH_REDIRECT_URL === undefined && 'CTRADER_OAUTH_REDIRECT_URL',
    e.CTRADER_OAUTH_CLIENT_SECRET_FILE === undefined &&
      e.CTRADER_OAUTH_CLIENT_SECRET === undefined &&
      'CTRADER_OAUTH_CLIENT_SECRET_FILE (or CTRADER_OAUTH_CLIENT_SECRET)',
    e.CTRADER_TOKENS_KEY_FILE === undefined && 'CTRADER_TOKENS_KEY_FILE',
  ].filter((m): m is string => m !== false);
  if (missing.length > 0) throw new Error(`Invalid configuration:\n${missing.map((m) => `${m}: required with CTRADER_OAUTH_CLIENT_ID`).join('\n')}`);
  const secretFile = e.CTRADER_OAUTH_CLIENT_SECRET_FILE;
  const secretValue = e.CTRADER_OAUTH_CLIENT_SECRET;
  return {
    clientId: e.CTRADER_OAUTH_CLIENT_ID,
    clientSecret: (): string => (secretFile === undefined ? secretValue! : readSecretFile(secretFile, 'CTRADER_OAUTH_CLIENT_SECRET_FILE')),
    redirectUrl: e.CTRADER_OAUTH_REDIRECT_URL!,
    authorizeUrl: e.CTRADER_OAUTH_AUTHORIZE_URL,
    tokenUrl: e.CTRADER_OAUTH_TOKEN_URL,
    timeoutMs: e.CTRADER_OAUTH_TIMEOUT_MS,
    accountListUrl: e.CTRADER_ACCOUNT_LIST_URL,
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
