import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../support/infra';
import { seedOwner, startStack, type Stack } from '../helpers/stack';
import { closed, commandOf, opened, sendTrades, sigId } from '../helpers/trades';

/**
 * The trade journal's cost in Redis (docs/trades.md, "Cost"): used_memory before and after 1,000 trades, each opened by
 * a signal and closed, sent as a bridge sends them (100 events a call). The service runs on a Redis of its own here,
 * so the memory is this test's alone.
 */
describe('the trade journal in Redis', () => {
  let redisServer: RedisServer;
  let stack: Stack;
  let redis: Redis;

  beforeAll(async () => {
    redisServer = await startRedis();
    stack = await startStack({ worker: false, env: { REDIS_URL: redisServer.url } });
    redis = new Redis(redisServer.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await stack?.stop();
    await redisServer?.stop();
  });

  const memory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

  test('when 1,000 trades are opened and closed, then Redis holds them in under 2.5 MB', async () => {
    // Two accounts of 500 trades each: one account's 2,000 events would pass its 1,200 a minute
    // (TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE); the journal's cost per trade is the same on either.
    const f = await seedOwner(stack.registry, [{}, {}]);
    const start = Date.now() - 3_600_000;
    const eventsOf = (account: number) => {
      const id = f.accounts[account]!.id;
      return Array.from({ length: 500 }, (_, n) => {
        const i = account * 500 + n;
        const ticket = String(10_000_000 + i);
        return [
          opened(ticket, start + i * 1_000, { commandId: commandOf(sigId(), id), sl: 1.07, tp: 1.09 }),
          closed(ticket, start + i * 1_000 + 500, { commandId: commandOf(sigId(), id), cause: 'command' }),
        ];
      }).flat();
    };
    const before = await memory();
    for (const account of [0, 1]) {
      const events = eventsOf(account);
      for (let i = 0; i < events.length; i += 100) {
        const res = await sendTrades(stack.ingress.url, f.accounts[account]!.bridgeToken, { events: events.slice(i, i + 100) });
        expect(res.status).toBe(200);
        expect(res.body.events.every((e: { result: string }) => e.result === 'recorded')).toBe(true);
      }
    }
    const after = await memory();
    const perThousand = after - before;
    process.stdout.write(`trade journal: ${perThousand} bytes of Redis used_memory per 1,000 trades (open + close, linked to 2 signals each)\n`);
    expect(perThousand).toBeLessThan(2_500_000);
  });
});
