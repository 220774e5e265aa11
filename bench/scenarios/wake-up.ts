/**
 * Scenario 11, the bridge's long-poll wake-up on its own: a bridge waiting in `GET /bridge/v1/commands`, a command
 * queued through the queue API (RedisCommandQueue.enqueue, what the dispatch calls), and the time until the command
 * is in the bridge's hands. The bench is the bridge of an account no paper terminal serves (stack.probe).
 */
import { Redis } from 'ioredis';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import { bridgeKeys } from '../../src/redis-keys';
import { buyCommand, commandQueue } from '../../support/commands';
import { httpJson, log, StageError, withDeadline } from '../common';
import { round, summarize, type Summary } from '../stats';
import type { Context } from './context';

export interface WakeUpResult {
  rounds: number;
  /** enqueue called → the long-poll's answer with the command in the bridge's hands. */
  wakeUpMs: Summary;
  /** enqueue returned → the answer: the hand-out after the queue's own write. */
  afterEnqueueMs: Summary;
  /** The enqueue alone (one Lua script: queue, mark, announce). */
  enqueueMs: Summary;
}

/** What a new long-poll announces on the account's channel (src/bridge/queue.ts, NEW_POLL): it is waiting now. */
const NEW_POLL_PREFIX = 'poll:';

export async function runWakeUp(ctx: Context): Promise<void> {
  const { stack, plan, results, mark, measure } = ctx;
  mark('wakeUp');
  const { accountId, bridgeToken } = stack.probe;
  const auth = { authorization: `Bearer ${bridgeToken}` };
  log(`scenario 11 (long-poll wake-up): ${plan.wakeUps} commands queued for ${accountId} while the bench long-polls as its bridge`);
  const redis = new Redis(stack.redis.url, { connectionName: 'bench-wake-up', maxRetriesPerRequest: 1 });
  const subscriber = redis.duplicate();
  const queue = commandQueue(redis);
  const sequencer = new RedisAccountSequencer(redis);
  try {
    let announced: (() => void) | undefined;
    subscriber.on('message', (_channel: string, message: string) => {
      if (message.startsWith(NEW_POLL_PREFIX)) announced?.();
    });
    await subscriber.subscribe(bridgeKeys.wakeChannel(accountId));
    const hello = await httpJson(`${stack.ingress.url}/bridge/v1/hello`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ platform: 'mt5', bridgeVersion: '2.1.0' }),
    });
    if (hello.status !== 200) throw new StageError(`scenario 11: hello answered ${hello.status} ${JSON.stringify(hello.body)}`);

    results.wakeUp = await measure(
      'wakeUp',
      async () => {
        const wake: number[] = [];
        const after: number[] = [];
        const enqueue: number[] = [];
        for (let i = 0; i < plan.wakeUps; i++) {
          const waiting = new Promise<void>((resolve) => (announced = resolve));
          const poll = httpJson(`${stack.ingress.url}/bridge/v1/commands?waitMs=20000`, { headers: auth, timeoutMs: 30_000 });
          await withDeadline('the long-poll to be waiting', 10_000, () => waiting);
          const deadlineMs = Date.now() + 30_000;
          const [seq] = (await sequencer.next([{ accountId, deadlineMs }])).map((n) => n.seq);
          const command = buyCommand(accountId, seq!, deadlineMs, 'sig_bench');
          const t0 = performance.now();
          await queue.enqueue(command);
          const t1 = performance.now();
          const res = await poll;
          const t2 = performance.now();
          const ids = res.status === 200 ? ((res.body.commands ?? []) as { commandId: string }[]).map((c) => c.commandId) : [];
          if (!ids.includes(command.commandId))
            throw new StageError(`scenario 11: the long-poll answered ${res.status} without ${command.commandId}: ${JSON.stringify(res.body)}`);
          wake.push(round(t2 - t0, 2));
          after.push(round(t2 - t1, 2));
          enqueue.push(round(t1 - t0, 2));
          // Reported, so the queue holds nothing for the next round (no workflow behind this command to tell).
          await queue.recordReport(accountId, { commandId: command.commandId, status: 'done' });
        }
        return { rounds: wake.length, wakeUpMs: summarize(wake), afterEnqueueMs: summarize(after), enqueueMs: summarize(enqueue) };
      },
      (r) => r.rounds,
    );
    log(
      `long-poll wake-up: enqueue → in the bridge's hands p50 ${results.wakeUp.wakeUpMs.p50} ms, p99 ${results.wakeUp.wakeUpMs.p99} ms (the enqueue itself p50 ${results.wakeUp.enqueueMs.p50} ms)`,
    );
  } finally {
    await queue.close();
    subscriber.disconnect();
    redis.disconnect();
  }
}
