import type { Cluster, Redis } from 'ioredis';
import type { SignalWorkflowInput } from '../domain/workflow-input';
import { awaitReplicas, type ReplicaAck } from '../redis';
import { signalKeys } from '../redis-keys';

/**
 * Accept in Redis, answer, then start (docs/architecture.md): a signal is accepted once Redis holds, per region, the
 * start of its workflow as a record; the 202 goes out then, and the workflow is started after, from the record. A
 * record goes only once Temporal holds the workflow, so no accepted signal is left unstarted: the ingress that wrote
 * it starts it at once, and any ingress starts a record whose claim has lapsed (its ingress died, or Temporal was
 * away). The workflow id is the signal's, with REJECT_DUPLICATE: a record started twice runs once.
 */
export interface PendingStart {
  region: string;
  input: SignalWorkflowInput;
}

export interface PendingStarts {
  /**
   * Records the start, the writer's to make until `claimUntilMs`; resolves once Redis holds it (and the replicas
   * REDIS_MIN_REPLICAS_ACK asks for). `existed`: a concurrent replay recorded it first, and that record stands.
   */
  record(region: string, input: SignalWorkflowInput, claimUntilMs: number): Promise<'created' | 'existed'>;
  /** Extends the claim of a record still there (a start being tried again); a record gone stays gone. */
  renew(region: string, signalId: string, claimUntilMs: number): Promise<void>;
  /** Temporal holds the workflow (started now, or found started): the record goes. */
  started(region: string, signalId: string): Promise<void>;
  /**
   * The recorded input of a start not yet known to Temporal, claimed until `claimUntilMs` by the caller (a replay of
   * a signal whose ingress may have died before starting it); undefined when no such record is left.
   */
  claim(region: string, signalId: string, claimUntilMs: number): Promise<SignalWorkflowInput | undefined>;
  /** Up to `limit` records whose claim lapsed before `nowMs`, oldest first, each claimed until `claimUntilMs` by the caller. */
  claimLapsed(nowMs: number, limit: number, claimUntilMs: number): Promise<PendingStart[]>;
  /** How many starts wait, and how long ago the oldest was accepted (0 when none). */
  backlog(nowMs: number): Promise<{ pending: number; oldestMs: number }>;
}

const member = (region: string, signalId: string) => `${region}|${signalId}`;

// KEYS: claims, accepted, inputs; ARGV: member, claim until, accepted at, input. The first record of a start stands:
// its sequence numbers are the ones its commands were queued with.
const RECORD = `
if redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[4]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1`;

const STARTED = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1`;

// KEYS: claims, inputs; ARGV: member, claim until.
const CLAIM = `
local input = redis.call('HGET', KEYS[2], ARGV[1])
if input then redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1]) end
return input`;

// KEYS: claims, inputs; ARGV: now, limit, claim until. A member without its input (never happens by these scripts,
// but a partial restore could leave one) is dropped rather than claimed for ever.
const CLAIM_LAPSED = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, m in ipairs(due) do
  local input = redis.call('HGET', KEYS[2], m)
  if input then
    redis.call('ZADD', KEYS[1], ARGV[3], m)
    table.insert(out, m)
    table.insert(out, input)
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return out`;

/** One set per task queue: the ingresses of one deployment share it (its keys share one Redis Cluster slot). */
export class RedisPendingStarts implements PendingStarts {
  private readonly keys: { claims: string; accepted: string; inputs: string };

  constructor(
    private readonly redis: Redis | Cluster,
    taskQueue: string,
    private readonly replicaAck?: ReplicaAck,
  ) {
    this.keys = signalKeys.pendingStarts(taskQueue);
  }

  async record(region: string, input: SignalWorkflowInput, claimUntilMs: number): Promise<'created' | 'existed'> {
    const { claims, accepted, inputs } = this.keys;
    const fresh = await this.redis.eval(
      RECORD,
      3,
      claims,
      accepted,
      inputs,
      member(region, input.signalId),
      claimUntilMs,
      Date.parse(input.acceptedAt),
      JSON.stringify(input),
    );
    await awaitReplicas(this.redis, this.replicaAck);
    return fresh === 1 ? 'created' : 'existed';
  }

  async renew(region: string, signalId: string, claimUntilMs: number): Promise<void> {
    await this.redis.zadd(this.keys.claims, 'XX', claimUntilMs, member(region, signalId));
  }

  async started(region: string, signalId: string): Promise<void> {
    const { claims, accepted, inputs } = this.keys;
    await this.redis.eval(STARTED, 3, claims, accepted, inputs, member(region, signalId));
  }

  async claim(region: string, signalId: string, claimUntilMs: number): Promise<SignalWorkflowInput | undefined> {
    const input = (await this.redis.eval(CLAIM, 2, this.keys.claims, this.keys.inputs, member(region, signalId), claimUntilMs)) as string | null;
    return input === null ? undefined : (JSON.parse(input) as SignalWorkflowInput);
  }

  async claimLapsed(nowMs: number, limit: number, claimUntilMs: number): Promise<PendingStart[]> {
    const flat = (await this.redis.eval(CLAIM_LAPSED, 2, this.keys.claims, this.keys.inputs, nowMs, limit, claimUntilMs)) as string[];
    const out: PendingStart[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const m = flat[i]!;
      out.push({ region: m.slice(0, m.indexOf('|')), input: JSON.parse(flat[i + 1]!) as SignalWorkflowInput });
    }
    return out;
  }

  async backlog(nowMs: number): Promise<{ pending: number; oldestMs: number }> {
    const [pending, oldest] = await Promise.all([this.redis.zcard(this.keys.accepted), this.redis.zrange(this.keys.accepted, 0, 0, 'WITHSCORES')]);
    return { pending, oldestMs: oldest[1] === undefined ? 0 : Math.max(0, nowMs - Number(oldest[1])) };
  }
}
