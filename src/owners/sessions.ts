import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { hashCredential } from '../registry/credentials';
import { ownerKeys } from '../redis-keys';

/** A dashboard session lasts a working day (12 h): sign in in the morning, not again until tomorrow. */
export const SESSION_TTL_SECONDS = 12 * 3600;
/** An owner's setup link (first sign-in, reset) is good for a day: long enough to reach the owner, short if it leaks. */
export const OWNER_SETUP_TTL_SECONDS = 24 * 3600;

/**
 * Dashboard sessions, server-side in Redis: the cookie holds a random token, Redis only its SHA-256, so a copy of
 * Redis signs nobody in. Each session has its own CSRF token (sent back in X-CSRF-Token on every change). An owner's
 * sessions are listed in one set, so signing out (or an operator's reset) ends all of them at once.
 */
export interface Session {
  owner: string;
  csrf: string;
  createdAt: string;
}

const key = {
  session: ownerKeys.session,
  ofOwner: ownerKeys.sessionsOf,
};

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
  ) {}

  /** A new session; the token goes into the cookie and nowhere else. */
  async open(owner: string, now: Date): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const session: Session = { owner, csrf: randomBytes(32).toString('base64url'), createdAt: now.toISOString() };
    const hash = hashCredential(token);
    await this.redis
      .multi()
      .set(key.session(hash), JSON.stringify(session), 'EX', this.ttlSeconds)
      .sadd(key.ofOwner(owner), hash)
      .expire(key.ofOwner(owner), this.ttlSeconds)
      .exec();
    return { token, session };
  }

  async find(token: string): Promise<Session | null> {
    if (token.length < 16 || token.length > 128) return null;
    const text = await this.redis.get(key.session(hashCredential(token)));
    return text === null ? null : (JSON.parse(text) as Session);
  }

  /** Ends every session of the owner (sign-out everywhere, a reset, a disabled owner). */
  async endAll(owner: string): Promise<number> {
    const hashes = await this.redis.smembers(key.ofOwner(owner));
    const tx = this.redis.multi().del(key.ofOwner(owner));
    for (const h of hashes) tx.del(key.session(h));
    await tx.exec();
    return hashes.length;
  }
}
