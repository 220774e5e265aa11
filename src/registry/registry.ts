import type { Redis } from 'ioredis';
import { accountSchema, type Account, type BridgeFeature, type MadeByOwner, type SecretGrant, type TokenGrant } from '../domain/account';
import { credentialId, hashCredential, sameHash } from './credentials';
import { REVOKE_BRIDGE_TOKEN, runScript, UNLOCK_AFTER_HELLO } from './scripts';
import type { Instrument } from '../domain/bridge-protocol';
import type { VolumeRules } from '../domain/volume-rules';
import { OwnerIndex } from './owner-index';
import { accountFromFields, isWrongType, key, scanKeys, type BridgeTokenRecord } from './records';
import { indexOwners, migrateRegistry, soleOwner } from './migrations';
import { modifyGrant, writeAccount, writeGrant, type AccountWriteMode, type WriteResult } from './writes';

export { RegistryRefusal, type WriteResult } from './writes';

/** The registry (the dashboard's data): accounts, hashed secrets and tokens, links, risk settings. */
export interface Registry {
  authenticateSecret(secret: string): Promise<SecretGrant | null>;
  authenticateToken(token: string): Promise<TokenGrant | null>;
  authenticateBridge(token: string): Promise<Account | null>;
  /** The account whose bridge token this was before a newer one replaced it (kept a week); null for any other. */
  retiredBridgeAccount(token: string): Promise<string | null>;
  /** Unlocks an account that was locked until its bridge's first hello; false when it was not (any more). */
  unlockAfterHello(accountId: string): Promise<boolean>;
  getAccount(id: string): Promise<Account | null>;
  getAccounts(ids: readonly string[]): Promise<(Account | null)[]>;
  listAccountIds(): Promise<string[]>;
  /** Creates or replaces a whole account (the import); see WriteResult. */
  putAccount(account: Account, bridgeTokenHash?: string): Promise<WriteResult>;
  /** Creates or replaces a secret; refused (RegistryRefusal) unless every linked account exists and is the secret owner's. */
  putSecret(grant: SecretGrant): Promise<void>;
  /** Creates or replaces a token; refused (RegistryRefusal) unless every granted account exists and is the token owner's. */
  putToken(grant: TokenGrant): Promise<void>;
  deleteSecret(hash: string): Promise<void>;
  deleteToken(hash: string): Promise<void>;
  /**
   * The version and features a bridge reported in hello; the capability check uses them from then on, whatever an
   * import later writes into the account's record.
   */
  recordBridgeVersion(accountId: string, version: string, features?: readonly BridgeFeature[]): Promise<void>;
  /** The symbols a bridge reported in hello (replacing the previous list). */
  recordInstruments(accountId: string, instruments: Instrument[]): Promise<void>;
  /** Volume rules of one symbol per account, trying each name in turn (the broker's, then the trader's); one round trip. */
  volumeRules(lookups: readonly { accountId: string; symbols: string[] }[]): Promise<(VolumeRules | undefined)[]>;
}

export class RedisRegistry implements Registry {
  readonly ownerIndex: OwnerIndex;

  constructor(private readonly redis: Redis) {
    this.ownerIndex = new OwnerIndex(redis);
  }

  async authenticateSecret(secret: string): Promise<SecretGrant | null> {
    return this.lookup<SecretGrant>(key.secret, secret);
  }

  async authenticateToken(token: string): Promise<TokenGrant | null> {
    const grant = await this.lookup<TokenGrant>(key.token, token);
    if (!grant || grant.owner) return grant;
    // A token made before tokens had owners: it belongs to the one owner of its accounts. One spanning several
    // owners (or none) no longer works: it would show one owner's outcomes to another.
    const owner = soleOwner(await this.getAccounts(grant.accounts));
    if (owner === undefined) return null;
    const owned = { ...grant, owner };
    await this.writeGrant(key.token(grant.hash), JSON.stringify(grant), JSON.stringify(owned), [], undefined).catch(() => undefined);
    return owned;
  }

