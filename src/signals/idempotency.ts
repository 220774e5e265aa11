import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { awaitReplicas, type ReplicaAck } from '../redis';
import { signalKeys } from '../redis-keys';

/**
 * The idempotency window (spec §5 rules 4-5): a key is scoped to the secret and the route (the per-account URL's
 * account, or the broadcast URL), and holds for the window from acceptance.
 */

/** What the first request answered, kept for the window so a retry gets the same answer. */
export interface AcceptanceRecord {
  signalId: string;
  correlationId: string;
  accountsResolved: number;
  acceptedAt: string;
  /** The request the key was first used with; a different body under the same key is refused. */
  bodyHash: string;
  /** Which accounts ran in which region, so a retry can start a region that failed the first time. */
  regions: Record<string, string[]>;
}

export interface IdempotencyWindows {
  /** Claims the key for the window: true when this request is the first, else the first request's record. */
  claim(digest: string, record: AcceptanceRecord, windowMs: number): Promise<{ first: true } | { first: false; record: AcceptanceRecord }>;
  /** Whether a request already holds the key (a replay, which is no new work). */
  held(digest: string): Promise<boolean>;
}

// KEYS: the window; ARGV: the record, the window in ms. The first SET wins; a later one reads the winner's record.
const CLAIM = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])`;

/**
 * Windows in Redis, beside the signal's acceptance (src/signals/pending-starts.ts), with its durability: the claim
 * counts once the replicas REDIS_MIN_REPLICAS_ACK asks for hold it (docs/reliability.md, "What Redis must keep"). A
 * key expires with its window, so a key used again after the window is a new action (spec §5 rule 5).
 */
export class RedisIdempotencyWindows implements IdempotencyWindows {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly replicaAck?: ReplicaAck,
  ) {}

  async claim(digest: string, record: AcceptanceRecord, windowMs: number): Promise<{ first: true } | { first: false; record: AcceptanceRecord }> {
    const winner = (await this.redis.eval(CLAIM, 1, signalKeys.idempotencyWindow(digest), JSON.stringify(record), windowMs)) as string | null;
    await awaitReplicas(this.redis, this.replicaAck);
    return winner === null ? { first: true } : { first: false, record: JSON.parse(winner) as AcceptanceRecord };
  }

  async held(digest: string): Promise<boolean> {
    return (await this.redis.exists(signalKeys.idempotencyWindow(digest))) === 1;
  }
}

export function idempotencyDigest(secretHash: string, routeAccountId: string | undefined, key: string): string {
  return createHash('sha256')
    .update(`${secretHash}|${routeAccountId ?? '*'}|${key}`)
    .digest('hex');
}

/** A stable hash of the request (the validated signal without its secret, and the route). */
export function requestHash(signal: Record<string, unknown>, routeAccountId: string | undefined): string {
  return createHash('sha256')
    .update(canonicalJson({ route: routeAccountId ?? '*', signal }))
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
