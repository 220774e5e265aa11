import type { Redis } from 'ioredis';
import { takeSlot } from '../ratelimit/caps';
import { registryKeys } from '../redis-keys';

/**
 * Which accounts, secrets and tokens each owner has, as sets the owner API lists from (never a scan of the registry).
 * Added to on every write; an entry left behind when something changed owner or was deleted is harmless: every
 * read checks the record's own owner before showing it, and drops what is gone or is someone else's.
 */
export type IndexedKind = 'accounts' | 'secrets' | 'tokens';

export const ownerIndexKey = (owner: string, kind: IndexedKind) => registryKeys.ownerIndex(kind, owner);
const key = ownerIndexKey;

export class OwnerIndex {
  constructor(private readonly redis: Redis) {}

  keyOf(owner: string, kind: IndexedKind): string {
    return key(owner, kind);
  }

  async add(owner: string, kind: IndexedKind, member: string): Promise<void> {
    await this.redis.sadd(key(owner, kind), member);
  }

  /**
   * Adds `member` only while the owner has fewer than `max` of this kind, in one atomic step (`takeSlot`); false when
   * full. Entries left behind count until a read drops them, so read (and so clean) the list first; and write the
   * record before claiming its entry, never after: a read drops an entry whose record is not there yet.
   */
  async claim(owner: string, kind: IndexedKind, member: string, max: number): Promise<boolean> {
    return (await takeSlot(this.redis, { kind: 'set', key: key(owner, kind), max }, member)).taken;
  }

  async members(owner: string, kind: IndexedKind): Promise<string[]> {
    return (await this.redis.smembers(key(owner, kind))).sort();
  }

  async drop(owner: string, kind: IndexedKind, members: readonly string[]): Promise<void> {
    if (members.length > 0) await this.redis.srem(key(owner, kind), ...members);
  }
}
