import type { Redis } from 'ioredis';

/**
 * Which accounts' bridges polled this ingress recently (the bridges-online metric), and when each was last seen, kept
 * in Redis for the owner's dashboard: written at most once per `persistEveryMs` per account, so a bridge's long-polls
 * cost one Redis write a quarter minute, not one each. Bounded by account count.
 */
export class BridgePresence {
  private readonly lastSeen = new Map<string, number>();
  private readonly lastPersisted = new Map<string, number>();

  constructor(
    private readonly windowMs = 60_000,
    private readonly store?: LastSeenStore,
    private readonly persistEveryMs = 15_000,
  ) {}

  seen(accountId: string): void {
    const now = Date.now();
    this.lastSeen.set(accountId, now);
    if (this.store && now - (this.lastPersisted.get(accountId) ?? 0) >= this.persistEveryMs) {
      this.lastPersisted.set(accountId, now);
      // Best effort: the dashboard's "last seen" is information, never a guard; a failed write is tried at the next poll.
      this.store.record(accountId, now).catch(() => this.lastPersisted.delete(accountId));
    }
  }

  online(): number {
    const since = Date.now() - this.windowMs;
    let n = 0;
    for (const [id, at] of this.lastSeen) {
      if (at >= since) n++;
      else {
        this.lastSeen.delete(id);
        this.lastPersisted.delete(id);
      }
    }
    return n;
  }
}

export interface LastSeenStore {
  record(accountId: string, atMs: number): Promise<void>;
  /** When each account's bridge last polled any ingress (undefined: not in the last week). */
  lastSeen(accountIds: readonly string[]): Promise<(Date | undefined)[]>;
}

const KEEP_SECONDS = 7 * 24 * 3600;

export class RedisLastSeen implements LastSeenStore {
  constructor(private readonly redis: Redis) {}

  private key(accountId: string): string {
    return `es:bridge-seen:{${accountId}}`;
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
