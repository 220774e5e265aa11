/** A redis-server on a free loopback port (optionally durable), and what the tests read of it. */
import fs from 'node:fs';
import path from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import { freePort, GroupProcess, instanceName, runDir, tail, waitFor, waitPortClosed } from './run';

// ---------------------------------------------------------------------------------------------------------------
// Redis

export interface RedisServer {
  url: string;
  port: number;
  logFile: string;
  /** Where it keeps its append-only file (durable servers only). */
  dir: string;
  durable: boolean;
  readonly pid: number;
  /** Stops the server (SIGTERM) and waits until the port is closed. A throwaway server's data is gone. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash or the OOM killer would: no shutdown, no final write. Waits until the port is closed. */
  kill9(): Promise<void>;
  /** Starts it again on the same port: empty, or for a durable server with every write it acknowledged. */
  start(): Promise<void>;
}

export interface StartRedisOptions {
  readyTimeoutMs?: number;
  /**
   * An append-only file (`appendonly yes`, `appendfsync everysec`, the settings of `make start` and docker-compose):
   * the data survives stop/start and kill9/start. Default false: a throwaway server with no persistence.
   */
  durable?: boolean;
  /** More redis-server arguments (e.g. `--replicaof 127.0.0.1 PORT` for a replica). */
  args?: string[];
  /**
   * TLS only (no plain port; client certificates required: mTLS) and one ACL user instead of the default user. The
   * URL is then `rediss://user:password@127.0.0.1:port`; readiness is checked over TLS with the CA and the client pair.
   */
  tls?: { caFile: string; certFile: string; keyFile: string; clientCertFile: string; clientKeyFile: string; user: string; password: string };
}

/** The persistence flags of a redis-server: none, or the AOF of `make start` and docker-compose.yml. */
function persistenceArgs(durable: boolean): string[] {
  return durable ? ['--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--save', '', '--appendonly', 'no'];
}

/** Starts a redis-server on a free loopback port (throwaway unless `durable`) and waits until it answers PING. */
export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const name = instanceName('redis');
  const dir = path.join(runDir(), name);
  fs.mkdirSync(dir, { recursive: true });
  const logFile = path.join(dir, 'redis.log');
  const readyTimeoutMs = opts.readyTimeoutMs ?? 10_000;
  const durable = opts.durable ?? false;
  const proc = new GroupProcess(name, logFile);
  const bin = process.env.REDIS_SERVER_BIN ?? 'redis-server';

  const tls = opts.tls;
  const tlsArgs = (port: number) =>
    tls
      ? [
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          '--tls-ca-cert-file',
          tls.caFile,
          '--tls-auth-clients',
          'yes',
          '--user',
          'default',
          'off',
          '--user',
          tls.user,
          'on',
          `>${tls.password}`,
          '~*',
          '&*',
          '+@all',
        ]
      : ['--port', String(port)];
  const urlOf = (port: number) => (tls ? `rediss://${tls.user}:${tls.password}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`);
  const pingOptions = tls
    ? { tls: { ca: fs.readFileSync(tls.caFile), cert: fs.readFileSync(tls.clientCertFile), key: fs.readFileSync(tls.clientKeyFile) } }
    : {};
  const launch = async (port: number) => {
    proc.spawn(bin, [
      ...tlsArgs(port),
      '--bind',
      '127.0.0.1',
      ...persistenceArgs(durable),
      '--daemonize',
      'no',
      '--dir',
      dir,
      '--logfile',
      '',
      ...(opts.args ?? []),
    ]);
    await waitRedisReady(urlOf(port), proc, readyTimeoutMs, pingOptions);
  };

  const fixed = await (async () => {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        await launch(port);
        return port;
      } catch (err) {
        await proc.stop();
        if (attempt >= 3 || !/address already in use/i.test(proc.logSinceSpawn())) throw err;
      }
    }
  })();
  return {
    url: urlOf(fixed),
    port: fixed,
    logFile,
    dir,
    durable,
    get pid() {
      return proc.pid;
    },
    async stop() {
      await proc.stop();
      await waitPortClosed(fixed, name);
    },
    async kill9() {
      await proc.kill9();
      await waitPortClosed(fixed, name);
    },
    async start() {
      if (proc.running) return;
      await launch(fixed);
    },
  };
}

/** True when a Redis at `url` answers PING within `timeoutMs`. Never retries on its own. */
export async function redisPing(url: string, timeoutMs = 1_000, options: RedisOptions = {}): Promise<boolean> {
  const client = new Redis(url, {
    ...options,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Where a durable server's append-only file stands: `pendingBytes` acknowledged but not yet handed to the kernel, and
 * how many times it postponed that write. With `appendfsync everysec`, Redis answers a write before writing it to
 * the file whenever a background fsync is still running (a busy disk), for up to 2 s: a SIGKILL then loses those
 * acknowledged writes (docs/deployment.md). `pendingBytes` 0 means every write acknowledged so far survives a SIGKILL.
 */
export async function aofState(url: string): Promise<{ pendingBytes: number; postponedWrites: number }> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 2_000 });
  client.on('error', () => undefined);
  try {
    const info = await client.info('persistence');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
    return { pendingBytes: field('aof_buffer_length'), postponedWrites: field('aof_delayed_fsync') };
  } finally {
    client.disconnect();
  }
}

async function waitRedisReady(url: string, proc: GroupProcess, timeoutMs: number, options: RedisOptions = {}): Promise<void> {
  try {
    await waitFor(
      `redis-server on ${url.replace(/\/\/[^@]*@/, '//')} to answer PING`,
      async () => {
        if (!proc.running) throw new Error(`redis-server did not become ready: ${proc.describeExit()}`);
        return redisPing(url, 500, options);
      },
      timeoutMs,
    );
  } catch (err) {
    if (!proc.running) throw err;
    throw new Error(`${(err as Error).message}; last lines of ${proc.logFile}:\n${tail(proc.logFile)}`);
  }
}
