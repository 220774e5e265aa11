import type { Redis } from 'ioredis';
import { bridgeKeys, registryKeys } from '../redis-keys';
import { hashCredential, newCredential, sameHash } from '../registry/credentials';

/**
 * A multi-account session lasts this long after its last poll: a bridge polls every few seconds, so an hour without
 * one is a bridge that went away (its next start says hello again and gets a new session).
 */
const SESSION_IDLE_TTL_MS = 3600 * 1000;

/**
 * The multi-account sessions (protocol 1.7) in Redis. A session holds, for each account its hello admitted, the hash
 * of the bridge token that admitted it; a call on the session serves an account only while that token is still the
 * account's bridge token (a rotation or revocation drops the account from the very next call: fail closed).
 */
const JOIN_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

export class SessionStore {
  constructor(private readonly redis: Redis) {}

  /** A new session for the admitted accounts (accountId → the hash of its bridge token); the token is shown once. */
  async create(admitted: ReadonlyMap<string, string>): Promise<string> {
    const token = newCredential('bss');
    const key = bridgeKeys.multiAccountSession(hashCredential(token));
    // One MULTI: the session exists whole with its expiry, or not at all.
    await this.redis.multi().hset(key, Object.fromEntries(admitted)).pexpire(key, SESSION_IDLE_TTL_MS).exec();
    return token;
  }

  /**
   * Adds the admitted accounts to a session that still exists (a late account, or one said hello for again) and keeps
   * it alive; undefined when there is no such session (the caller makes a new one). The session's other accounts are
   * untouched: their delivery sessions go on.
   */
  async join(sessionToken: string, admitted: ReadonlyMap<string, string>): Promise<string | undefined> {
    const key = bridgeKeys.multiAccountSession(hashCredential(sessionToken));
    // Only an existing hash grows: a lapsed session is never brought back with just the newcomers in it.
    const added = (await this.redis.eval(JOIN_SCRIPT, 1, key, String(SESSION_IDLE_TTL_MS), ...[...admitted].flat())) as number;
    return added === 1 ? sessionToken : undefined;
  }

  /** Whether the session still exists (one EXISTS): what a waiting long-poll looks at while it waits. */
  async exists(sessionToken: string): Promise<boolean> {
    return (await this.redis.exists(bridgeKeys.multiAccountSession(hashCredential(sessionToken)))) === 1;
  }

  /**
   * The accounts the session serves now: every admitted account (or, with `named`, every one of those the session
   * admitted) whose bridge token is still the one that admitted it. Two round trips whatever the number of accounts
   * (the session's hash, then each account's token in one pipeline); refreshes the session's expiry. A call that names
   * its accounts reads only theirs: a reports call of 1,000 accounts in a session of 10,000 reads 1,000 tokens, not
   * 10,000. Undefined: no such session (unknown, expired).
   */
  async accounts(sessionToken: string, named?: readonly string[]): Promise<{ served: string[]; dropped: string[] } | undefined> {
    const key = bridgeKeys.multiAccountSession(hashCredential(sessionToken));
    const admitted = named ? await this.admittedAmong(key, named) : await this.allAdmitted(key);
    if (!admitted) return undefined;
    const ids = Object.keys(admitted);
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.get(registryKeys.accountBridgeToken(id));
    const current = (await pipeline.exec()) ?? [];
    const served: string[] = [];
    const dropped: string[] = [];
    ids.forEach((id, i) => {
      const [err, hash] = current[i] ?? [];
      if (err) throw err;
      (typeof hash === 'string' && sameHash(hash, admitted[id]!) ? served : dropped).push(id);
    });
    return { served, dropped };
  }

  private async allAdmitted(key: string): Promise<Record<string, string> | undefined> {
    const [[, admitted]] = ((await this.redis.multi().hgetall(key).pexpire(key, SESSION_IDLE_TTL_MS).exec()) ?? [[null, {}]]) as [
      [unknown, Record<string, string>],
    ];
    return admitted && Object.keys(admitted).length > 0 ? admitted : undefined;
  }

  private async admittedAmong(key: string, named: readonly string[]): Promise<Record<string, string> | undefined> {
    const [[, exists], [, hashes]] = ((await this.redis
      .multi()
      .exists(key)
      .hmget(key, ...named)
      .pexpire(key, SESSION_IDLE_TTL_MS)
      .exec()) ?? []) as [[unknown, number], [unknown, (string | null)[]]];
    if (exists !== 1) return undefined;
    const admitted: Record<string, string> = {};
    named.forEach((id, i) => {
      const hash = hashes?.[i];
      if (typeof hash === 'string') admitted[id] = hash;
    });
    return admitted;
  }
}
