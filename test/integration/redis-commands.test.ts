import { Redis } from 'ioredis';
import { commandIdOf } from '../helpers/commands';
import { testEnv } from '../../support/env';
import { startRedis, type RedisServer } from '../../support/infra';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { temporalClient, waitForAccountWorkflowToHoldCommand, type TemporalView } from '../helpers/temporal';

/**
 * The Redis work of one signal on its own path, counted by Redis itself (INFO commandstats: a script's own calls count
 * too): from the webhook's POST to the account workflow holding the command, i.e. authentication, limiters, the
 * idempotency window, numbering, the record of the start, the queued command, the start's end and the adoption. A
 * bridge's long-polls and presence are not on it (none is connected), nor the report. The figure is stable: the same
 * code sends the same commands; the bound is the one the acceptance path is held to. The door's reading and the
 * starter's sweep run meanwhile (a few commands a second): they are counted, so the bound holds with them.
 */
const SIGNALS = 10;
const MAX_COMMANDS_PER_SIGNAL = 60;

const totalCalls = async (redis: Redis): Promise<number> =>
  (await redis.info('commandstats'))
    .split('\n')
    .flatMap((line) => {
      const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
      return m && m[1] !== 'info' ? [Number(m[2])] : [];
    })
    .reduce((a, b) => a + b, 0);

describe('Redis commands per signal on the signal path', () => {
  let redisServer: RedisServer;
  let stack: Stack;
  let f: Fixture;
  let temporal: TemporalView;
  let redis: Redis;
  beforeAll(async () => {
    // A Redis of its own: the count is of this stack's work only.
    redisServer = await startRedis();
    redis = new Redis(redisServer.url);
    stack = await startStack({ env: { REDIS_URL: redisServer.url } });
    f = await seedOwner(stack.registry, [{}]);
    temporal = await temporalClient({ address: testEnv().temporalAddress });
  });
  afterAll(async () => {
    redis?.disconnect();
    await temporal?.close();
    await stack?.stop();
    await redisServer?.stop();
  });

  test.each([
    ['a keyed buy', true],
    ['a buy without a key', false],
  ])(`when ${SIGNALS} × %s are accepted and adopted, then each costs at most ${MAX_COMMANDS_PER_SIGNAL} Redis commands`, async (what, keyed) => {
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const send = async (i: number) => {
      const res = await post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 }, keyed ? { 'x-idempotency-key': `rc-${i}` } : {});
      expect(res.status).toBe(202);
      await waitForAccountWorkflowToHoldCommand(temporal.client, commandIdOf(res.body.signalId as string, f.accounts[0]!.id), 30_000);
    };
    await send(-1); // the first signal also fills the process's caches (scripts loaded, the account read)
    const before = await totalCalls(redis);
    for (let i = 0; i < SIGNALS; i++) await send(i);
    const perSignal = ((await totalCalls(redis)) - before) / SIGNALS;
    console.log(`[redis] ${what}: ${perSignal.toFixed(1)} Redis commands per signal on the signal path`);
    expect(perSignal).toBeGreaterThan(10);
    expect(perSignal).toBeLessThanOrEqual(MAX_COMMANDS_PER_SIGNAL);
  });
});
