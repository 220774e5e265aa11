import Redis from 'ioredis';
import { startRedis, waitFor, type RedisServer } from '../../support/infra';
import { ensureBuilt, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import { startSentinel, type Sentinel } from '../helpers/redis-sentinel';
import {
  buysAcrossAFault,
  expectEachAcceptedFilledOnce,
  httpPost,
  importRegistry,
  makeRegistry,
  retryUntilAccepted,
  scenarioFiles,
  tally,
  type BuyMeta,
} from './kit';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * Fault injection: Redis fails over while signals flow. A master and a replica (both with their append-only files) and
 * a Sentinel; the ingress, the worker and the admin CLI reach Redis only through the Sentinel
 * (`REDIS_URL=redis+sentinel://…`). Mid-load the Sentinel promotes the replica; the old master becomes a replica of the
 * new one. Every signal that got a 202 must be executed once and reported filled; nothing else than 202 or 503 is
 * ever answered. Replication is asynchronous: the failover comes at a moment when the replica holds every write the
 * master acknowledged (what the test checks is what the service does across a failover, not the length of the
 * replication window, which docs/deployment.md states).
 */

const BEFORE_FAILOVER = 12;
const AFTER_FAILOVER = 12;
const MAX_REQUESTS = 300;
const LOAD_DEADLINE_MS = 120_000;
const SETTLE_DEADLINE_MS = 120_000;

const reg = makeRegistry('rfail', 2);
const ids = reg.accounts.map((a) => a.id);

type Meta = BuyMeta;

async function info(port: number, section: string, field: string): Promise<string | undefined> {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 2_000, lazyConnect: true });
  try {
    await c.connect();
    return new RegExp(`${field}:(\\S+)`).exec(await c.info(section))?.[1];
  } finally {
    c.disconnect();
  }
}

async function replicationOffset(port: number, field: 'master_repl_offset' | 'slave_repl_offset'): Promise<number> {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 2_000, lazyConnect: true });
  try {
    await c.connect();
    const info = await c.info('replication');
    return Number(new RegExp(`${field}:(\\d+)`).exec(info)?.[1] ?? -1);
  } finally {
    c.disconnect();
  }
}

/** Each server's view of the accounts' ordering: counter, highest handed out, pending marks, queue length. */
async function orderingState(ports: number[], accountIds: string[]): Promise<string> {
  const lines: string[] = [];
  for (const port of ports) {
    const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 2_000, lazyConnect: true });
    try {
      await c.connect();
      const role = /role:(\S+)/.exec(await c.info('replication'))?.[1];
      for (const acc of accountIds) {
        const [seq, handed, marks, queued] = await Promise.all([
          c.get(bridgeKeys.sequence(acc)),
          c.get(bridgeKeys.handedOutSeq(acc)),
          c.zrange(bridgeKeys.pendingMarks(acc), 0, 4),
          c.zcard(bridgeKeys.commandQueue(acc)),
        ]);
        lines.push(`redis :${port} (${role}) ${acc}: seq ${seq}, handed out ${handed}, marks [${marks.join(' ')}], queued ${queued}`);
      }
    } catch (err) {
      lines.push(`redis :${port}: ${(err as Error).message}`);
    } finally {
      c.disconnect();
    }
  }
  return lines.join('\n');
}

