import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import { RedisCommandQueue } from '../../src/bridge/queue';
import { startIngress, type Ingress } from '../../src/server';
import { startRedis, waitFor, type RedisServer } from '../../support/infra';
import { buyCommand, commandQueue } from '../helpers/commands';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { bridgeKeys } from '../../src/redis-keys';
import { LONGEST_POLL_MS, expectWokenBeforeItsEnd } from '../helpers/long-poll';

/**
 * Bridge long-polls (issue 12 item 6): one live long-poll per account (the newest wins, the older answers at once
 * with `superseded: true`), a per-token limiter on the bridge routes, and waiting polls that cost Redis nothing: they
 * wake on an announcement (a command queued, a pending mark released) or at the instant a held command becomes due.
 */

const command = (accountId: string, seq: number, deadlineMs: number) => buyCommand(accountId, seq, deadlineMs, 'sig-lp');

interface PollAnswer {
  status: number;
  body: any;
  retryAfter: string | null;
  /** performance.now() when the poll was sent: which polls were waiting when something happened. */
  sentAt: number;
  ms: number;
}

async function longPoll(baseUrl: string, token: string, waitMs: number, signal?: AbortSignal): Promise<PollAnswer> {
  const sentAt = performance.now();
  const res = await fetch(`${baseUrl}/bridge/v1/commands?waitMs=${waitMs}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: signal ?? AbortSignal.timeout(waitMs + 10_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, retryAfter: res.headers.get('retry-after'), sentAt, ms: performance.now() - sentAt };
}

async function commandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(info)![1]);
}

describe('300 concurrent long-polls with one bridge token, against a Redis of their own', () => {
  let redisServer: RedisServer;
  let stack: Stack;
  let f: Fixture;
  beforeAll(async () => {
    redisServer = await startRedis();
    // The service's own bridge limit (600 a minute per token); the connection cap is lifted so that all 300 polls
    // from this one test process reach the route (the per-IP cap is tested in slow-bodies.test.ts). The door
    // reads the pending starts and Redis's memory every 250 ms by default (3 commands, 12 a second, whatever the polls
    // do): read every 5 s here, it is under 1 a second, so what is measured is the polls' own cost.
    stack = await startStack({
      worker: false,
      env: { REDIS_URL: redisServer.url, MAX_CONNECTIONS_PER_IP: '1000' },
      tuning: { bridge: { limit: { max: 600 } }, door: { refreshMs: 5000 } },
    });
    f = await seedOwner(stack.registry);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await redisServer?.stop();
  });

  test('when 300 long-polls with one token loop, then Redis is nearly idle, one poll is live, the rest are superseded or limited (429), and a queued command reaches the live poll at once', async () => {
    const { id: accountId, bridgeToken } = f.accounts[0]!;
    const stop = new AbortController();
    const answers: PollAnswer[] = [];
    let backingOff = 0;
    const errors: string[] = [];
    // Each loop behaves like a bridge: poll again when answered; after a 429, wait what Retry-After says.
    const loops = Array.from({ length: 300 }, async () => {
      while (!stop.signal.aborted) {
        try {
          const a = await longPoll(stack.ingress.url, bridgeToken, LONGEST_POLL_MS, stop.signal);
          answers.push(a);
          if (a.status === 429) {
            backingOff++;
            await delay(Number(a.retryAfter ?? 1) * 1000, undefined, { signal: stop.signal }).finally(() => backingOff--);
          }
        } catch (err) {
          if (!stop.signal.aborted) errors.push(String(err));
          return;
        }
      }
    });
    const own = new Redis(redisServer.url);
    try {
      // The steady state: one poll live, every other loop told to come back later. Then measure over 5 s.
      await waitFor(
        '299 loops to back off after a 429',
        async () => {
          if (errors.length > 0) throw new Error(`a poll failed: ${errors[0]}`);
          return backingOff === 299;
        },
        60_000,
      ).catch((err: Error) => {
        const statuses = JSON.stringify(
          answers.reduce<Record<string, number>>(
            (m, a) => ((m[`${a.status}${a.body?.superseded ? 's' : ''}`] = (m[`${a.status}${a.body?.superseded ? 's' : ''}`] ?? 0) + 1), m),
            {},
          ),
        );
        throw new Error(`${err.message}; backing off ${backingOff}, answers ${statuses}`);
      });
      const before = await commandsProcessed(own);
      const t0 = performance.now();
      await delay(5_000);
      const perSecond = ((await commandsProcessed(own)) - before - 1) / ((performance.now() - t0) / 1000);
      const instantaneous = Number(/instantaneous_ops_per_sec:(\d+)/.exec(await own.info('stats'))![1]);

      console.log(
        `300 long-polls, one token: Redis ${perSecond.toFixed(1)} commands/s over 5 s (instantaneous_ops_per_sec ${instantaneous}); ` +
          `answers so far: ${answers.length} (superseded ${answers.filter((a) => a.body?.superseded).length}, 429 ${answers.filter((a) => a.status === 429).length})`,
      );

      // A command queued now reaches the one live poll at once (wake-up on publish).
      const [seq] = (await new RedisAccountSequencer(own).next([{ accountId, deadlineMs: Date.now() + 60_000 }])).map((n) => n.seq);
      const countBefore = answers.length;
      const queued = performance.now();
      await commandQueue(own).enqueue(command(accountId, seq!, Date.now() + 60_000));
      const delivered = await waitFor(
        'the queued command to reach a poll',
        async () => answers.slice(countBefore).find((a) => a.body?.commands?.length > 0),
        5_000,
        10,
      );
      const deliveredMs = performance.now() - queued;

      console.log(`queued command delivered after ${deliveredMs.toFixed(0)} ms`);

      // The door's reading (under 1 a second), and nothing from 300 looping polls (before the fix: 1,200 a second).
      expect(perSecond).toBeLessThan(5);
      expect(delivered.body.commands.map((c: BridgeCommand) => c.seq)).toEqual([seq]);
      // Handed out by the poll that was waiting when it was queued (woken by the publish), not by a later poll
      // after that one had waited out its 25 s.
      expect(delivered.sentAt).toBeLessThan(queued);
      expect(answers.filter((a) => a.body?.superseded === true).length).toBeGreaterThan(0);
      const limited = answers.filter((a) => a.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      expect(limited[0]!.body).toEqual({ error: 'Rate limit exceeded', limit: 600, windowMs: 60_000 });
      // Every other answer is a 200: superseded (empty) or the command.
      expect(answers.filter((a) => a.status !== 429 && a.status !== 200)).toEqual([]);
    } finally {
      stop.abort();
      await Promise.all(loops);
      own.disconnect();
    }
  }, 90_000);
});

describe('one live long-poll per account, woken on announcements', () => {
  let stack: Stack;
  let second: Ingress;
  let f: Fixture;
  let sequencer: RedisAccountSequencer;
  let queue: RedisCommandQueue;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
    second = await startIngress(stack.config);
    f = await seedOwner(stack.registry, [{}, {}, {}, {}, {}]);
    sequencer = new RedisAccountSequencer(stack.redis);
    queue = commandQueue(stack.redis);
  });
  afterAll(async () => {
    await queue?.close();
    await second?.close();
    await stack?.stop();
  });

  test('when a second long-poll of the account arrives (at another ingress), then the first answers at once with no commands and superseded; the second gets the next command', async () => {
    const { id: accountId, bridgeToken } = f.accounts[0]!;
    const first = longPoll(stack.ingress.url, bridgeToken, LONGEST_POLL_MS);
    // The first poll is waiting once the account's poll counter has counted it.
    await waitFor('the first poll to wait', async () => Number(await stack.redis.get(bridgeKeys.longPollGeneration(accountId))) >= 1, 5_000);
    const secondPoll = longPoll(second.url, bridgeToken, LONGEST_POLL_MS);
    const a = await first;
    expect({ status: a.status, commands: a.body.commands, superseded: a.body.superseded }).toEqual({ status: 200, commands: [], superseded: true });
    expectWokenBeforeItsEnd(a.ms);

    await waitFor('the second poll to wait', async () => Number(await stack.redis.get(bridgeKeys.longPollGeneration(accountId))) >= 2, 5_000);
    const [seq] = (await sequencer.next([{ accountId, deadlineMs: Date.now() + 60_000 }])).map((n) => n.seq);
    await queue.enqueue(command(accountId, seq!, Date.now() + 60_000));
    const b = await secondPoll;
    expect(b.body.commands.map((c: BridgeCommand) => c.seq)).toEqual([seq]);
    expect(b.body.superseded).toBeUndefined();
    expectWokenBeforeItsEnd(b.ms);
  });

  test("when a command is held behind a pending mark, then the waiting poll gets it when the mark lapses (not before, not at the poll's end)", async () => {
    const { id: accountId, bridgeToken } = f.accounts[1]!;
    const lapse = Date.now() + 1_500;
    const [held] = (await sequencer.next([{ accountId, deadlineMs: lapse }])).map((n) => n.seq);
    const [next] = (await sequencer.next([{ accountId, deadlineMs: Date.now() + 60_000 }])).map((n) => n.seq);
    await queue.enqueue(command(accountId, next!, Date.now() + 60_000));
    const a = await longPoll(stack.ingress.url, bridgeToken, LONGEST_POLL_MS);
    const deliveredAt = Date.now();
    expect(a.body.commands.map((c: BridgeCommand) => c.seq)).toEqual([next]);
    expect(held).toBeLessThan(next!);
    expect(deliveredAt).toBeGreaterThanOrEqual(lapse);
    expectWokenBeforeItsEnd(a.ms);
  });

  test('when the pending mark a command waits behind is released (or shortened), then the waiting poll gets it at once', async () => {
    for (const [i, how] of [
      [2, 'release'],
      [3, 'retime'],
    ] as const) {
      const { id: accountId, bridgeToken } = f.accounts[i]!;
      const far = Date.now() + 60_000;
      const [held] = (await sequencer.next([{ accountId, deadlineMs: far }])).map((n) => n.seq);
      const [next] = (await sequencer.next([{ accountId, deadlineMs: far }])).map((n) => n.seq);
      await queue.enqueue(command(accountId, next!, far));
      const poll = longPoll(stack.ingress.url, bridgeToken, LONGEST_POLL_MS);
      await waitFor('the poll to wait', async () => Number(await stack.redis.get(bridgeKeys.longPollGeneration(accountId))) >= 1, 5_000);
      if (how === 'release') await sequencer.release(accountId, held!, far);
      else await sequencer.retime([{ accountId, seq: held!, fromMs: far, toMs: Date.now() - 1 }]);
      const a = await poll;
      expect(a.body.commands.map((c: BridgeCommand) => c.seq)).toEqual([next]);
      expectWokenBeforeItsEnd(a.ms);
    }
  });

  test("when a handed-out command goes unreported, then a waiting poll gets it again at its redelivery time, not at the poll's end", async () => {
    const accountId = f.accounts[0]!.id;
    const quick = new RedisCommandQueue(stack.redis, { redeliverAfterMs: 1_000 });
    try {
      const [seq] = (await sequencer.next([{ accountId, deadlineMs: Date.now() + 60_000 }])).map((n) => n.seq);
      await quick.enqueue(command(accountId, seq!, Date.now() + 60_000));
      const handedOut = Date.now();
      expect((await quick.take(accountId, 10)).map((c) => c.seq)).toContain(seq);
      const again = await quick.takeOrWait(accountId, 10, LONGEST_POLL_MS, new AbortController().signal);
      expect(again.commands.map((c) => c.seq)).toContain(seq);
      expect(Date.now() - handedOut).toBeGreaterThanOrEqual(1_000);
      expectWokenBeforeItsEnd(Date.now() - handedOut);
    } finally {
      await quick.close();
    }
  });

  test('when a signal is accepted, then its command is on the queue before the 202 and no pending mark is left (dispatch at acceptance)', async () => {
    const accountId = f.accounts[3]!.id;
    const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
    expect(res.status).toBe(202);
    expect(await stack.redis.zrange(bridgeKeys.commandQueue(accountId), 0, -1)).toContain(`signal/${res.body.signalId as string}/account/${accountId}`);
    expect(await stack.redis.zrange(bridgeKeys.pendingMarks(accountId), 0, -1)).toEqual([]);
  });

  test("when the enqueue at acceptance fails, then the signal's number holds the account's later commands until the command's deadline (the start confirmed), not only for the start lease", async () => {
    // Redis refused the ingress's enqueue: the account workflow queues the command when it runs, and meanwhile the
    // number keeps the account's later commands behind it.
    const refusing = await startStack({
      worker: false,
      seams: {
        dispatchFaults: {
          beforeEnqueue: () => {
            throw new Error('enqueue refused (test)');
          },
        },
      },
    });
    try {
      const accountId = f.accounts[4]!.id;
      const before = Date.now();
      const res = await post(`${refusing.ingress.url}/webhook/custom/${accountId}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
      expect(res.status).toBe(202);
      expect(await stack.redis.zrange(bridgeKeys.commandQueue(accountId), 0, -1)).toEqual([]);
      const marks = await stack.redis.zrange(bridgeKeys.pendingMarks(accountId), 0, -1);
      expect(marks).toHaveLength(1);
      const lapsesAt = Number(marks[0]!.split(':')[1]);
      // A market entry's deadline: its acceptance plus the default max signal age (30 s); the lease would end within
      // the Temporal budget (3 s) and 5 s.
      expect(lapsesAt).toBeGreaterThanOrEqual(before + 30_000);
      expect(lapsesAt).toBeLessThanOrEqual(Date.now() + 30_000);
    } finally {
      await refusing.stop();
    }
  });

  test('when a token is unknown, then 401 and no limiter counter is created for it', async () => {
    const before = await stack.redis.keys(`${stack.config.limits.keyPrefix}bridge:*`);
    const a = await longPoll(stack.ingress.url, 'brg_unknown-token-000000000000000000000000', 0);
    expect(a.status).toBe(401);
    expect(await stack.redis.keys(`${stack.config.limits.keyPrefix}bridge:*`)).toEqual(before);
  });
});
