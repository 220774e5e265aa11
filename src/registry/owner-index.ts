import type { Redis } from 'ioredis';

/**
 * Which accounts, secrets and tokens each owner has, as sets the owner API lists from (never a scan of the registry).
 * Added to on every write; an entry left behind when something changed owner or was deleted is harmless: every
 * read checks the record's own owner before showing it, and drops what is gone or is someone else's.
 */
export type IndexedKind = 'accounts' | 'secrets' | 'tokens';

const key = (owner: string, kind: IndexedKind) => `es:owner-index:${kind}:${owner}`;

export class OwnerIndex {
  constructor(private readonly redis: Redis) {}

  keyOf(owner: string, kind: IndexedKind): string {
    return key(owner, kind);
  }

  async add(owner: string, kind: IndexedKind, member: string): Promise<void> {
    await this.redis.sadd(key(owner, kind), member);
  }

  async members(owner: string, kind: IndexedKind): Promise<string[]> {
    return (await this.redis.smembers(key(owner, kind))).sort();
  }

  async drop(owner: string, kind: IndexedKind, members: readonly string[]): Promise<void> {
    if (members.length > 0) await this.redis.srem(key(owner, kind), ...members);
  }
}
