import type { Cluster, Redis } from 'ioredis';
import { awaitReplicas, type ReplicaAck } from '../redis';
import { MONOTONIC_NEXT_LUA } from './monotonic';
import { bridgeKeys } from '../redis-keys';

/**
 * Per-account acceptance order. Each accepted signal gets the account's next sequence number and is marked pending
 * until its command is queued (or it is known that none will be: a risk refusal, a failed start). A bridge is handed a
 * command only when no lower-numbered command of the account is still pending, so commands run in acceptance order
 * even when their workflows reach the queue in another order.
 *
 * A mark lapses at the instant it carries. The ingress numbers a signal with a short start lease (its Temporal budget
 * and a margin) and, once the workflow has started, moves the mark to its command's deadline: an ingress that dies
 * between numbering and starting (no workflow will ever queue that number) holds the account back for seconds, not
 * until the deadline of a command that will never come. A command whose mark lapsed while a later number of its
 * account was handed out is refused by the queue (`signal_overtaken`) rather than run out of order.
 */

/** A pending mark: the sequence number and the instant after which its command can never run. */
const pendingMember = (seq: number, deadlineMs: number) => `${seq}:${deadlineMs}`;

export interface MarkRetime {
  accountId: string;
  seq: number;
  fromMs: number;
  toMs: number;
}

/**
 * A signal's number on one account, and the generation of the account's bridge data it was taken in: a command whose
 * generation is no longer Redis's was numbered before Redis lost the account's data, so what Redis holds of it now
 * cannot tell whether a bridge took it (src/bridge/queue-scripts.ts).
 */
export interface Numbered {
  seq: number;
  generation: string;
}

export interface AccountSequencer {
  /** Numbers one signal for each account, in one round trip. */
  next(targets: readonly { accountId: string; deadlineMs: number }[]): Promise<Numbered[]>;
  /** No command will be queued for this number: stop holding later ones back. */
  release(accountId: string, seq: number, deadlineMs: number): Promise<void>;
  /**
   * Moves marks to another lapse instant, each only if it is still there with `fromMs`: a mark that an enqueue
   * removed, or that lapsed, stays gone. Confirms a started signal (lease → deadline), or shortens a hold.
   */
  retime(marks: readonly MarkRetime[]): Promise<void>;
}

// A sequence number is never below Redis's clock in milliseconds (src/bridge/monotonic.ts): after Redis lost the
// counter, new signals are still numbered after the ones running workflows hold, so acceptance order survives.
// The data generation is Redis's clock in microseconds when the account's first number was taken: after a loss the
// next number starts a new, later one.
const NEXT = `
${MONOTONIC_NEXT_LUA}
local seq = string.format('%d', monotonicNext(KEYS[1], 1000))
redis.call('ZADD', KEYS[2], seq, seq .. ':' .. ARGV[1])
local generation = redis.call('GET', KEYS[3])
if not generation then
  local t = redis.call('TIME')
  generation = t[1] .. string.format('%06d', tonumber(t[2]))
  redis.call('SET', KEYS[3], generation)
end
return {tonumber(seq), generation}`;

// KEYS: pending marks; ARGV: the mark now, the mark wanted, its seq, the wake channel, whether it lapses sooner. A
// waiting long-poll sleeps until the held mark lapses: told of a sooner lapse, it looks again.
const RETIME = `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  if ARGV[5] == '1' then redis.call('PUBLISH', ARGV[4], 'held') end
end
return 1`;

export class RedisAccountSequencer implements AccountSequencer {
  constructor(
    private readonly redis: Redis | Cluster,
    /** Numbers and confirmations count once replicas hold them (src/redis.ts, awaitReplicas). */
    private readonly replicaAck?: ReplicaAck,
  ) {}

  async next(targets: readonly { accountId: string; deadlineMs: number }[]): Promise<Numbered[]> {
    if (targets.length === 0) return [];
    // One script per account, all sent at once (one round trip on one connection): not a MULTI or a pipeline
    // object, which a Redis Cluster refuses when the accounts' keys live in different slots.
    const seqs = await Promise.all(
      targets.map(async (t) => {
        const acc = t.accountId;
        const [seq, generation] = (await this.redis.eval(
          NEXT,
          3,
          bridgeKeys.sequence(acc),
          bridgeKeys.pendingMarks(acc),
          bridgeKeys.dataGeneration(acc),
          t.deadlineMs,
        )) as [number, string];
        return { seq, generation };
      }),
    );
    await awaitReplicas(this.redis, this.replicaAck);
    return seqs;
  }

  // A waiting long-poll sleeps until it is told: a mark that goes (or lapses sooner) may free a command held behind it.
  async release(accountId: string, seq: number, _deadlineMs: number): Promise<void> {
    await this.redis.eval(
      `if redis.call('ZREMRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1]) > 0 then redis.call('PUBLISH', ARGV[2], 'released') end return 1`,
      1,
      bridgeKeys.pendingMarks(accountId),
      seq,
      bridgeKeys.wakeChannel(accountId),
    );
  }

  async retime(marks: readonly MarkRetime[]): Promise<void> {
    const moves = marks.filter((m) => m.toMs !== m.fromMs);
    if (moves.length === 0) return;
    await Promise.all(
      moves.map((m) =>
        this.redis.eval(
          RETIME,
          1,
          bridgeKeys.pendingMarks(m.accountId),
          pendingMember(m.seq, m.fromMs),
          pendingMember(m.seq, m.toMs),
          m.seq,
          bridgeKeys.wakeChannel(m.accountId),
          m.toMs < m.fromMs ? '1' : '0',
        ),
      ),
    );
    await awaitReplicas(this.redis, this.replicaAck);
  }
}
