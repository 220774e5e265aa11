import type { Redis } from 'ioredis';
import { accountSchema, type Account, type MadeByOwner } from '../domain/account';
import type { OwnerIndex } from './owner-index';
import { accountFields, bridgeRecord, isWrongType, key } from './records';
import { ALREADY_EXISTS, CHANGED_MEANWHILE, CONVERT_ACCOUNT, LEGACY_RECORD, NO_ACCOUNT, OWNER_DIFFERS, runScript, WRITE_ACCOUNT, WRITE_GRANT } from './scripts';

/**
 * The registry's guarded writes: each checks what it depends on (the account's owner, the record as it was read) in
 * the same Redis script that writes, and meets a record stored before field-level updates by converting it first.
 */

/** 'owner_changed': the account went to another owner, and its bridge token was revoked unless a new one was set. */
export type WriteResult = 'written' | 'owner_changed';

/** A write the registry refused: the account is missing or exists, or belongs to another owner than required. */
export class RegistryRefusal extends Error {
  constructor(
    readonly reason: 'no_account' | 'exists' | 'owner_differs' | 'changed_meanwhile',
    message: string,
  ) {
    super(message);
  }
}

export type AccountWriteMode = 'update' | 'create' | 'replace';

export async function writeAccount(
  redis: Redis,
  ownerIndex: OwnerIndex,
  mode: AccountWriteMode,
  id: string,
  fields: Partial<Account>,
  opts: { expectOwner?: string; bridgeTokenHash?: string; madeByOwner?: MadeByOwner },
): Promise<WriteResult> {
  const hash = opts.bridgeTokenHash ?? '';
  const args = [
    mode,
    opts.expectOwner === undefined ? '' : JSON.stringify(opts.expectOwner),
    id,
    key.bridge(''),
    hash,
    hash ? bridgeRecord(id, hash, opts.madeByOwner) : '',
    ...accountFields(fields),
  ];
  for (let attempt = 0; ; attempt++) {
    const result = Number(await runScript(redis, WRITE_ACCOUNT, [key.account(id), key.accounts, key.accountBridge(id)], args));
    if ((result === 1 || result === 2) && fields.owner !== undefined) await ownerIndex.add(fields.owner, 'accounts', id);
    if (result === 1) return 'written';
    if (result === 2) return 'owner_changed';
    if (result === LEGACY_RECORD && attempt < 3) {
      await convertLegacyAccount(redis, id);
      continue;
    }
    if (result === NO_ACCOUNT) throw new RegistryRefusal('no_account', `no account ${id}`);
    if (result === ALREADY_EXISTS) throw new RegistryRefusal('exists', `account ${id} already exists`);
    if (result === OWNER_DIFFERS) throw new RegistryRefusal('owner_differs', `account ${id} changed owner meanwhile`);
    throw new RegistryRefusal('changed_meanwhile', `account ${id} kept changing; try again`);
  }
}

/** Converts one account stored as a JSON string to the hash; false when there was nothing to convert. */
export async function convertLegacyAccount(redis: Redis, id: string): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    let raw: string | null;
    try {
      raw = await redis.get(key.account(id));
    } catch (err) {
      if (isWrongType(err)) return false;
      throw err;
    }
    if (raw === null) return false;
    const fields = accountFields(accountSchema.parse(JSON.parse(raw)));
    if (Number(await runScript(redis, CONVERT_ACCOUNT, [key.account(id)], [raw, ...fields])) === 1) return true;
  }
  throw new RegistryRefusal('changed_meanwhile', `account ${id} kept changing; try again`);
}

/** Writes a grant if it is still `expected`, after checking its accounts' owner in the same step. */
export async function writeGrant(
  redis: Redis,
  recordKey: string,
  expected: string,
  next: string,
  accounts: readonly string[],
  owner: string | undefined,
): Promise<boolean> {
  const keys = [recordKey, ...(owner === undefined ? [] : accounts.map(key.account))];
  for (let attempt = 0; ; attempt++) {
    const [code, index] = (await runScript(redis, WRITE_GRANT, keys, [expected, next, owner === undefined ? '' : JSON.stringify(owner)])) as number[];
    if (code === 1) return true;
    if (code === CHANGED_MEANWHILE) return false;
    const account = accounts[(index ?? 1) - 1]!;
    if (code === LEGACY_RECORD && attempt < 3) {
      await convertLegacyAccount(redis, account);
      continue;
    }
    if (code === NO_ACCOUNT) throw new RegistryRefusal('no_account', `unknown account ${account}`);
    throw new RegistryRefusal('owner_differs', `account ${account} belongs to another owner than ${owner}`);
  }
}

/** Changes a grant record as it is now (read, change, write only if nobody changed it meanwhile; retried). */
export async function modifyGrant<T extends { hash: string }>(redis: Redis, recordKey: string, change: (grant: T) => T | null): Promise<T | null> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const raw = await redis.get(recordKey);
    if (raw === null) return null;
    const next = change(JSON.parse(raw) as T);
    if (await writeGrant(redis, recordKey, raw, next === null ? '' : JSON.stringify(next), [], undefined)) return next;
  }
  throw new RegistryRefusal('changed_meanwhile', 'the record kept changing; try again');
}
