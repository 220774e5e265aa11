import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../support/infra';
import { ensureBuilt, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import { reportedStatus } from '../helpers/poll';
import { httpPost, importRegistry, makeRegistry, ordersByCommand, redisClient, scenarioFiles } from './kit';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * Redis loses every key (FLUSHALL: a restart without persistence, a failover to an empty replica) while paper bridges
 * are connected with real long-polls; the operator re-imports the registry, nothing else is touched. Every counter the
 * service compares with a number it remembers (a long-poll's generation, the account's sequence numbers) restarts in
 * Redis: numbered from a remembered value, a new long-poll was "older" than the last one the ingress saw and was
 * superseded at once, the bridge backed off up to 30 s, and buys took seconds or were not filled (docs/reliability.md).
 * After the flush, one buy at a time must fill as fast as before it, and the bridge must not be told it is superseded.
 */
const reg = makeRegistry('rflush', 2, { platform: 'mt5' });
const BEFORE = 4;
const AFTER = 8;
const PACE_MS = 2_500;

/** 202 → the poll shows it filled, one signal at a time; the poll is read every 25 ms. */
async function buyAndTimeFill(ingressUrl: string, accountId: string): Promise<{ ms: number; signalId: string }> {
  const sentAt = Date.now();
  const res = await httpPost(`${ingressUrl}/webhook/custom/${accountId}`, { secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
  expect(res.status).toBe(202);
  const signalId = String(res.body.signalId);
  const status = await reportedStatus(ingressUrl, reg.token, signalId, { deadlineMs: 20_000, intervalMs: 25 });
  const filledAt = Date.now();
  if (status.accounts[0]?.outcome !== 'filled') throw new Error(`signal ${signalId} ended ${JSON.stringify(status)}`);
  return { ms: filledAt - sentAt, signalId };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('when Redis loses its data under connected bridges and the registry is re-imported', () => {
  let redis: RedisServer;
  let stack: ProcessStack;
  let reader: Redis;
  let registryFile: string;
  let ledgerFile: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    ensureBuilt();
    ({ registryFile, ledgerFile } = scenarioFiles(reg));
    redis = await startRedis();
    env = serviceEnv({ REDIS_URL: redis.url });
    await importRegistry(registryFile, env);
    // The bridge's own long-poll length (as a real bridge runs): a superseded poll is what the flush used to cause.
    stack = await startProcessStack({ registryFile, ledgerFile, env: { REDIS_URL: redis.url } });
    reader = redisClient(redis.url);
  }, 120_000);

  afterAll(async () => {
    reader?.disconnect();
    await stack?.stop();
    await redis?.stop();
  });

  const superseded = () => [...stack.bridge.jsonLines('stdout'), ...stack.bridge.jsonLines('stderr')].filter((l) => l.event === 'poll_superseded').length;

  test('then the next buys fill as fast as before, each once, and no long-poll is superseded', async () => {
    const url = stack.ingress.url;
    // A bridge connected for a while has had its long-polls numbered far past 1 (one a poll's length, a command, or a
    // reconnect): as if each had made 1,000 polls already. The buys below number the next ones, which the ingress
    // remembers.
    for (const a of reg.accounts) await reader.set(bridgeKeys.longPollGeneration(a.id), '1000', 'PX', 3_600_000);
    const before: number[] = [];
    for (let i = 0; i < BEFORE; i++) before.push((await buyAndTimeFill(url, reg.accounts[i % 2]!.id)).ms);
    const supersededBefore = superseded();

    expect(await reader.flushall()).toBe('OK');
    await importRegistry(registryFile, env);

    // One buy every PACE_MS, as a trader's alerts come: a bridge backing off after superseded polls (up to 30 s) is
    // caught between two of them.
    const flushedAt = Date.now();
    const after: { ms: number; signalId: string }[] = [];
    for (let i = 0; i < AFTER; i++) {
      await delay(Math.max(0, flushedAt + i * PACE_MS - Date.now()));
      after.push(await buyAndTimeFill(url, reg.accounts[i % 2]!.id));
    }
    const ms = after.map((a) => a.ms);
    process.stdout.write(`redis-flush-bridges: 202 -> filled before ${JSON.stringify(before)} ms, after ${JSON.stringify(ms)} ms\n`);

    // "As fast as before": every buy after the flush within a bound set by the ones before it (with room for a loaded
    // machine), never the 1.5-21 s of a bridge backing off.
    const bound = Math.max(1_500, 4 * median(before));
    expect(ms.filter((x) => x > bound)).toEqual([]);
    expect(superseded() - supersededBefore).toBe(0);
    // Each signal placed exactly one order.
    const orders = ordersByCommand(ledgerFile);
    for (const { signalId } of after) {
      const ids = [...orders.keys()].filter((id) => id.startsWith(`signal/${signalId}/`));
      expect(ids.map((id) => orders.get(id)!.length)).toEqual([1]);
    }
  }, 240_000);
});
