import type { Redis } from 'ioredis';
import { giveBackSlot, takeSlot } from '../ratelimit/caps';
import { credentialId, hashCredential, newCredential, sameHash } from '../registry/credentials';
import { ownerKeys } from '../redis-keys';

/**
 * Owner API keys (`oak_…`): what a script or n8n uses instead of a browser session, with the owner's rights on the
 * owner API. Random, shown once, stored as SHA-256; listed per owner by a short id (the hash's first 12 hex digits).
 */
export interface ApiKeyView {
  id: string;
  name: string;
  createdAt: string;
}

const key = {
  byHash: ownerKeys.apiKey,
  ofOwner: ownerKeys.apiKeysOf,
};

export const MAX_API_KEYS_PER_OWNER = 20;

export class ApiKeyStore {
  constructor(private readonly redis: Redis) {}

  /**
   * The new key (shown once), or null when the owner has the most keys allowed. The key's entry in the owner's list is
   * the slot of the cap, taken and checked in one step; its lookup by hash is written only after, and the slot given
   * back if that fails.
   */
  async create(owner: string, name: string, now: Date): Promise<{ key: string; view: ApiKeyView } | null> {
    const secret = newCredential('oak');
    const hash = hashCredential(secret);
    const view: ApiKeyView = { id: credentialId(hash), name, createdAt: now.toISOString() };
    const cap = { kind: 'hash', key: key.ofOwner(owner), max: MAX_API_KEYS_PER_OWNER } as const;
    const taken = await takeSlot(this.redis, cap, view.id, JSON.stringify({ ...view, hash }));
    if (!taken.taken) return null;
    try {
      await this.redis.set(key.byHash(hash), JSON.stringify({ owner, hash }));
    } catch (err) {
      await giveBackSlot(this.redis, taken.slot).catch(() => undefined);
      throw err;
    }
    return { key: secret, view };
  }

  async ownerOf(secret: string): Promise<string | null> {
    if (!secret.startsWith('oak_') || secret.length > 256) return null;
    const hash = hashCredential(secret);
    const text = await this.redis.get(key.byHash(hash));
    if (text === null) return null;
    const record = JSON.parse(text) as { owner: string; hash: string };
    return sameHash(record.hash, hash) ? record.owner : null;
  }

  async list(owner: string): Promise<ApiKeyView[]> {
    const all = Object.values(await this.redis.hgetall(key.ofOwner(owner))).map((t) => JSON.parse(t) as ApiKeyView & { hash: string });
    return all.map(({ id, name, createdAt }) => ({ id, name, createdAt })).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  /** False when the owner has no key with this id. */
  async revoke(owner: string, id: string): Promise<boolean> {
    const text = await this.redis.hget(key.ofOwner(owner), id);
    if (text === null) return false;
    const { hash } = JSON.parse(text) as { hash: string };
    await this.redis.multi().del(key.byHash(hash)).hdel(key.ofOwner(owner), id).exec();
    return true;
  }

  async revokeAll(owner: string): Promise<void> {
    for (const k of await this.list(owner)) await this.revoke(owner, k.id);
  }
}
