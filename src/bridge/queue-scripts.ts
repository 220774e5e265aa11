import { MONOTONIC_NEXT_LUA } from './monotonic';

/**
 * The command queue's Lua scripts (src/bridge/queue.ts): each step that must not interleave with another ingress's or
 * a workflow's is one script, run atomically by Redis on the account's slot.
 */

/** A long-poll's end announced on the wake channel: this prefix and the newer poll's generation. */
export const SUPERSEDED = 'poll:';

/**
 * Whether Redis lost the account's data since the command was numbered: the generation it was numbered in (empty when
 * unknown: a signal accepted before generations existed) is no longer the account's. Then a missing, withdrawn or
 * overtaken record says nothing of what a bridge took before the loss.
 */
const GENERATION_LOST = `
local function generationLost(key, expected)
  return expected ~= '' and redis.call('GET', key) ~= expected
end`;

// KEYS: queue, command, pending marks, handed-out mark, data generation; ARGV: command, seq, commandId, channel, resend
// (1 or 0), retentionSeconds, the command's data generation. The pending mark is removed by its number (its score),
// whatever deadline it carries by now. A command whose mark is gone (lapsed: its ingress died before confirming the
// start) while a later command of the account was handed out already would run out of acceptance order: it is refused,
// and the refusal is remembered for a retry. A resend (Redis forgot a command a bridge may hold), or a command numbered
// before Redis lost the account's data (whose marks went with it), always goes in.
const queueAnyOrder = (queued: string) => `
redis.call('HDEL', KEYS[2], 'withdrawn', 'overtaken')
redis.call('HSET', KEYS[2], 'command', ARGV[1], 'seq', ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return ${queued}`;
const queueNew = (overtaken: string, queued: string) => `
if marked == 0 and not lost and tonumber(redis.call('GET', KEYS[4]) or '0') > tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[2], 'overtaken', '1')
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[6]))
  return ${overtaken}
end
${queueAnyOrder(queued)}`;

// 0 queued already, 1 queued now, 2 overtaken, 3 forgotten: Redis lost the account's data since the numbering and now
// holds the command withdrawn or overtaken, which tells nothing of a bridge of before the loss. A resend of a command
// without a report puts it back on the queue whatever Redis says of it (only past the command's expiry: a bridge that
// never executed it answers `expired`).
export const ENQUEUE = `
${GENERATION_LOST}
local marked = redis.call('ZREMRANGEBYSCORE', KEYS[3], ARGV[2], ARGV[2])
local lost = generationLost(KEYS[5], ARGV[7])
local h = redis.call('HMGET', KEYS[2], 'overtaken', 'withdrawn', 'report', 'command')
if h[3] then return 0 end
if ARGV[5] == '1' then
  if h[4] and redis.call('ZSCORE', KEYS[1], ARGV[3]) then return 0 end
  ${queueAnyOrder('1')}
end
if h[1] then return lost and 3 or 2 end
if h[2] and lost then return 3 end
-- Withdrawn, or queued already: the fields read above say so (every other field of a record comes with these).
if h[2] or h[4] then return 0 end
${queueNew('2', '1')}`;

// KEYS and ARGV as ENQUEUE's (resend always 0). ENQUEUE, answering what became of a command already there
// (src/bridge/queue.ts, adopt); `forgotten` as ENQUEUE's 3.
export const ADOPT = `
${GENERATION_LOST}
local marked = redis.call('ZREMRANGEBYSCORE', KEYS[3], ARGV[2], ARGV[2])
local lost = generationLost(KEYS[5], ARGV[7])
local h = redis.call('HMGET', KEYS[2], 'overtaken', 'withdrawn', 'report', 'command')
if h[3] then return {'reported', h[3]} end
if lost and (h[1] or h[2]) then return {'forgotten'} end
if h[1] then return {'overtaken'} end
if h[2] then return {'withdrawn'} end
if h[4] then return {'queued'} end
${queueNew("{'overtaken'}", "{'queued'}")}`;

