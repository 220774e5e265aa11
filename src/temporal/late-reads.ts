import { ExpiringCache } from './expiring-cache';

/**
 * Reads that need not hold their caller up: one read per key at a time, however many callers ask, and its answer
 * kept `keepMs` for the callers after it. A caller with a wait gets the fresh answer if it comes in time, else the
 * kept one, else undefined; the read goes on for the next caller. Without the keeping, a poll under load would
 * time out on every read and never see a late answer at all.
 */
export class LateReads<T> {
  private readonly last: ExpiringCache<string, T>;
  private readonly reading = new Map<string, Promise<T>>();

  constructor(keepMs: number, maxEntries: number, now: () => number = Date.now) {
    this.last = new ExpiringCache<string, T>(keepMs, maxEntries, now);
  }

  /** Without waitMs: the fresh answer (joining a read under way), or its error. */
  async read(key: string, load: () => Promise<T>, waitMs?: number): Promise<T | undefined> {
    let current = this.reading.get(key);
    if (!current) {
      current = load().then((value) => {
        this.last.set(key, value);
        return value;
      });
      this.reading.set(key, current);
      const forget = () => this.reading.delete(key);
      current.then(forget, forget);
    }
    if (waitMs === undefined) return current;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => {
      timer = setTimeout(() => resolve(LATE), waitMs);
    });
    try {
      const first = await Promise.race([current, late]);
      return first === LATE ? this.last.get(key) : first;
    } finally {
      clearTimeout(timer);
    }
  }
}

const LATE = Symbol('late');
