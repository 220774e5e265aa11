import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/**
 * How long a write waits for its replicas (Redis WAIT, with REDIS_MIN_REPLICAS_ACK): replicas on the same network answer
 * in a millisecond or two; 200 ms is a replica that is down or far behind, and the write then fails closed or is retried
 * rather than holding the request.
 */
export const REPLICA_ACK_TIMEOUT_MS = 200;

/** TLS to Redis (REDIS_TLS_* in src/config.ts): PEM files, and the name the certificate must carry. */
export interface RedisTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  serverName?: string;
}

/**
 * Where Redis is, from REDIS_URL: `redis://[user:password@]host:port[/db]` (an ACL user), `rediss://…` (TLS), or
 * `redis+sentinel://[user:password@]host:port[,host:port…]/master[/db]` (Sentinel; `rediss+sentinel` for TLS to the
 * data nodes): ioredis asks the sentinels who the master is, and again after a failover.
 */
export function openRedis(target: string | RedisTarget, options: RedisOptions): Redis {
  const { url, tls } = typeof target === 'string' ? { url: target, tls: undefined } : target;
  const secured = tls ? { ...options, tls: tlsOptions(tls) } : options;
  const sentinel = sentinelOptions(url);
  return sentinel ? new Redis({ ...secured, ...sentinel, ...(tls ? { tls: secured.tls } : {}) }) : new Redis(url, secured);
}

/** Where Redis is and how the connection is secured (config.redis). */
export interface RedisTarget {
  url: string;
  tls?: RedisTlsFiles;
}

/** The PEM files are read once, at start: a missing file stops the process with its name, not a failed handshake later. */
function tlsOptions(files: RedisTlsFiles): ConnectionOptions {
  const read = (what: string, file: string) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new Error(`Invalid configuration:\n${what}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
    }
  };
  return {
    ...(files.caFile ? { ca: read('REDIS_TLS_CA_FILE', files.caFile) } : {}),
    ...(files.certFile ? { cert: read('REDIS_TLS_CERT_FILE', files.certFile) } : {}),
    ...(files.keyFile ? { key: read('REDIS_TLS_KEY_FILE', files.keyFile) } : {}),
    ...(files.serverName ? { servername: files.serverName } : {}),
  };
}

export function sentinelOptions(url: string): RedisOptions | undefined {
  const m = /^(rediss?)\+sentinel:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/]+)\/([^/?]+)(?:\/(\d+))?$/.exec(url);
  if (!m) {
    if (/^rediss?\+sentinel:/.test(url))
      throw new Error('Invalid configuration:\nREDIS_URL: a Sentinel URL is redis+sentinel://[user:password@]host:port[,host:port...]/master[/db]');
    return undefined;
  }
  const [, scheme, user, password, hosts, master, db] = m;
  const sentinels = hosts!.split(',').map((h) => {
    const at = h.lastIndexOf(':');
    const port = Number(h.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`Invalid configuration:\nREDIS_URL: sentinel "${h}" is not host:port`);
    return { host: h.slice(0, at), port };
  });
  return {
    sentinels,
    name: decodeURIComponent(master!),
    ...(user ? { username: decodeURIComponent(user) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(scheme === 'rediss' ? { tls: {}, enableTLSForSentinelMode: true } : {}),
    // Listens for the sentinels' +switch-master and moves to the new master at once: until the old master is turned
    // into a replica it still takes writes, and those are lost when it resyncs (split brain).
    failoverDetector: true,
    // After a failover the old master answers writes with READONLY: reconnect, and the sentinels name the new one.
    // The refused command is not sent again (it did not run); its caller fails closed and retries.
    reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 1 : false),
  };
}

/**
 * A Redis connection that fails fast: no offline queue and a command deadline, so a guard that needs Redis learns at
 * once that it cannot do its job (and fails closed) instead of hanging. It reconnects by itself when Redis is back,
 * and a process started while Redis is down keeps running.
 */
export function connectRedis(target: string | RedisTarget, options: { commandTimeoutMs: number; logger?: Logger; name: string }): Redis {
  const redis = openRedis(target, {
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

/** How many replicas must hold a write before it counts (config.redis.replicaAck). */
export interface ReplicaAck {
  min: number;
  timeoutMs: number;
}

/**
 * Waits until `min` replicas hold every write this connection made (Redis WAIT). Fewer in time is a store failure:
 * the write may vanish in a failover (an old master's last writes are dropped when it follows the new one), so its
 * caller retries or fails closed, as when Redis is down.
 */
export async function awaitReplicas(redis: Redis | Cluster, ack: ReplicaAck | undefined): Promise<void> {
  if (!ack || ack.min === 0) return;
  const acked = await redis.wait(ack.min, ack.timeoutMs);
  if (acked < ack.min) throw new Error(`NOREPLICAS ${acked} of ${ack.min} replicas acknowledged the write within ${ack.timeoutMs} ms`);
}

/** Errors that mean the store did not answer (down, unreachable, too slow, failing over), not a bug of ours. */
export function isStoreFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return /Connection is closed|Stream isn't writeable|enableOfflineQueue|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|MaxRetriesPerRequest|LOADING|CLUSTERDOWN|READONLY|TRYAGAIN|NOREPLICAS/i.test(
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
