import type { Redis } from 'ioredis';
import type { AuditEntry, Owner, OwnerStatus } from '../domain/owner';
import { ownerKeys } from '../redis-keys';

/**
 * Owners as Redis hashes: status, the argon2id hash of the password, the sealed TOTP seed, the last TOTP step used
 * (a code is accepted once), and while an operator's setup link is open, its hash and the seed offered with it.
 * The setup link is a random token whose SHA-256 indexes the owner for its lifetime only.
 */

export interface OwnerRecord extends Owner {
  passwordHash?: string;
  totpSealed?: string;
  totpLastStep: number;
  /** The seed shown on the setup page, until the owner proves it with a code. */
  pendingTotpSealed?: string;
  setupHash?: string;
}

const key = {
  owner: ownerKeys.owner,
  owners: ownerKeys.owners,
  setup: ownerKeys.setup,
  audit: ownerKeys.audit,
};

const AUDIT_KEEP = 1000;

/** Sets the TOTP step only if it is later than the last one used: a code cannot be replayed in its window. */
const USE_TOTP_STEP = `
local last = tonumber(redis.call('HGET', KEYS[1], 'totpLastStep') or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('HSET', KEYS[1], 'totpLastStep', ARGV[1])
return 1`;

/** Ends a setup: only while the link is still the owner's open one, so two tabs cannot both complete it. */
const COMPLETE_SETUP = `
if redis.call('HGET', KEYS[1], 'setupHash') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'active', 'passwordHash', ARGV[2], 'totpSealed', ARGV[3], 'totpLastStep', ARGV[4])
redis.call('HDEL', KEYS[1], 'setupHash', 'pendingTotpSealed')
redis.call('DEL', KEYS[2])
return 1`;

export class OwnerStore {
  constructor(private readonly redis: Redis) {}

  async get(id: string): Promise<OwnerRecord | null> {
    const f = await this.redis.hgetall(key.owner(id));
    if (!f.id) return null;
    return {
      id: f.id,
      status: f.status as OwnerStatus,
      createdAt: f.createdAt ?? '',
      totpLastStep: Number(f.totpLastStep ?? 0),
      ...(f.passwordHash ? { passwordHash: f.passwordHash } : {}),
      ...(f.totpSealed ? { totpSealed: f.totpSealed } : {}),
      ...(f.pendingTotpSealed ? { pendingTotpSealed: f.pendingTotpSealed } : {}),
      ...(f.setupHash ? { setupHash: f.setupHash } : {}),
    };
  }

  async list(): Promise<Owner[]> {
    const ids = (await this.redis.smembers(key.owners)).sort();
    const owners = await Promise.all(ids.map((id) => this.get(id)));
    return owners.flatMap((o) => (o ? [{ id: o.id, status: o.status, createdAt: o.createdAt }] : []));
  }

  /**
   * Opens a setup link for the owner (creating a pending owner if there is none): a new link replaces the old one.
   * With `reset`, an active owner's password and second factor are cleared too (the operator's recovery).
   */
  async openSetup(id: string, setupHash: string, ttlSeconds: number, now: Date, reset: boolean): Promise<void> {
    const previous = await this.redis.hget(key.owner(id), 'setupHash');
    const tx = this.redis.multi();
    if (previous) tx.del(key.setup(previous));
    tx.hsetnx(key.owner(id), 'id', id).hsetnx(key.owner(id), 'createdAt', now.toISOString()).hsetnx(key.owner(id), 'status', 'pending');
    tx.hset(key.owner(id), 'setupHash', setupHash).hdel(key.owner(id), 'pendingTotpSealed');
    if (reset) tx.hset(key.owner(id), 'status', 'pending').hdel(key.owner(id), 'passwordHash', 'totpSealed');
    tx.set(key.setup(setupHash), id, 'EX', ttlSeconds).sadd(key.owners, id);
    await tx.exec();
  }

  /** The owner whose open setup link this is; null once used, replaced or expired. */
  async ownerOfSetup(setupHash: string): Promise<OwnerRecord | null> {
    const id = await this.redis.get(key.setup(setupHash));
    if (id === null) return null;
    const owner = await this.get(id);
    return owner?.setupHash === setupHash && owner.status !== 'disabled' ? owner : null;
  }

  async offerTotp(id: string, sealed: string): Promise<void> {
    await this.redis.hset(key.owner(id), 'pendingTotpSealed', sealed);
  }

  async completeSetup(id: string, setupHash: string, passwordHash: string, totpSealed: string, totpStep: number): Promise<boolean> {
    const done = await this.redis.eval(COMPLETE_SETUP, 2, key.owner(id), key.setup(setupHash), setupHash, passwordHash, totpSealed, totpStep);
    return Number(done) === 1;
  }

  async useTotpStep(id: string, step: number): Promise<boolean> {
    return Number(await this.redis.eval(USE_TOTP_STEP, 1, key.owner(id), step)) === 1;
  }

  async setStatus(id: string, status: OwnerStatus): Promise<boolean> {
    if (!(await this.redis.exists(key.owner(id)))) return false;
    await this.redis.hset(key.owner(id), 'status', status);
    return true;
  }

  async audit(id: string, entry: AuditEntry): Promise<void> {
    await this.redis
      .multi()
      .lpush(key.audit(id), JSON.stringify(entry))
      .ltrim(key.audit(id), 0, AUDIT_KEEP - 1)
      .exec();
  }

  /** Newest first. */
  async auditLog(id: string, limit: number): Promise<AuditEntry[]> {
    return (await this.redis.lrange(key.audit(id), 0, limit - 1)).map((t) => JSON.parse(t) as AuditEntry);
  }
}