describe('Redis fails over to its replica through Sentinel mid-load', () => {
  let master: RedisServer | undefined;
  let replica: RedisServer | undefined;
  let sentinel: Sentinel | undefined;
  let stack: ProcessStack | undefined;
  let ledgerFile: string;

  beforeAll(async () => {
    ensureBuilt();
    const files = scenarioFiles(reg);
    ledgerFile = files.ledgerFile;
    master = await startRedis({ durable: true });
    replica = await startRedis({ durable: true, args: ['--replicaof', '127.0.0.1', String(master.port)] });
    sentinel = await startSentinel(master.port);
    // A queued command and a new sequence number count once the replica holds them (REDIS_MIN_REPLICAS_ACK): what
    // the old master takes after the promotion is lost when it follows the new one.
    const env = { REDIS_URL: sentinel.url, REDIS_MIN_REPLICAS_ACK: '1' };
    await importRegistry(files.registryFile, serviceEnv(env));
    stack = await startProcessStack({ registryFile: files.registryFile, ledgerFile, env, bridgeArgs: ['--wait-ms', '2000'] });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await sentinel?.stop();
    await replica?.stop();
    await master?.stop();
  });

  test(
    `when the Sentinel promotes the replica after ${BEFORE_FAILOVER} accepted signals while the load goes on, ` +
      'then every accepted signal is executed exactly once and reported filled, and the service answered only 202 or 503',
    async () => {
      const describeAll = () =>
        stack!
          .all()
          .map((p) => p.describe())
          .join('\n');
      const buy = (m: Meta) => ({ secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01, idempotencyKey: m.key });
      const send = (m: Meta) => httpPost(`${stack!.ingress.url}/webhook/custom/${m.accountId}`, buy(m));
      const failover: { at?: number; done?: number; newMaster?: string; commandsAtFailover?: number } = {};
      const failOver = async () => {
        await waitFor(
          'the replica to hold every write the master acknowledged',
          async () => (await replicationOffset(replica!.port, 'slave_repl_offset')) >= (await replicationOffset(master!.port, 'master_repl_offset')),
          10_000,
          10,
        );
        failover.at = Date.now();
        failover.newMaster = await sentinel!.failover();
        failover.done = Date.now();
        failover.commandsAtFailover = Number(await info(replica!.port, 'stats', 'total_commands_processed'));
      };

      const { answers } = await buysAcrossAFault({
        accountIds: ids,
        tag: reg.tag,
        ledgerFile,
        send,
        before: BEFORE_FAILOVER,
        after: AFTER_FAILOVER,
        maxRequests: MAX_REQUESTS,
        deadlineMs: LOAD_DEADLINE_MS,
        fault: failOver,
      });
      expect(failover.newMaster).toBe(`127.0.0.1:${replica!.port}`);

      const retried = await retryUntilAccepted(answers, (r) => send(r.meta), { attempts: 20, deadlineMs: 60_000 });
      const final = answers.map((a) => retried.get(a.index) ?? a);
      expect(final.filter((a) => a.status !== 202).map((a) => ({ index: a.index, status: a.status, body: a.body }))).toEqual([]);
      expect(Object.keys(tally(answers, (a) => a.status)).every((s) => s === '202' || s === '503')).toBe(true);

      const { signals, orders, overtaken } = await expectEachAcceptedFilledOnce({
        final,
        ledgerFile,
        ingressUrl: () => stack!.ingress.url,
        token: reg.token,
        deadlineMs: SETTLE_DEADLINE_MS,
        describe: describeAll,
        // Redis away between a signal's start and the confirmation of its place in the account's order, longer than
        // that place is held: a later signal may go first, and this one is then refused, never ordered (seen once in
        // CI, 2026-11-28: Redis was out 15 s for the ingress; test/fault/cluster-faults.test.ts allows the same).
        overtakenAllowed: true,
      }).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}\n${await orderingState([master!.port, replica!.port], ids)}`);
      });
      for (const p of stack!.all()) expect({ name: p.name, running: p.running, spawns: p.spawns }).toEqual({ name: p.name, running: true, spawns: 1 });
      // The roles swapped, and the service's work after the failover went to the new master.
      expect(await info(replica!.port, 'replication', 'role')).toBe('master');
      await waitFor('the old master to follow the new one', async () => (await info(master!.port, 'replication', 'role')) === 'slave', 20_000);
      const commandsSince = Number(await info(replica!.port, 'stats', 'total_commands_processed')) - failover.commandsAtFailover!;
      expect(commandsSince).toBeGreaterThan(AFTER_FAILOVER * 5);
      console.log(
        `[fault] Redis failover through Sentinel mid-load: ${answers.length} requests ${JSON.stringify(tally(answers, (a) => a.status))}, ` +
          `${retried.size} refusals retried; new master named after ${failover.done! - failover.at!} ms and given ${commandsSince} commands since; ${signals.length} accepted signals, ${orders.size} orders, ${overtaken} refused signal_overtaken (never ordered), 0 lost, 0 doubled`,
      );
    },
    300_000,
  );
});
