import { z } from 'zod';
import { parseEnv, readSecretFile } from '../config';
import { int } from '../config-fields';

/**
 * The cTrader connector's own settings (npm run ctrader-connector), read only by that program; parsed the same way as
 * the service's (src/config.ts): every problem in one error, names and rules only, never a value.
 * Exported so test/unit/configuration-doc.test.ts can hold docs/configuration.md to its keys and defaults.
 */
export const connectorSchema = z.object({
  /** Where the bridge API is. */
  INGRESS_URL: z.url().default('http://127.0.0.1:8080'),
  /** 32 random bytes, base64: the key of the encrypted credentials file. There is no default key; without it, the connector runs linked accounts only. */
  CTRADER_CREDENTIALS_KEY: z.string().min(1).optional(),
  /** Accounts linked with Connect with cTrader: the service's Redis, and the key that seals their tokens there. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//)
    .optional(),
  CTRADER_TOKENS_KEY_FILE: z.string().min(1).optional(),
  /** The Open API application (the ingress's settings of the same names); the credentials file's application otherwise. */
  CTRADER_OAUTH_CLIENT_ID: z.string().trim().min(1).max(256).optional(),
  CTRADER_OAUTH_CLIENT_SECRET_FILE: z.string().min(1).optional(),
  CTRADER_OAUTH_CLIENT_SECRET: z.string().min(1).max(256).optional(),
  /** Linked accounts are read again this often besides on every change published in Redis. */
  CTRADER_LINKS_RELOAD_MS: int(30_000, 100, 3_600_000),
  CTRADER_CREDENTIALS_FILE: z.string().min(1).default('ctrader/credentials.enc'),
  /** Each account's exactly-once store (<dir>/<accountId>.commands.jsonl). */
  CTRADER_STATE_DIR: z.string().min(1).default('ctrader/state'),
  /** Open API JSON endpoints (port 5036 is JSON; 5035 would be protobuf). */
  CTRADER_DEMO_URL: z
    .string()
    .regex(/^wss?:\/\//)
    .default('wss://demo.ctraderapi.com:5036'),
  CTRADER_LIVE_URL: z
    .string()
    .regex(/^wss?:\/\//)
    .default('wss://live.ctraderapi.com:5036'),
  /** Open API allows 50 requests per second per connection; never more. */
  CTRADER_REQUESTS_PER_SECOND: int(50, 1, 50),
  CTRADER_HEARTBEAT_MS: int(10_000, 100, 25_000),
  CTRADER_REQUEST_TIMEOUT_MS: int(15_000, 100),
  /** Refresh an access token this long before it expires. */
  CTRADER_REFRESH_AHEAD_MS: int(3_600_000, 0),
  /** Long-poll wait asked of the ingress. */
  CTRADER_WAIT_MS: int(20_000, 0, 60_000),
  /** The account's figures go alone (a heartbeat, protocol 1.2) after this long without a report; 0: never. */
  CTRADER_FIGURES_HEARTBEAT_MS: int(30_000, 0),
});

export function loadConnectorConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = parseEnv(connectorSchema, env);
  if ((e.REDIS_URL === undefined) !== (e.CTRADER_TOKENS_KEY_FILE === undefined))
    throw new Error('Invalid configuration:\nREDIS_URL and CTRADER_TOKENS_KEY_FILE: give both (linked accounts) or neither');
  if (e.CTRADER_OAUTH_CLIENT_ID !== undefined && e.CTRADER_OAUTH_CLIENT_SECRET_FILE === undefined && e.CTRADER_OAUTH_CLIENT_SECRET === undefined)
    throw new Error('Invalid configuration:\nCTRADER_OAUTH_CLIENT_SECRET_FILE (or CTRADER_OAUTH_CLIENT_SECRET): required with CTRADER_OAUTH_CLIENT_ID');
  const secretFile = e.CTRADER_OAUTH_CLIENT_SECRET_FILE;
  return {
    linked:
      e.REDIS_URL && e.CTRADER_TOKENS_KEY_FILE
        ? { redisUrl: e.REDIS_URL, tokensKeyFile: e.CTRADER_TOKENS_KEY_FILE, reloadMs: e.CTRADER_LINKS_RELOAD_MS }
        : undefined,
    application:
      e.CTRADER_OAUTH_CLIENT_ID === undefined
        ? undefined
        : {
            clientId: e.CTRADER_OAUTH_CLIENT_ID,
            // Read when asked for, so the secret sits in no config object that could be printed.
            clientSecret: () => (secretFile === undefined ? e.CTRADER_OAUTH_CLIENT_SECRET! : readSecretFile(secretFile, 'CTRADER_OAUTH_CLIENT_SECRET_FILE')),
          },
    ingressUrl: e.INGRESS_URL,
    credentialsKey: e.CTRADER_CREDENTIALS_KEY,
    credentialsFile: e.CTRADER_CREDENTIALS_FILE,
    stateDir: e.CTRADER_STATE_DIR,
    urls: { demo: e.CTRADER_DEMO_URL, live: e.CTRADER_LIVE_URL },
    requestsPerSecond: e.CTRADER_REQUESTS_PER_SECOND,
    heartbeatMs: e.CTRADER_HEARTBEAT_MS,
    requestTimeoutMs: e.CTRADER_REQUEST_TIMEOUT_MS,
    refreshAheadMs: e.CTRADER_REFRESH_AHEAD_MS,
    waitMs: e.CTRADER_WAIT_MS,
    figuresHeartbeatMs: e.CTRADER_FIGURES_HEARTBEAT_MS,
  };
}
export type ConnectorConfig = ReturnType<typeof loadConnectorConfig>;