  async authenticateBridge(token: string): Promise<Account | null> {
    const hash = hashCredential(token);
    const raw = await this.redis.get(key.bridge(hash));
    if (!raw) return null;
    const { accountId, hash: stored } = JSON.parse(raw) as { accountId: string; hash: string };
    if (!sameHash(stored, hash)) return null;
    return this.getAccount(accountId);
  }

  async retiredBridgeAccount(token: string): Promise<string | null> {
    return (await this.lookup<{ accountId: string; hash: string }>(key.retiredBridge, token))?.accountId ?? null;
  }

  async unlockAfterHello(accountId: string): Promise<boolean> {
    return Number(await runScript(this.redis, UNLOCK_AFTER_HELLO, [key.account(accountId)], [])) === 1;
  }

  /** The id (first 12 hex digits of its hash) of the account's bridge token now; null when it has none. */
  async bridgeTokenId(accountId: string): Promise<string | null> {
    const hash = await this.redis.get(key.accountBridge(accountId));
    return hash ? credentialId(hash) : null;
  }

  /** The record of each of these accounts' current bridge tokens (accounts without one are left out). */
  async bridgeTokenRecords(accountIds: readonly string[]): Promise<BridgeTokenRecord[]> {
    const hashes = accountIds.length === 0 ? [] : await this.redis.mget(accountIds.map(key.accountBridge));
    const live = hashes.filter((h): h is string => h !== null);
    const raws = live.length === 0 ? [] : await this.redis.mget(live.map(key.bridge));
    return raws.flatMap((raw) => (raw ? [JSON.parse(raw) as BridgeTokenRecord] : []));
  }

  /** Revokes an account's bridge token if it is still the current one: its bridge is refused from then on. */
  async revokeBridgeToken(accountId: string, hash: string): Promise<boolean> {
    return Number(await runScript(this.redis, REVOKE_BRIDGE_TOKEN, [key.accountBridge(accountId), key.bridge(hash)], [hash])) === 1;
  }

  async getAccount(id: string): Promise<Account | null> {
    const [account] = await this.getAccounts([id]);
    return account ?? null;
  }

  /** One round trip; an account still stored as one JSON string (before field-level updates) costs one more. */
  async getAccounts(ids: readonly string[]): Promise<(Account | null)[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(key.account(id)).get(key.bridgeAnnounced(id));
    const results = (await pipeline.exec()) ?? [];
    return Promise.all(
      ids.map(async (id, i) => {
        const [[err, fields], [announcedErr, announced]] = [results[2 * i]!, results[2 * i + 1]!];
        if (announcedErr) throw announcedErr;
        const account = await (async () => {
          if (err) {
            if (!isWrongType(err)) throw err;
            const raw = await this.redis.get(key.account(id));
            return raw ? accountSchema.parse(JSON.parse(raw)) : null;
          }
          const record = fields as Record<string, string>;
          return Object.keys(record).length === 0 ? null : accountFromFields(record);
        })();
        return account && typeof announced === 'string' ? withAnnounced(account, announced) : account;
      }),
    );
  }

  async listAccountIds(): Promise<string[]> {
    return (await this.redis.smembers(key.accounts)).sort();
  }

  /** The import's upsert: the whole account is replaced. */
  async putAccount(account: Account, bridgeTokenHash?: string): Promise<WriteResult> {
    return this.writeAccount('replace', account.id, account, { bridgeTokenHash });
  }

  /** Creates an account; refused when one with this id exists. */
  async createAccount(account: Account, bridgeTokenHash?: string): Promise<void> {
    await this.writeAccount('create', account.id, account, { bridgeTokenHash });
  }

  /**
   * Sets only the given fields of an existing account, atomically: other fields, changed by anyone meanwhile, keep
   * their values. With `expectOwner` it is refused unless the account still has that owner.
   */
  async updateAccount(
    id: string,
    changes: Partial<Account>,
    opts: { expectOwner?: string; bridgeTokenHash?: string; madeByOwner?: MadeByOwner } = {},
  ): Promise<WriteResult> {
    return this.writeAccount('update', id, changes, opts);
  }

