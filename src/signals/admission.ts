import type { Redis } from 'ioredis';
import { signalKeys } from '../redis-keys';

/**
 * Admission control: a 202 is a promise that the signal reaches its bridge while it is still fresh. Every accepted
 * (signal, account) pair is pending until its worker has queued the bridge command or decided that none will be
 * queued. When more than `maxLate` pairs have been pending longer than `lateAfterMs`, the execution path is behind,
 * and the ingress refuses new signals at the door (503 backpressure with a Retry-After) instead of accepting a
 * market order that would wait in Temporal's backlog until it expires. docs/admission-control.md says why this signal.
 */

export interface AdmissionLedger {
  /** The signal's targets are accepted at `acceptedAtMs` and now pending. */
  accepted(signalId: string, accountIds: readonly string[], acceptedAtMs: number): Promise<void>;
  /** One target is no longer pending: its command is queued, or none will be. */
  settled(signalId: string, accountId: string): Promise<void>;
  /** How many targets are pending, and how many of them longer than `lateAfterMs`; forgets those past the horizon. */
  backlog(nowMs: number, lateAfterMs: number): Promise<AdmissionBacklog>;
  /** Up to `limit` targets pending since before `acceptedBeforeMs`, the oldest first. */
  stalest(acceptedBeforeMs: number, limit: number): Promise<PendingTarget[]>;
}

export interface PendingTarget {
  signalId: string;
  accountId: string;
}

export interface AdmissionBacklog {
  pending: number;
  late: number;
  /** How long the oldest pending target has waited (0 when none). */
  oldestMs: number;
}

export type AdmissionDecision = { admitted: true } | { admitted: false; retryAfterSeconds: number; reason: 'behind' | 'unknown' };

const member = (signalId: string, accountId: string) => `${signalId}|${accountId}`;

/**
 * KEYS: pending; ARGV: now, lateAfterMs, horizonMs. A target pending past the horizon was lost (an ingress that died
 * between accepting and starting): it no longer counts, so one lost start cannot hold the door shut.
 */
const BACKLOG = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[1]) - tonumber(ARGV[3])))
local pending = redis.call('ZCARD', KEYS[1])
local late = redis.call('ZCOUNT', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {pending, late, oldest[2] or ARGV[1]}`;

/** One ledger per task queue: the ingresses and workers of one deployment share it, and nothing else does. */
export class RedisAdmissionLedger implements AdmissionLedger {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    taskQueue: string,
    /** Past this, a pending target is taken as lost and forgotten (the longest command lifetime). */
    private readonly horizonMs: number,
  ) {
    this.key = signalKeys.admissionPending(taskQueue);
  }

  async accepted(signalId: string, accountIds: readonly string[], acceptedAtMs: number): Promise<void> {
    if (accountIds.length === 0) return;
    await this.redis.zadd(this.key, ...accountIds.flatMap((a) => [acceptedAtMs, member(signalId, a)]));
  }

  async settled(signalId: string, accountId: string): Promise<void> {
    await this.redis.zrem(this.key, member(signalId, accountId));
  }

  async stalest(acceptedBeforeMs: number, limit: number): Promise<PendingTarget[]> {
    const members = await this.redis.zrangebyscore(this.key, '-inf', acceptedBeforeMs, 'LIMIT', 0, limit);
    return members.flatMap((m) => {
      const at = m.indexOf('|');
      return at > 0 ? [{ signalId: m.slice(0, at), accountId: m.slice(at + 1) }] : [];
    });
  }

  async backlog(nowMs: number, lateAfterMs: number): Promise<AdmissionBacklog> {
    const [pending, late, oldest] = (await this.redis.eval(BACKLOG, 1, this.key, nowMs, lateAfterMs, this.horizonMs)) as [number, number, string];
    return { pending, late, oldestMs: Math.max(0, nowMs - Number(oldest)) };
  }
}

export interface AdmissionSettings {
  /** A target pending longer than this is late. */
  lateAfterMs: number;
  /** More late targets than this, and the door closes. */
  maxLate: number;
  /** How often the ingress reads the backlog (the decision is made from the last reading, at no cost per request). */
  refreshMs: number;
}

/**
 * The ingress side: reads the backlog in the background and answers each request from the last reading, so a
 * refusal costs no round trip. Fails closed: without a recent reading (Redis unreachable), nothing is admitted.
 */
export class AdmissionGate {
  private last: { at: number; backlog: AdmissionBacklog } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly ledger: AdmissionLedger,
    private readonly settings: AdmissionSettings,
    private readonly now: () => number = Date.now,
    /** Called after each reading that shuts the door (src/signals/lost-starts.ts looks for pairs that will never settle). */
    private readonly whenShut?: () => void,
  ) {}

  start(): void {
    if (this.timer) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.settings.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The reading the decision rests on (for metrics and /readyz). */
  reading(): AdmissionBacklog | undefined {
    return this.last?.backlog;
  }

  async decide(): Promise<AdmissionDecision> {
    // A reading older than that is no reading: wait for one fresh read before deciding.
    if (!this.fresh()) await this.refresh();
    const last = this.last;
    if (!last || !this.fresh()) return { admitted: false, retryAfterSeconds: 1, reason: 'unknown' };
    const { late, oldestMs } = last.backlog;
    if (late <= this.settings.maxLate) return { admitted: true };
    // The backlog is about as deep as its oldest entry is old: that is when a retry has a chance.
    return { admitted: false, retryAfterSeconds: Math.min(30, Math.max(1, Math.ceil(oldestMs / 1000))), reason: 'behind' };
  }

  /** A reading stays usable for a few seconds: a busy event loop must not shut the door, only Redis being gone. */
  private fresh(): boolean {
    return this.last !== undefined && this.now() - this.last.at <= Math.max(5000, this.settings.refreshMs * 20);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const backlog = await this.ledger.backlog(this.now(), this.settings.lateAfterMs);
        this.last = { at: this.now(), backlog };
        if (backlog.late > this.settings.maxLate) this.whenShut?.();
      } catch {
        // Kept stale: decide() fails closed once the reading is too old.
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}
