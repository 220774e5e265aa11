import { Cluster } from 'ioredis';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import { bridgeKeys } from '../../src/redis-keys';
import type { RedisCommandQueue } from '../../src/bridge/queue';
import { buyCommand, commandQueue } from '../helpers/commands';
import { startRedisCluster, type RedisClusterServers } from '../helpers/redis-cluster';
import { LONGEST_POLL_MS, expectWokenBeforeItsEnd } from '../helpers/long-poll';

/**
 * The bridge queue and the per-account ordering on a real Redis Cluster (three masters of Debian's redis-server): every
 * key of one account carries the account in a hash tag, so each account's scripts run on one slot, and accounts spread
 * over the nodes. What this does not cover: the registry, the limiters and the pending starts touch keys of several
 * accounts or owners at once, so the service as a whole does not run on a Redis Cluster (docs/cluster-profile.md).
 */
describe('the command queue and the per-account ordering on a real Redis Cluster', () => {
  let servers: RedisClusterServers;
  let cluster: Cluster;
  let sequencer: RedisAccountSequencer;
  let queue: RedisCommandQueue;
  const accounts = Array.from({ length: 12 }, (_, i) => `acc-cluster-${i}`);

  beforeAll(async () => {
    servers = await startRedisCluster(3);
    cluster = new Cluster(servers.startup, { redisOptions: { maxRetriesPerRequest: 2 } });
    sequencer = new RedisAccountSequencer(cluster);
    queue = commandQueue(cluster);
  }, 60_000);
  afterAll(async () => {
    await queue?.close();
    cluster?.disconnect();
    await servers?.stop();
  });

  /**
   * Resolves once the account's long-poll is waiting: Redis's own log of commands (MONITOR on every master) shows its
   * registration and then its first take, so a command queued after this can reach the poll only by a wake-up (or at
   * the poll's end), never by that first take.
   */
  async function pollWaiting(acc: string): Promise<{ waiting: Promise<void>; stop: () => void }> {
    const monitors = await Promise.all(cluster.nodes('master').map((n) => n.monitor()));
    let registered = false;
    const waiting = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the long-poll of ${acc} never made its first take`)), 10_000);
      for (const m of monitors)
        m.on('monitor', (_time: string, args: string[]) => {
          if (registered && args.includes(bridgeKeys.commandQueue(acc))) {
            clearTimeout(timer);
            resolve();
          } else if (args.includes(bridgeKeys.longPollGeneration(acc))) registered = true;
        });
    });
    return { waiting, stop: () => monitors.forEach((m) => m.disconnect()) };
  }

  test("when the accounts are spread over the nodes, then each account's keys are on one slot, and numbering many accounts at once works", async () => {
    // Redis's own word on each key's slot.
    const keySlot = async (k: string) => Number(await cluster.call('CLUSTER', 'KEYSLOT', k));
    const slotsOf = async (acc: string) =>
      new Set(
        await Promise.all(
          [
            bridgeKeys.sequence(acc),
            bridgeKeys.pendingMarks(acc),
            bridgeKeys.wakeChannel(acc),
            bridgeKeys.commandQueue(acc),
            bridgeKeys.commandRecord(acc, 'x'),
            bridgeKeys.handedOutSeq(acc),
          ].map(keySlot),
        ),
      );
    for (const acc of accounts) expect((await slotsOf(acc)).size).toBe(1);
    const nodesUsed = new Set(
      await Promise.all(accounts.map(async (acc) => nodeOf((await cluster.call('CLUSTER', 'KEYSLOT', bridgeKeys.sequence(acc))) as number))),
    );
    expect(nodesUsed.size).toBeGreaterThan(1);
    const far = Date.now() + 60_000;
    const numbers = (await sequencer.next(accounts.map((accountId) => ({ accountId, deadlineMs: far })))).map((n) => n.seq);
    // Each account got a number of its own counter (never below Redis's clock in ms: src/bridge/monotonic.ts).
    expect(numbers.every((n) => Number.isSafeInteger(n) && n >= far - 60_000 - 5_000)).toBe(true);
    // No command will come for these numbers: the tests below must not wait behind them.
    await Promise.all(accounts.map((acc, i) => sequencer.release(acc, numbers[i]!, far)));
  });

  test("when an account's commands are queued out of order, then a bridge is handed them in acceptance order; a waiting poll is woken across nodes; reports and withdrawals work", async () => {
    const far = Date.now() + 60_000;
    for (const acc of accounts.slice(0, 4)) {
      const [a] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
      const [b] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
      expect(await queue.enqueue(buyCommand(acc, b!, far, 'sig-cl'))).toBe('queued');
      expect(await queue.take(acc, 10)).toEqual([]);
      // A waiting long-poll (its subscriber on any node) is woken by the enqueue of the held command. It is waiting
      // (its first take found nothing due) before that enqueue is sent.
      const log = await pollWaiting(acc);
      const waiting = queue.takeOrWait(acc, 10, LONGEST_POLL_MS, new AbortController().signal);
      await log.waiting.finally(log.stop);
      const queuedAt = Date.now();
      expect(await queue.enqueue(buyCommand(acc, a!, far, 'sig-cl'))).toBe('queued');
      expect((await waiting).commands.map((c) => c.seq)).toEqual([a, b]);
      // Woken by the announcement, not at the poll's end.
      expectWokenBeforeItsEnd(Date.now() - queuedAt);
      const first = buyCommand(acc, a!, far, 'sig-cl');
      expect((await queue.recordReport(acc, { commandId: first.commandId, status: 'filled', ticket: 'T1' })).kind).toBe('first');
      expect(await queue.withdraw(acc, buyCommand(acc, b!, far, 'sig-cl').commandId, true)).toBe('delivered');
    }
  });

  test('when a number is released or retimed on a cluster, then later commands are not held', async () => {
    const far = Date.now() + 60_000;
    const [acc1, acc2] = accounts.slice(8, 10) as [string, string];
    const [[h1], [h2]] = await Promise.all([
      sequencer.next([{ accountId: acc1, deadlineMs: far }]).then((ns) => ns.map((n) => n.seq)),
      sequencer.next([{ accountId: acc2, deadlineMs: far }]).then((ns) => ns.map((n) => n.seq)),
    ]);
    const [[n1], [n2]] = await Promise.all([
      sequencer.next([{ accountId: acc1, deadlineMs: far }]).then((ns) => ns.map((n) => n.seq)),
      sequencer.next([{ accountId: acc2, deadlineMs: far }]).then((ns) => ns.map((n) => n.seq)),
    ]);
    await queue.enqueue(buyCommand(acc1, n1!, far, 'sig-cl2'));
    await queue.enqueue(buyCommand(acc2, n2!, far, 'sig-cl2'));
    await sequencer.release(acc1, h1!, far);
    await sequencer.retime([{ accountId: acc2, seq: h2!, fromMs: far, toMs: Date.now() - 1 }]);
    expect((await queue.take(acc1, 10)).map((c) => c.seq)).toEqual([n1]);
    expect((await queue.take(acc2, 10)).map((c) => c.seq)).toEqual([n2]);
  });

  async function nodeOf(keySlot: number): Promise<string> {
    const slots = (await cluster.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const owner = slots.find(([from, to]) => keySlot >= from && keySlot <= to);
    return owner ? `${owner[2][0]}:${owner[2][1]}` : 'none';
  }
});
