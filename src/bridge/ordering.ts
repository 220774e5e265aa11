import type { Redis } from 'ioredis';

/**
 * Per-account acceptance order. Each accepted signal gets the account's next sequence number and is marked pending
 * until its command is queued (or it is known that none will be: a risk refusal, a failed start). A bridge is handed a
 * command only when no lower-numbered command of the account is still pending, so commands run in acceptance order
 * even when their workflows reach the queue in another order. A pending mark lapses at its command's deadline, so
 * a crash between numbering and starting holds an account back no longer than that.
 */

export const orderingKeys = {
  counter: (acc: string) => `es:seq:{${acc}}`,
  pending: (acc: string) => `es:bp:{${acc}}`,
  /** The account's announcements to waiting long-polls: a command queued, or one held back now free to go. */
  wake: (acc: string) => `es:bn:{${acc}}`,
};

/** A pending mark: the sequence number and the instant after which its command can never run. */
export const pendingMember = (seq: number, deadlineMs: number) => `${seq}:${deadlineMs}`;

export interface AccountSequencer {
  /** Numbers one signal for each account, in one round trip. */
  next(targets: readonly { accountId: string; deadlineMs: number }[]): Promise<number[]>;
  /** No command will be queued for this number: stop holding later ones back. */
  release(accountId: string, seq: number, deadlineMs: number): Promise<void>;
  /** Hold later commands behind this number only until `untilMs` (a start that may or may not have happened). */
  holdUntil(accountId: string, seq: number, deadlineMs: number, untilMs: number): Promise<void>;
}

const NEXT = `
local seq = redis.call('INCR', KEYS[1])
redis.call('ZADD', KEYS[2], seq, seq .. ':' .. ARGV[1])
return seq`;

export class RedisAccountSequencer implements AccountSequencer {
  constructor(private readonly redis: Redis) {}

  async next(targets: readonly { accountId: string; deadlineMs: number }[]): Promise<number[]> {
    if (targets.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const t of targets) pipeline.eval(NEXT, 2, orderingKeys.counter(t.accountId), orderingKeys.pending(t.accountId), t.deadlineMs);
    const results = (await pipeline.exec()) ?? [];
    return results.map(([err, value]) => {
      if (err) throw err;
      return Number(value);
    });
  }

  // A waiting long-poll sleeps until it is told: a mark that goes (or lapses sooner) may free a command held behind it.
  async release(accountId: string, seq: number, _deadlineMs: number): Promise<void> {
    await this.redis.eval(
      `if redis.call('ZREMRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1]) > 0 then redis.call('PUBLISH', ARGV[2], 'released') end return 1`,
      1,
      orderingKeys.pending(accountId),
      seq,
      orderingKeys.wake(accountId),
    );
  }

  async holdUntil(accountId: string, seq: number, deadlineMs: number, untilMs: number): Promise<void> {
    if (untilMs >= deadlineMs) return;
    const key = orderingKeys.pending(accountId);
    // Only if the mark is still there: an enqueue that already removed it must not be undone.
    await this.redis.eval(
      `if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
        redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
        redis.call('PUBLISH', ARGV[4], 'held')
      end
      return 1`,
      1,
      key,
      pendingMember(seq, deadlineMs),
      pendingMember(seq, untilMs),
      seq,
      orderingKeys.wake(accountId),
    );
  }
}
