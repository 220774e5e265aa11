import type { Redis } from 'ioredis';
import { COMMAND_AGES } from '../domain/limits';
import type { PendingStarts } from './pending-starts';

/**
 * The door: a 202 is a promise that the signal is held in Redis, its commands handed to the bridges, and its workflow
 * started from that record sooner or later (docs/admission-control.md). The door refuses a new signal (503
 * backpressure) only for what would break that promise: Redis unable to take the write (its memory nearly full, fewer
 * replicas than REDIS_MIN_REPLICAS_ACK asks for), or a backlog of unstarted signals past what Redis is meant to hold
 * (too many, or older than any command lives). A Temporal that is slow or away does not shut it: the starts wait in
 * Redis, the bridges fill the orders meanwhile, and the workflows supervise them once Temporal is back.
 */

export interface DoorBounds {
  /** More unstarted signals than this, and the door shuts: each holds its workflow input in Redis (about 1–3 KB). */
  maxPendingStarts: number;
  /**
   * An unstarted signal older than this, and the door shuts: every command queued with it has expired before any
   * workflow supervised it, so Temporal has been away longer than an outage the backlog is meant to ride out.
   */
  maxPendingStartAgeMs: number;
  /** Redis's used memory past this fraction of its `maxmemory`, and the door shuts before a write is refused. */
  redisMemoryFullFraction: number;
  /** Replicas that must be connected (REDIS_MIN_REPLICAS_ACK): fewer, and an acceptance could not be acknowledged. */
  minReplicas: number;
  /** How often each ingress reads its inputs; a request is decided from the last reading, at no cost of its own. */
  refreshMs: number;
}

/**
 * The bounds as shipped. 20,000 unstarted signals is about 60 MB of Redis and, at the dev server's ~50 starts a second,
 * under seven minutes of draining; five minutes is the longest any command lives (COMMAND_AGES.otherMs); 90 % leaves
 * the room Redis needs to write the refusals' own counters and the bridges' reports.
 */
export const DOOR_TUNING: Omit<DoorBounds, 'minReplicas'> = {
  maxPendingStarts: 20_000,
  maxPendingStartAgeMs: COMMAND_AGES.otherMs,
  redisMemoryFullFraction: 0.9,
  refreshMs: 250,
};

/** Why the door is shut; `unknown`: no recent reading (Redis away), so nothing is admitted (fail closed). */
export type DoorShutReason = 'redis_memory' | 'redis_replicas' | 'start_backlog' | 'start_backlog_age' | 'unknown';

export type DoorDecision = { admitted: true } | { admitted: false; retryAfterSeconds: number; reason: DoorShutReason };

export interface DoorReading {
  pendingStarts: number;
  oldestPendingStartMs: number;
  /** used_memory ÷ maxmemory; undefined when Redis has no maxmemory (nothing to measure against). */
  redisMemoryUsed: number | undefined;
  connectedReplicas: number;
}

const infoField = (info: string, name: string): number | undefined => {
  const m = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  return m ? Number(m[1]) : undefined;
};

/** Reads what the door decides on: the pending starts (src/signals/pending-starts.ts) and Redis's own INFO. */
export async function readDoor(redis: Redis, starts: Pick<PendingStarts, 'backlog'>, nowMs: number, minReplicas: number): Promise<DoorReading> {
  const [backlog, memory, replication] = await Promise.all([
    starts.backlog(nowMs),
    redis.info('memory'),
    minReplicas > 0 ? redis.info('replication') : Promise.resolve(''),
  ]);
  const used = infoField(memory, 'used_memory');
  const max = infoField(memory, 'maxmemory');
  return {
    pendingStarts: backlog.pending,
    oldestPendingStartMs: backlog.oldestMs,
    redisMemoryUsed: used !== undefined && max !== undefined && max > 0 ? used / max : undefined,
    connectedReplicas: infoField(replication, 'connected_slaves') ?? 0,
  };
}

/** The decision from one reading (pure). */
export function decideDoor(reading: DoorReading, bounds: DoorBounds): DoorDecision {
  if (reading.redisMemoryUsed !== undefined && reading.redisMemoryUsed >= bounds.redisMemoryFullFraction)
    return { admitted: false, retryAfterSeconds: 30, reason: 'redis_memory' };
  if (reading.connectedReplicas < bounds.minReplicas) return { admitted: false, retryAfterSeconds: 1, reason: 'redis_replicas' };
  // The backlog drains at Temporal's start rate once it is back: a retry has a chance after about a tenth of its age.
  const retryAfterSeconds = Math.min(30, Math.max(1, Math.ceil(reading.oldestPendingStartMs / 10_000)));
  if (reading.pendingStarts > bounds.maxPendingStarts) return { admitted: false, retryAfterSeconds, reason: 'start_backlog' };
  if (reading.oldestPendingStartMs > bounds.maxPendingStartAgeMs) return { admitted: false, retryAfterSeconds, reason: 'start_backlog_age' };
  return { admitted: true };
}

/**
 * The ingress side: reads in the background and answers each request from the last reading. Fails closed: without a
 * recent reading (Redis unreachable), nothing is admitted.
 */
export class AcceptanceDoor {
  private last: { at: number; reading: DoorReading } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private wasShut: DoorShutReason | undefined;

  constructor(
    private readonly read: () => Promise<DoorReading>,
    private readonly bounds: DoorBounds,
    private readonly now: () => number = Date.now,
    /** Called when the door shuts (with why) and when it opens again (undefined): for the log. */
    private readonly onChange?: (shut: DoorShutReason | undefined, reading: DoorReading | undefined) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.bounds.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The reading the decision rests on (for /readyz). */
  reading(): DoorReading | undefined {
    return this.last?.reading;
  }

  async decide(): Promise<DoorDecision> {
    if (!this.fresh()) await this.refresh();
    const last = this.last;
    const decision: DoorDecision =
      !last || !this.fresh() ? { admitted: false, retryAfterSeconds: 1, reason: 'unknown' } : decideDoor(last.reading, this.bounds);
    const shut = decision.admitted ? undefined : decision.reason;
    if (shut !== this.wasShut) {
      this.wasShut = shut;
      this.onChange?.(shut, last?.reading);
    }
    return decision;
  }

  /** A reading stays usable for a few seconds: a busy event loop must not shut the door, only Redis being gone. */
  private fresh(): boolean {
    return this.last !== undefined && this.now() - this.last.at <= Math.max(5000, this.bounds.refreshMs * 20);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const reading = await this.read();
        this.last = { at: this.now(), reading };
      } catch {
        // Kept stale: decide() fails closed once the reading is too old.
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}
