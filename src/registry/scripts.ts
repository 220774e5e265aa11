import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { key } from './records';

/**
 * The registry's writes as Lua scripts, so each one is a single atomic step in Redis: a bridge hello that records its
 * version cannot undo an operator's lock, and a secret or token cannot be linked to an account whose owner changed
 * between the check and the write. Values are opaque JSON texts made in TypeScript; the scripts never re-encode JSON
 * (Redis's cjson would turn an empty list into an object).
 *
 * An account is a hash: one field per top-level field of the account, each holding that value's JSON text.
 */

/** What the scripts answer besides success. */
export const LEGACY_RECORD = -1;
export const NO_ACCOUNT = 0;
export const ALREADY_EXISTS = -2;
export const OWNER_DIFFERS = -3;
export const CHANGED_MEANWHILE = -4;

/** How long a replaced bridge token is remembered (only as its hash) to name it on the account page when it is used. */
const RETIRED_TOKEN_KEEP_SECONDS = 7 * 24 * 3600;

/**
 * Writes an account. KEYS: account hash, set of account ids, the account's current bridge token hash.
 * ARGV: mode (update | create | replace), expected owner JSON ('' for any), account id, bridge key prefix,
 * new bridge token hash ('' for none), its record, then field/value pairs.
 * When the owner changes, the old bridge token is revoked unless a new one is set in the same call. A token replaced
 * by a new one is remembered as retired (its hash, for a week) for the account page's "old token used" refusal, unless
 * the owner changes in the same call (the old owner's bridge must not show on the new owner's page).
 * Returns 1 (written), 2 (written, the owner changed), or NO_ACCOUNT, ALREADY_EXISTS, OWNER_DIFFERS, LEGACY_RECORD.
 */
export const WRITE_ACCOUNT = `
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'string' then return ${LEGACY_RECORD} end
local exists = t == 'hash'
local mode = ARGV[1]
if mode == 'update' and not exists then return ${NO_ACCOUNT} end
if mode == 'create' and exists then return ${ALREADY_EXISTS} end
local oldOwner = false
if exists then oldOwner = redis.call('HGET', KEYS[1], 'owner') end
if ARGV[2] ~= '' and oldOwner ~= ARGV[2] then return ${OWNER_DIFFERS} end
local newOwner = oldOwner
for i = 7, #ARGV, 2 do
  if ARGV[i] == 'owner' then newOwner = ARGV[i + 1] end
end
if mode == 'replace' then redis.call('DEL', KEYS[1]) end
if #ARGV >= 8 then redis.call('HSET', KEYS[1], unpack(ARGV, 7)) end
if mode ~= 'update' then redis.call('SADD', KEYS[2], ARGV[3]) end
local ownerChanged = exists and newOwner ~= oldOwner
local old = redis.call('GET', KEYS[3])
if ARGV[5] ~= '' then
  if old and old ~= ARGV[5] then
    redis.call('DEL', ARGV[4] .. old)
    if not ownerChanged then redis.call('SET', '${key.retiredBridge('')}' .. old, '{"accountId":"' .. ARGV[3] .. '","hash":"' .. old .. '"}', 'EX', ${RETIRED_TOKEN_KEEP_SECONDS}) end
  end
  redis.call('SET', ARGV[4] .. ARGV[5], ARGV[6])
  redis.call('SET', KEYS[3], ARGV[5])
elseif ownerChanged and old then
  redis.call('DEL', ARGV[4] .. old)
  redis.call('DEL', KEYS[3])
end
if ownerChanged then
  -- What the page says of the old owner's bridge is not the new owner's to read.
  redis.call('DEL', '${key.bridgeState('').slice(0, -1)}' .. ARGV[3] .. '}', '${key.bridgeSeen('').slice(0, -1)}' .. ARGV[3] .. '}',
    '${key.bridgeAnnounced('').slice(0, -1)}' .. ARGV[3] .. '}')
  return 2
end
return 1`;

/**
 * Turns an account stored as one JSON string (before field-level updates) into the hash, if it is still exactly
 * the text the caller converted. KEYS: account. ARGV: the old text, then field/value pairs. Returns 1, or
 * CHANGED_MEANWHILE.
 */
export const CONVERT_ACCOUNT = `
if redis.call('TYPE', KEYS[1]).ok ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then return ${CHANGED_MEANWHILE} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1`;

/**
 * Writes (or deletes) a secret or token record. KEYS: the record, then the accounts it links.
 * ARGV: expected current text ('*' for any, '' for none), new text ('' deletes), owner JSON the accounts must
 * have ('' for no check). Returns {1}, {CHANGED_MEANWHILE}, or {code, index of the account} for NO_ACCOUNT,
 * OWNER_DIFFERS, LEGACY_RECORD.
 */
export const WRITE_GRANT = `
if ARGV[1] ~= '*' then
  local current = redis.call('GET', KEYS[1]) or ''
  if current ~= ARGV[1] then return {${CHANGED_MEANWHILE}} end
end
if ARGV[3] ~= '' then
  for i = 2, #KEYS do
    local t = redis.call('TYPE', KEYS[i]).ok
    if t == 'none' then return {${NO_ACCOUNT}, i - 1} end
    if t == 'string' then return {${LEGACY_RECORD}, i - 1} end
    if redis.call('HGET', KEYS[i], 'owner') ~= ARGV[3] then return {${OWNER_DIFFERS}, i - 1} end
  end
end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return {1}`;

/**
 * The first hello of an account locked until its bridge connects: unlocks it, unless an operator has locked or
 * unlocked it meanwhile (that clears the flag). KEYS: account hash. Returns 1 when it unlocked, else 0.
 */
export const UNLOCK_AFTER_HELLO = `
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'unlockOnHello') ~= 'true' then return 0 end
redis.call('HSET', KEYS[1], 'unlockOnHello', 'false', 'status', '"active"')
return 1`;

/**
 * Revokes an account's bridge token, only while it is still the account's current one (a newer one stays).
 * KEYS: the account's current bridge token hash, the token's record. ARGV: its hash. Returns 1 when revoked, else 0.
 */
export const REVOKE_BRIDGE_TOKEN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1`;

const shas = new Map<string, string>();

/** EVALSHA, falling back to EVAL once when Redis does not have the script (a restart, a failover). */
export async function runScript(redis: Redis, script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
  let sha = shas.get(script);
  if (!sha) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return redis.eval(script, keys.length, ...keys, ...args);
    throw err;
  }
}
