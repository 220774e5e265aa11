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
 *
 * Each last-seen is written with the owner the account had at the call, and read for the owner it has now: a write of
 * the old owner's bridge that lands after the account changed hands (a flush already under way) shows on no page.
 */
export const ONLINE_WITHIN_MS = 8_000;
const PERSIST_EVERY_MS = 2_000;

/** An account as its bridge's call found it: whose it was then. */
export interface SeenAccount {
  id: string;
  owner: string;
}

export class BridgePresence {
  /** Each account's last call: when, and whose the account was then. */
  private readonly lastCall = new Map<string, { at: number; owner: string }>();
  private readonly openPolls = new Map<string, number>();
  /** What this ingress last wrote of each account: when, for which owner. */
  private readonly persisted = new Map<string, { at: number; owner: string }>();
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
  seen(account: SeenAccount): void {
    const now = this.clock();
    const accountId = account.id;
    this.lastCall.set(accountId, { at: now, owner: account.owner });
    // A bridge this ingress has not written yet (for this owner) is written at once: the page turns online with its
    // first call.
    if (this.persisted.get(accountId)?.owner !== account.owner) void this.write(accountId, now);
  }

  /** A long-poll of this account's bridge began; the answer says when it ended (answered, superseded or cut). */
  pollOpened(account: SeenAccount): () => void {
    const accountId = account.id;
    this.seen(account);
    this.openPolls.set(accountId, (this.openPolls.get(accountId) ?? 0) + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      const left = (this.openPolls.get(accountId) ?? 1) - 1;
      if (left > 0) this.openPolls.set(accountId, left);
      else this.openPolls.delete(accountId);
      this.lastCall.set(accountId, { at: this.clock(), owner: account.owner });
    };
  }

  /** Writes last-seen for every bridge that called since the last write, and now for every bridge waiting in a poll. */
  async flush(): Promise<void> {
    const now = this.clock();
    const writes: Promise<void>[] = [];
    for (const [id, call] of this.lastCall) {
      const seenAt = this.openPolls.has(id) ? now : call.at;
      if (seenAt > (this.persisted.get(id)?.at ?? 0)) writes.push(this.write(id, seenAt));
    }
    await Promise.all(writes);
  }

  private write(accountId: string, at: number): Promise<void> {
    const owner = this.lastCall.get(accountId)!.owner;
    const written = { at, owner };
    this.persisted.set(accountId, written);
    // Best effort: the page's online state is information, never a guard; a failed write is tried at the next flush.
    return (
      this.store?.record(accountId, at, owner).catch(() => {
        if (this.persisted.get(accountId) === written) this.persisted.set(accountId, { at: 0, owner });
      }) ?? Promise.resolve()
    );
  }

  online(): number {
    const since = this.clock() - this.windowMs;
    let n = 0;
    for (const [id, call] of this.lastCall) {
      if (call.at >= since || this.openPolls.has(id)) n++;
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
  /** The account's bridge called at `atMs`, while the account was `owner`'s. */
  record(accountId: string, atMs: number, owner: string): Promise<void>;
  /** When each account's bridge last polled any ingress while it was its owner's now (undefined: not in the last week). */
  lastSeen(accounts: readonly SeenAccount[]): Promise<(Date | undefined)[]>;
}

const KEEP_SECONDS = 7 * 24 * 3600;

export class RedisLastSeen implements LastSeenStore {
  constructor(private readonly redis: Redis) {}

  private key(accountId: string): string {
    return key.bridgeSeen(accountId);
  }

  async record(accountId: string, atMs: number, owner: string): Promise<void> {
    await this.redis.set(this.key(accountId), `${atMs} ${owner}`, 'EX', KEEP_SECONDS);
  }

  async lastSeen(accounts: readonly SeenAccount[]): Promise<(Date | undefined)[]> {
    if (accounts.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const a of accounts) pipeline.get(this.key(a.id));
    return ((await pipeline.exec()) ?? []).map(([err, v], i) => (err || typeof v !== 'string' ? undefined : seenFor(v, accounts[i]!.owner)));
  }
}

/** "<ms> <owner>" as written for this owner; anything else (another owner's, unreadable) is not seen. */
function seenFor(value: string, owner: string): Date | undefined {
  const space = value.indexOf(' ');
  const at = Number(value.slice(0, space));
  return space > 0 && value.slice(space + 1) === owner && Number.isFinite(at) ? new Date(at) : undefined;
}
