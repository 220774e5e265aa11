import fs from 'node:fs';
import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { RedisRegistry } from '../registry/registry';
import { PreAuthCap } from '../ratelimit/preauth';
import { RedisFigures } from '../bridge/figures';
import { RedisLastSeen } from '../bridge/presence';
import { parseSealKey } from './sealed';
import { ownerAuthDeps } from './sign-in';
import type { OwnerSessionDeps } from '../http/routes/owner-session';
import type { OwnerApiDeps } from '../http/routes/owner-api';

/**
 * The owners' dashboard's parts, made from the config: undefined when OWNER_SECRETS_KEY_FILE is not set (the owner
 * routes then answer 503). A key file that is set but unreadable or malformed stops the ingress at start.
 */
export function ownerDashboard(config: Config, redis: Redis, registry: RedisRegistry): { session: OwnerSessionDeps; api: OwnerApiDeps } | undefined {
  const file = config.owners.secretsKeyFile;
  if (file === undefined) return undefined;
  const sealKey = parseSealKey(fs.readFileSync(file, 'utf8'), 'OWNER_SECRETS_KEY_FILE');
  const auth = ownerAuthDeps(redis, {
    sealKey,
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
      accounts: { registry, owners: auth.owners, lastSeen: new RedisLastSeen(redis), figures: new RedisFigures(redis), onlineWithinMs: 90_000, now: auth.now },
      credentials: { registry, owners: auth.owners, now: auth.now },
    },
  };
}
