import { Redis } from 'ioredis';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import { buyCommand, commandQueue } from '../helpers/commands';
import { startRedis, waitFor, type RedisServer } from '../../support/infra';
import { post, seedOwner, startStack } from '../helpers/stack';
import { bridgeKeys, signalKeys } from '../../src/redis-keys';

/**
 * REDIS_MIN_REPLICAS_ACK: with replicas, a queued command and a new sequence number count only once a replica holds
 * them (Redis WAIT), so a failover cannot drop them with the old master (test/fault/redis-failover.test.ts). Without
 * the replica the write is not acknowledged: the worker's enqueue fails (Temporal retries it) and the ingress refuses
 * new signals (503), never a 202 it might not keep.
 */
describe('writes that count only once a replica holds them (real master and replica)', () => {
  let master: RedisServer;
  let replica: RedisServer | undefined;
  let redis: Redis;
  const ack = { min: 1, timeoutMs: 1_000 };

  beforeAll(async () => {
    master = await startRedis();
    replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
    redis = new Redis(master.url);
    await waitFor('the replica to be in sync', async () => /slave0:.*state=online/.test(await redis.info('replication')), 10_000);
  });
  afterAll(async () => {
    redis?.disconnect();
    await replica?.stop();
    await master?.stop();
  });

  const command = (accountId: string, seq: number) => buyCommand(accountId, seq, Date.now() + 60_000, 'sig-ack');

  test('when the replica is connected, then numbering and queueing succeed and the replica holds both', async () => {
    const sequencer = new RedisAccountSequencer(redis, ack);
    const queue = commandQueue(redis, ack);
    try {
      const [seq] = (await sequencer.next([{ accountId: 'acc-ack-1', deadlineMs: Date.now() + 60_000 }])).map((n) => n.seq);
      expect(await queue.enqueue(command('acc-ack-1', seq!))).toBe('queued');
      const onReplica = new Redis(replica!.url);
      try {
        expect(await onReplica.get('es:seq:{acc-ack-1}')).toBe(String(seq));
        expect(await onReplica.zcard('es:bq:{acc-ack-1}')).toBe(1);
      } finally {
        onReplica.disconnect();
      }
    } finally {
      await queue.close();
    }
  });

  test('when the replica is gone, then a number and an enqueue are refused NOREPLICAS, and the ingress answers 503 to a new signal', async () => {
    await replica!.stop();
    await waitFor('the master to see no replica', async () => /connected_slaves:0/.test(await redis.info('replication')), 10_000);
    const sequencer = new RedisAccountSequencer(redis, ack);
    const queue = commandQueue(redis, ack);
    try {
      await expect(sequencer.next([{ accountId: 'acc-ack-2', deadlineMs: Date.now() + 60_000 }])).rejects.toThrow(/^NOREPLICAS 0 of 1/);
      await expect(queue.enqueue(command('acc-ack-2', 1))).rejects.toThrow(/^NOREPLICAS/);
    } finally {
      await queue.close();
    }
    const stack = await startStack({ worker: false, env: { REDIS_URL: master.url, REDIS_MIN_REPLICAS_ACK: '1' } });
    try {
      const f = await seedOwner(stack.registry);
      const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
      // Refused at the door, which reads the replicas the setting asks for: nothing of the signal is written (no
      // number, no record of its start, no command), so nothing is left for anybody to take back.
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'System under high load, retry later', backpressure: true });
      expect(res.headers.get('retry-after')).toBe('1');
      const starts = signalKeys.pendingStarts(stack.config.temporal.taskQueue);
      expect(await redis.exists(starts.accepted, starts.inputs, bridgeKeys.sequence(f.accounts[0]!.id), bridgeKeys.commandQueue(f.accounts[0]!.id))).toBe(0);
    } finally {
      await stack.stop();
    }
  });
});