  async putSecret(grant: SecretGrant): Promise<void> {
    await this.writeGrant(key.secret(grant.hash), '*', JSON.stringify(grant), grant.accounts, grant.owner);
    await this.ownerIndex.add(grant.owner, 'secrets', grant.hash);
  }

  async putToken(grant: TokenGrant): Promise<void> {
    await this.writeGrant(key.token(grant.hash), '*', JSON.stringify(grant), grant.accounts, grant.owner);
    await this.ownerIndex.add(grant.owner, 'tokens', grant.hash);
  }

  /**
   * A new secret or token, unless its owner has `max` of the kind ('full', nothing left behind). The record first
   * (links checked), then its index entry as the cap's slot (OwnerIndex.claim); nobody holds the new value meanwhile.
   */
  async addGrant(kind: 'secrets' | 'tokens', grant: SecretGrant | TokenGrant, max: number): Promise<'added' | 'full'> {
    const recordKey = (kind === 'secrets' ? key.secret : key.token)(grant.hash);
    await this.writeGrant(recordKey, '*', JSON.stringify(grant), grant.accounts, grant.owner);
    if (await this.ownerIndex.claim(grant.owner, kind, grant.hash, max)) return 'added';
    await this.redis.del(recordKey);
    return 'full';
  }

  /** The owner's accounts (checked against each account's own owner). */
  async accountsOf(owner: string): Promise<Account[]> {
    const ids = await this.ownerIndex.members(owner, 'accounts');
    const accounts = await this.getAccounts(ids);
    const theirs = accounts.filter((a): a is Account => a?.owner === owner);
    await this.ownerIndex.drop(
      owner,
      'accounts',
      ids.filter((id, i) => accounts[i]?.owner !== owner),
    );
    return theirs;
  }

  async secretsOf(owner: string): Promise<SecretGrant[]> {
    return this.grantsOf<SecretGrant>(owner, 'secrets', key.secret);
  }

  async tokensOf(owner: string): Promise<TokenGrant[]> {
    return this.grantsOf<TokenGrant>(owner, 'tokens', key.token);
  }

  async deleteSecret(hash: string): Promise<void> {
    await this.redis.del(key.secret(hash));
  }

  async deleteToken(hash: string): Promise<void> {
    await this.redis.del(key.token(hash));
  }

  /**
   * Changes a token record as it is now (read, change, write only if nobody changed it meanwhile; retried). A token
   * revoked meanwhile stays revoked. `change` returning null deletes it. Returns the new grant, or null if it is gone.
   */
  async modifyToken(hash: string, change: (grant: TokenGrant) => TokenGrant | null): Promise<TokenGrant | null> {
    return this.modifyGrant<TokenGrant>(key.token(hash), change);
  }

  async modifySecret(hash: string, change: (grant: SecretGrant) => SecretGrant | null): Promise<SecretGrant | null> {
    return this.modifyGrant<SecretGrant>(key.secret(hash), change);
  }

  async recordBridgeVersion(accountId: string, version: string, features: readonly BridgeFeature[] = []): Promise<void> {
    // Beside the record, never in it: an import (which replaces the record) or an operator's edit made at the same
    // moment (a lock) leaves what the bridge announced as it is.
    const announced: Announced = { bridgeVersion: version, bridgeFeatures: [...features] };
    await this.redis.set(key.bridgeAnnounced(accountId), JSON.stringify(announced));
  }

