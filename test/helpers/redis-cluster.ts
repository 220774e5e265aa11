import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, startRedis, waitFor, type RedisServer } from '../../support/infra';

const run = promisify(execFile);

export interface RedisClusterServers {
  nodes: RedisServer[];
  /** host:port of every master, for `new Cluster([...])`. */
  startup: { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * A real Redis Cluster of `masters` redis-servers (Debian's, in cluster mode) on free loopback ports, each with its own
 * cluster bus port (`cluster-port`), the slots spread by `redis-cli --cluster create`; ready once every node says
 * `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterServers> {
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      const bus = await freePort();
      nodes.push(
        await startRedis({
          args: ['--cluster-enabled', 'yes', '--cluster-port', String(bus), '--cluster-config-file', `nodes-${bus}.conf`, '--cluster-node-timeout', '2000'],
        }),
      );
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
    });
    for (const n of nodes) {
      const c = new Redis({ host: '127.0.0.1', port: n.port, lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await c.connect();
        await waitFor(`node :${n.port} to see the cluster ok`, async () => /cluster_state:ok/.test(String(await c.call('CLUSTER', 'INFO'))), 20_000, 100);
      } finally {
        c.disconnect();
      }
    }
  } catch (err) {
    await Promise.allSettled(nodes.map((n) => n.stop()));
    throw err;
  }
  return {
    nodes,
    startup: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    async stop() {
      await Promise.allSettled(nodes.map((n) => n.stop()));
    },
  };
}
