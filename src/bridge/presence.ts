import type { Redis } from 'ioredis';
import { key } from '../registry/records';

/**
 * Whether each account's bridge is there, as the owner's page says it (docs/owners.md, "Online and offline"): a
 * bridge is online while it holds a long-poll open on some ingress or made a call within `ONLINE_WITHIN_MS`.
 *
 * Each ingress keeps in memory which accounts' bridges called it and which hold a poll open, and writes their
 * last-seen time to Redis every `persistEveryMs`: the time of the last call, or now for a bridge still waiting in a
 * poll. A bridge that stops closes its poll (the process goes, its socket closes), so its last-seen stops moving at
 * once and the page turns offline `ONLINE_WITHIN_MS` later; an ingress that dies stops writing, the same way. A
 * bridge's long-polls cost Redis one write per account per `persistEveryMs`, never one per call.
 */
export const ONLINE_WITHIN_MS = 8_000;
const PERSIST_EVERY_MS = 2_000;

export class BridgePresence {
  private readonly lastCall = new Map<string, number>();
  private readonly openPolls = new Map<string, number>();
  private readonly persisted = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** The window of the bridges-online metric. */
    private readonly windowMs = 60_000,
    private readonly store?: LastSeenStore,
    private readonly persistEveryMs = PERSIST_EVERY_MS,
    private readonly clock: () => number = Date.now,
  ) {
    if (store) {
      this.timer = setInterval(() => void this.flush(), persistEveryMs);
      this.timer.unref();
    }
  }

  /** A call of this account's bridge was authenticated. */
  seen(accountId: string): void {
    const now = this.clock();
    this.lastCall.set(accountId, now);
    // A bridge this ingress has not written yet is written at once: the page turns online with its first call.
    if (!this.persisted.has(accountId)) void this.write(accountId, now);
  }

  /** A long-poll of this account's bridge began; the answer says when it ended (answered, superseded or cut). */
  pollOpened(accountId: string): () => void {
    this.seen(accountId);
    this.openPolls.set(accountId, (this.openPolls.get(accountId) ?? 0) + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      const left = (this.openPolls.get(accountId) ?? 1) - 1;
      if (left > 0) this.openPolls.set(accountId, left);
      else this.openPolls.delete(accountId);
      this.lastCall.set(accountId, this.clock());
    };
  }

  /** Writes last-seen for every bridge that called since the last write, and now for every bridge waiting in a poll. */
  async flush(): Promise<void> {
    const now = this.clock();
    const writes: Promise<void>[] = [];
    for (const [id, at] of this.lastCall) {
      const seenAt = this.openPolls.has(id) ? now : at;
      if (seenAt > (this.persisted.get(id) ?? 0)) writes.push(this.write(id, seenAt));
    }
    await Promise.all(writes);
  }

  private write(accountId: string, at: number): Promise<void> {
    this.persisted.set(accountId, at);
    // Best effort: the page's online state is information, never a guard; a failed write is tried at the next flush.
    return (
      this.store?.record(accountId, at).catch(() => {
        if (this.persisted.get(accountId) === at) this.persisted.set(accountId, 0);
      }) ?? Promise.resolve()
    );
  }

  online(): number {
    const since = this.clock() - this.windowMs;
    let n = 0;
    for (const [id, at] of this.lastCall) {
      if (at >= since || this.openPolls.has(id)) n++;
      else {
        this.lastCall.delete(id);
        this.persisted.delete(id);
      }
    }
    return n;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Online as the page says it: seen within ONLINE_WITHIN_MS (a bridge waiting in a poll is written as seen now). */
export const isOnline = (seen: Date | undefined, now: Date): boolean => seen !== undefined && now.getTime() - seen.getTime() <= ONLINE_WITHIN_MS;

export interface LastSeenStore {
  record(accountId: string, atMs: number): Promise<void>;
  /** When each account's bridge last polled any ingress (undefined: not in the last week). */
  lastSeen(accountIds: readonly string[]): Promise<(Date | undefined)[]>;
}

const KEEP_SECONDS = 7 * 24 * 3600;

export class RedisLastSeen implements LastSeenStore {
  constructor(private readonly redis: Redis) {}

  private key(accountId: string): string {
    return key.bridgeSeen(accountId);
  }

  async record(accountId: string, atMs: number): Promise<void> {
    await this.redis.set(this.key(accountId), String(atMs), 'EX', KEEP_SECONDS);
  }

  async lastSeen(accountIds: readonly string[]): Promise<(Date | undefined)[]> {
    if (accountIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of accountIds) pipeline.get(this.key(id));
    return ((await pipeline.exec()) ?? []).map(([err, v]) => (err || v === null ? undefined : new Date(Number(v))));
  }
}