  async recordInstruments(accountId: string, instruments: Instrument[]): Promise<void> {
    // One MULTI: the old list is replaced whole, never merged with a concurrent hello's.
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

  /**
   * After an account went to `owner`: every secret and token of another owner stops linking it. Run after the owner
   * change, so a link made meanwhile was already checked against the new owner. Returns the hashes it changed.
   */
  async unlinkFromOtherOwners(accountId: string, owner: string): Promise<{ secrets: string[]; tokens: string[] }> {
    const strip = <T extends { owner?: string; accounts: string[] }>(g: T): T | null =>
      g.owner === owner || !g.accounts.includes(accountId) ? null : { ...g, accounts: g.accounts.filter((a) => a !== accountId) };
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T is the kind of grant modifyGrant reads and writes back
    const changed = async <T extends { hash: string; owner?: string; accounts: string[] }>(grants: T[], keyOf: (h: string) => string) => {
      const done: string[] = [];
      for (const g of grants.filter((x) => strip(x) !== null)) {
        let touched = false;
        await this.modifyGrant<T>(keyOf(g.hash), (current) => {
          const next = strip(current);
          touched = next !== null;
          return next ?? current;
        });
        if (touched) done.push(g.hash);
      }
      return done;
    };
    return {
      secrets: await changed(await this.findSecretsByHashPrefix(''), key.secret),
      tokens: await changed(await this.findTokensByHashPrefix(''), key.token),
    };
  }

  /** Brings a registry written before field-level updates and token owners up to date (src/registry/migrations.ts). */
  async migrate(): Promise<{ accountsConverted: number; tokensOwned: number; tokensRevoked: string[] }> {
    return migrateRegistry(this.redis, this);
  }

  /** Lists every account, secret and token under its owner (a registry written before the owner index). Idempotent. */
  async indexOwners(): Promise<void> {
    await indexOwners(this);
  }

  private writeAccount(
    mode: AccountWriteMode,
    id: string,
    fields: Partial<Account>,
    opts: { expectOwner?: string; bridgeTokenHash?: string; madeByOwner?: MadeByOwner },
  ) {
    return writeAccount(this.redis, this.ownerIndex, mode, id, fields, opts);
  }

  private writeGrant(recordKey: string, expected: string, next: string, accounts: readonly string[], owner: string | undefined) {
    return writeGrant(this.redis, recordKey, expected, next, accounts, owner);
  }

  private modifyGrant<T extends { hash: string }>(recordKey: string, change: (grant: T) => T | null) {
    return modifyGrant(this.redis, recordKey, change);
  }

  private async scanGrants<T extends { hash: string }>(keyPrefix: string, hashPrefix: string): Promise<T[]> {
    if (!/^[0-9a-f]{0,64}$/.test(hashPrefix)) throw new Error('a hash prefix is lowercase hex, at most 64 characters');
    const keys = await scanKeys(this.redis, `${keyPrefix}${hashPrefix}*`);
    if (keys.length === 0) return [];
    const raws = await this.redis.mget(keys);
    return raws.flatMap((raw) => (raw ? [JSON.parse(raw) as T] : [])).sort((a, b) => a.hash.localeCompare(b.hash));
  }

  private async grantsOf<T extends { hash: string; owner?: string }>(owner: string, kind: 'secrets' | 'tokens', keyOf: (h: string) => string): Promise<T[]> {
    const hashes = await this.ownerIndex.members(owner, kind);
    if (hashes.length === 0) return [];
    const grants = (await this.redis.mget(hashes.map(keyOf))).map((raw) => (raw ? (JSON.parse(raw) as T) : null));
    await this.ownerIndex.drop(
      owner,
      kind,
      hashes.filter((_, i) => grants[i]?.owner !== owner),
    );
    return grants.filter((g): g is T => g?.owner === owner);
  }

  private async lookup<T extends { hash: string }>(keyOf: (hash: string) => string, credential: string): Promise<T | null> {
    const hash = hashCredential(credential);
    const raw = await this.redis.get(keyOf(hash));
    if (!raw) return null;
    const record = JSON.parse(raw) as T;
    return sameHash(record.hash, hash) ? record : null;
  }
}

/** What a bridge announced in hello, as stored beside its account's record. */
type Announced = Pick<Account, 'bridgeVersion' | 'bridgeFeatures'>;

/** Built once: zod compiles a schema on its first parse, and every bridge call reads its account through this. */
const announcedSchema = accountSchema.pick({ bridgeVersion: true, bridgeFeatures: true });

/** The account as its bridge announced itself: the record's version and features are the import's, until a hello. */
function withAnnounced(account: Account, raw: string): Account {
  const announced = announcedSchema.safeParse(JSON.parse(raw));
  return announced.success ? { ...account, ...announced.data } : account;
}
