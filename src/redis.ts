import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * A Redis connection that fails fast: no offline queue and a command deadline, so a guard that needs Redis learns at
 * once that it cannot do its job (and fails closed) instead of hanging. It reconnects by itself when Redis is back,
 * and a process started while Redis is down keeps running.
 */
export function connectRedis(url: string, options: { commandTimeoutMs: number; logger?: Logger; name: string }): Redis {
  const redis = new Redis(url, {
    connectionName: options.name,
    enableOfflineQueue: false,
    commandTimeout: options.commandTimeoutMs,
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(options.commandTimeoutMs, 1000),
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
  });
  logRedisErrors(redis, options.name, options.logger);
  return redis;
}

/** Logs a connection's errors, at most one line per 5 s: an outage must not flood the log (nor crash the process). */
export function logRedisErrors(redis: Redis, name: string, logger?: Logger): void {
  let lastLogged = 0;
  redis.on('error', (err: Error) => {
    if (Date.now() - lastLogged > 5000) {
      lastLogged = Date.now();
      logger?.warn({ err: err.message, redis: name }, 'redis unavailable');
    }
  });
}

/** Errors that mean the store did not answer (down, unreachable, too slow, failing over), not a bug of ours. */
export function isStoreFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return /Connection is closed|Stream isn't writeable|enableOfflineQueue|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|MaxRetriesPerRequest|LOADING|CLUSTERDOWN|READONLY|TRYAGAIN/i.test(
    err.message,
  );
}

/** Resolves when the connection is ready or after timeoutMs, whichever comes first; never rejects. */
export async function waitUntilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.on('ready', onReady);
  });
}
