/**
 * A Redis Sentinel of one (quorum 1) watching a master, for failover tests: a real `redis-server --sentinel` on a free
 * loopback port, in its own process group like every server of infra.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { freePort, GroupProcess, instanceName, runDir, waitFor, waitPortClosed } from '../../support/infra';

export interface Sentinel {
  port: number;
  master: string;
  /** `redis+sentinel://127.0.0.1:PORT/master`, what REDIS_URL takes. */
  url: string;
  /** Where the sentinel says the master is now. */
  masterAddress(): Promise<string>;
  /** Asks the sentinel to promote the replica now (`SENTINEL FAILOVER`) and waits until it names the new master. */
  failover(timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startSentinel(masterPort: number, master = 'es-master'): Promise<Sentinel> {
  const name = instanceName('sentinel');
  const dir = path.join(runDir(), name);
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = path.join(dir, 'sentinel.conf');
  // The sentinel rewrites its file as it learns the topology; a file of its own per instance.
  fs.writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      'daemonize no',
      `dir ${dir}`,
      `sentinel monitor ${master} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${master} 1000`,
      `sentinel failover-timeout ${master} 10000`,
      `sentinel parallel-syncs ${master} 1`,
      '',
    ].join('\n'),
  );
  const proc = new GroupProcess(name, path.join(dir, 'sentinel.log'));
  proc.spawn(process.env.REDIS_SERVER_BIN ?? 'redis-server', [conf, '--sentinel']);
  const ask = async (...args: string[]): Promise<unknown> => {
    const c = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 1_000,
      commandTimeout: 2_000,
    });
    try {
      await c.connect();
      return await c.call('SENTINEL', ...args);
    } finally {
      c.disconnect();
    }
  };
  const masterAddress = async () => ((await ask('get-master-addr-by-name', master)) as string[]).join(':');
  await waitFor(
    `the sentinel on ${port} to watch ${master}`,
    async () => {
      if (!proc.running) throw new Error(proc.describeExit());
      try {
        const replicas = (await ask('replicas', master)) as unknown[];
        return (await masterAddress()) === `127.0.0.1:${masterPort}` && replicas.length > 0;
      } catch {
        return undefined;
      }
    },
    20_000,
    100,
  );
  return {
    port,
    master,
    url: `redis+sentinel://127.0.0.1:${port}/${master}`,
    masterAddress,
    async failover(timeoutMs = 20_000) {
      const before = await masterAddress();
      await ask('failover', master);
      return waitFor(
        `the sentinel to name a new master (was ${before})`,
        async () => {
          const now = await masterAddress().catch(() => before);
          return now !== before ? now : undefined;
        },
        timeoutMs,
        100,
      );
    },
    async stop() {
      await proc.stop();
      await waitPortClosed(port, name);
    },
  };
}