// KEYS: queue, session, pending marks, handed-out mark; ARGV: now, redeliverAfterMs, limit, command key prefix
// Hands out commands in acceptance order, stopping before any command that a lower pending number must precede.
// The first element of the answer is when a command queued now becomes due without any announcement (a pending mark
// lapses, a delivered command is due for redelivery), or -1: a waiting long-poll sleeps until then, not on a timer.
export const TAKE = `
local now = tonumber(ARGV[1])
local hold = math.huge
local holdUntil = -1
while true do
  local first = redis.call('ZRANGE', KEYS[3], 0, 0)
  if #first == 0 then break end
  local seq, deadline = string.match(first[1], '^(%d+):(%d+)$')
  if seq and tonumber(deadline) >= now then hold = tonumber(seq) holdUntil = tonumber(deadline) + 1 break end
  redis.call('ZREM', KEYS[3], first[1])
end
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1, 'WITHSCORES')
local session = redis.call('GET', KEYS[2]) or '0'
local out = {-1}
local top = 0
local function due(at) if out[1] < 0 or at < out[1] then out[1] = at end end
for i = 1, #ids, 2 do
  local id = ids[i]
  if tonumber(ids[i + 1]) > hold then due(holdUntil) break end
  local key = ARGV[4] .. id
  local h = redis.call('HMGET', key, 'command', 'deliveredAt', 'session')
  if h[1] then
    if (not h[2]) or h[3] ~= session or now - tonumber(h[2]) >= tonumber(ARGV[2]) then
      redis.call('HSET', key, 'deliveredAt', ARGV[1], 'session', session)
      redis.call('HSETNX', key, 'firstDeliveredAt', ARGV[1])
      table.insert(out, h[1])
      top = tonumber(ids[i + 1])
    else
      due(tonumber(h[2]) + tonumber(ARGV[2]))
    end
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
if top > 0 and top > tonumber(redis.call('GET', KEYS[4]) or '0') then redis.call('SET', KEYS[4], string.format('%d', top)) end
return out`;

// KEYS: poll generation; ARGV: channel, ttl. Numbers a new long-poll and tells the older ones (on any ingress) to end.
// Every ingress remembers the newest generation it saw, so a number must never go back, even when Redis lost the
// counter: a counter restarted at 1 numbers every new poll below the remembered one, and each is superseded at once.
// So a generation is at least Redis's clock in microseconds (src/bridge/monotonic.ts).
export const NEW_POLL = `
${MONOTONIC_NEXT_LUA}
local gen = monotonicNext(KEYS[1], 1000000)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[1], '${SUPERSEDED}' .. string.format('%d', gen))
return gen`;

// KEYS: queue, command, data generation; ARGV: commandId, queued (1 or 0), the command's data generation
export const WITHDRAW = `
${GENERATION_LOST}
local h = redis.call('HMGET', KEYS[2], 'report', 'deliveredAt', 'command')
if h[1] then return 'reported' end
if h[2] then return 'delivered' end
if generationLost(KEYS[3], ARGV[3]) then return 'forgotten' end
if (not h[3]) and ARGV[2] == '1' then return 'forgotten' end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'withdrawn', '1')
return 'withdrawn'`;

// KEYS: queue; ARGV: command key prefix. WITHDRAW for every queued command at once, so no take slips between two.
export const WITHDRAW_UNTAKEN = `
local withdrawn, handed = {}, {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local key = ARGV[1] .. id
  local h = redis.call('HMGET', key, 'report', 'deliveredAt', 'command')
  if h[2] and not h[1] then
    table.insert(handed, id)
  elseif h[3] and not h[1] then
    redis.call('ZREM', KEYS[1], id)
    redis.call('HSET', key, 'withdrawn', '1')
    table.insert(withdrawn, id)
  end
end
return {withdrawn, handed}`;

// KEYS: queue, command, orphans; ARGV: commandId, report, retentionSeconds, now (ms), orphan ttl (ms), orphan max
// The report of a command Redis holds is kept with it. A command Redis does not hold (it lost its data, or there never
// was one) gets a brief record, counted against the account's bound in the same step, so that a workflow or a resend
// finds it; the workflow, not Redis, decides whether it counts. A withdrawn or overtaken command was never handed out.
export const REPORT = `
local h = redis.call('HMGET', KEYS[2], 'command', 'report', 'orphan', 'withdrawn', 'overtaken')
if h[2] then
  if h[3] or not h[1] then return {'orphan-repeat', h[2]} end
  return {'repeat', h[2], h[1]}
end
if h[4] or h[5] then return {'closed'} end
if not h[1] then
  local now = tonumber(ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return {'full'} end
  redis.call('HSET', KEYS[2], 'report', ARGV[2], 'orphan', '1')
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[5]), ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
  return {'orphan', ARGV[2]}
end
redis.call('HSET', KEYS[2], 'report', ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[3]))
return {'first', ARGV[2], h[1]}`;

// KEYS: command, orphans; ARGV: commandId. Only a brief record goes: never the record of a command Redis holds.
export const DROP_ORPHAN = `
if redis.call('HGET', KEYS[1], 'orphan') then redis.call('DEL', KEYS[1]) end
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`;
