import type { Redis } from 'ioredis';
import { accountSchema, type Account, type SecretGrant, type TokenGrant } from './model';
import { hashCredential, sameHash } from './credentials';
import type { Instrument } from '../bridge/protocol';
import type { VolumeRules } from '../risk/rules';

/** The registry (the dashboard's data): accounts, hashed secrets and tokens, links, risk settings. */
export interface Registry {
  authenticateSecret(secret: string): Promise<SecretGrant | null>;
  authenticateToken(token: string): Promise<TokenGrant | null>;
  authenticateBridge(token: string): Promise<Account | null>;
  getAccount(id: string): Promise<Account | null>;
  getAccounts(ids: readonly string[]): Promise<(Account | null)[]>;
  listAccountIds(): Promise<string[]>;
  putAccount(account: Account, bridgeTokenHash?: string): Promise<void>;
  putSecret(grant: SecretGrant): Promise<void>;
  putToken(grant: TokenGrant): Promise<void>;
  deleteSecret(hash: string): Promise<void>;
  deleteToken(hash: string): Promise<void>;
  /** The version a bridge reported in hello; the capability check uses it from then on. */
  recordBridgeVersion(accountId: string, version: string): Promise<void>;
  /** The symbols a bridge reported in hello (replacing the previous list). */
  recordInstruments(accountId: string, instruments: Instrument[]): Promise<void>;
  /** Volume rules of one symbol per account, trying each name in turn (the broker's, then the trader's); one round trip. */
  volumeRules(lookups: readonly { accountId: string; symbols: string[] }[]): Promise<(VolumeRules | undefined)[]>;
}

const key = {
  account: (id: string) => `es:account:${id}`,
  accounts: 'es:accounts',
  secret: (hash: string) => `es:secret:${hash}`,
  token: (hash: string) => `es:token:${hash}`,
  bridge: (hash: string) => `es:bridge:${hash}`,
  accountBridge: (id: string) => `es:account-bridge:${id}`,
  instruments: (id: string) => `es:instruments:{${id}}`,
};

export class RedisRegistry implements Registry {
  constructor(private readonly redis: Redis) {}

  async authenticateSecret(secret: string): Promise<SecretGrant | null> {
    return this.lookup<SecretGrant>(key.secret, secret);
  }

  async authenticateToken(token: string): Promise<TokenGrant | null> {
    return this.lookup<TokenGrant>(key.token, token);
  }

  async authenticateBridge(token: string): Promise<Account | null> {
    const hash = hashCredential(token);
    const raw = await this.redis.get(key.bridge(hash));
    if (!raw) return null;
    const { accountId, hash: stored } = JSON.parse(raw) as { accountId: string; hash: string };
    if (!sameHash(stored, hash)) return null;
    return this.getAccount(accountId);
  }

  async getAccount(id: string): Promise<Account | null> {
    const [account] = await this.getAccounts([id]);
    return account ?? null;
  }

  async getAccounts(ids: readonly string[]): Promise<(Account | null)[]> {
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(ids.map(key.account));
    return raws.map((raw) => (raw ? accountSchema.parse(JSON.parse(raw)) : null));
  }

  async listAccountIds(): Promise<string[]> {
    return (await this.redis.smembers(key.accounts)).sort();
  }

  async putAccount(account: Account, bridgeTokenHash?: string): Promise<void> {
    const tx = this.redis.multi().set(key.account(account.id), JSON.stringify(account)).sadd(key.accounts, account.id);
    if (bridgeTokenHash) {
      // One bridge token per account: a new one replaces (and so revokes) the old.
      const old = await this.redis.get(key.accountBridge(account.id));
      if (old && old !== bridgeTokenHash) tx.del(key.bridge(old));
      tx.set(key.bridge(bridgeTokenHash), JSON.stringify({ accountId: account.id, hash: bridgeTokenHash }));
      tx.set(key.accountBridge(account.id), bridgeTokenHash);
    }
    await tx.exec();
  }

  async putSecret(grant: SecretGrant): Promise<void> {
    await this.redis.set(key.secret(grant.hash), JSON.stringify(grant));
  }

  async putToken(grant: TokenGrant): Promise<void> {
    await this.redis.set(key.token(grant.hash), JSON.stringify(grant));
  }

  async deleteSecret(hash: string): Promise<void> {
    await this.redis.del(key.secret(hash));
  }

  async deleteToken(hash: string): Promise<void> {
    await this.redis.del(key.token(hash));
  }

  async recordBridgeVersion(accountId: string, version: string): Promise<void> {
    const account = await this.getAccount(accountId);
    if (!account || account.bridgeVersion === version) return;
    await this.redis.set(key.account(accountId), JSON.stringify({ ...account, bridgeVersion: version }));
  }

  // Admin reads (the admin CLI; not on the request path). SCAN, never KEYS, so a large registry does not stall Redis.

  /** The secrets whose SHA-256 (lowercase hex) starts with `prefix`; every secret for an empty prefix. */
  async findSecretsByHashPrefix(prefix: string): Promise<SecretGrant[]> {
    return this.scanGrants<SecretGrant>(key.secret(''), prefix);
  }

  /** The API tokens whose SHA-256 (lowercase hex) starts with `prefix`; every token for an empty prefix. */
  async findTokensByHashPrefix(prefix: string): Promise<TokenGrant[]> {
    return this.scanGrants<TokenGrant>(key.token(''), prefix);
  }

  /** Whether the account has a bridge token (its hash is never handed out). */
  async hasBridgeToken(accountId: string): Promise<boolean> {
    return (await this.redis.exists(key.accountBridge(accountId))) === 1;
  }

  private async scanGrants<T extends { hash: string }>(keyPrefix: string, hashPrefix: string): Promise<T[]> {
    if (!/^[0-9a-f]{0,64}$/.test(hashPrefix)) throw new Error('a hash prefix is lowercase hex, at most 64 characters');
    const keys = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${keyPrefix}${hashPrefix}*`, 'COUNT', 500);
      for (const k of batch) keys.add(k);
      cursor = next;
    } while (cursor !== '0');
    if (keys.size === 0) return [];
    const raws = await this.redis.mget([...keys]);
    return raws
      .flatMap((raw) => (raw ? [JSON.parse(raw) as T] : []))
      .sort((a, b) => a.hash.localeCompare(b.hash));
  }

  async recordInstruments(accountId: string, instruments: Instrument[]): Promise<void> {
    const tx = this.redis.multi().del(key.instruments(accountId));
    if (instruments.length > 0) {
      const fields = instruments.flatMap((i) => [i.name.toUpperCase(), JSON.stringify({ step: i.volumeStep, min: i.volumeMin, max: i.volumeMax })]);
      tx.hset(key.instruments(accountId), ...fields);
    }
    await tx.exec();
  }

  async volumeRules(lookups: readonly { accountId: string; symbols: string[] }[]): Promise<(VolumeRules | undefined)[]> {
    if (lookups.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const l of lookups) pipeline.hmget(key.instruments(l.accountId), ...l.symbols.map((s) => s.toUpperCase()));
    const results = (await pipeline.exec()) ?? [];
    return results.map(([err, values]) => {
      if (err) throw err;
      const found = (values as (string | null)[]).find((v) => v !== null);
      return found ? (JSON.parse(found) as VolumeRules) : undefined;
    });
  }

  private async lookup<T extends { hash: string }>(keyOf: (hash: string) => string, credential: string): Promise<T | null> {
    const hash = hashCredential(credential);
    const raw = await this.redis.get(keyOf(hash));
    if (!raw) return null;
    const record = JSON.parse(raw) as T;
    return sameHash(record.hash, hash) ? record : null;
  }
}
