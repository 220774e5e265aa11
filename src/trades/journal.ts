import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Book, TradeRecord } from '../domain/trade-events';
import { runScript } from '../registry/scripts';
import { takeSlot } from '../ratelimit/caps';
import { bridgeKeys } from '../redis-keys';

/**
 * The trade journal's store (docs/trades.md): per account, each trade one record, each event recorded once. Behind
 * this interface so the use cases (src/trades/record.ts, src/trades/read.ts) do not know Redis.
 */
interface TradeWrite {
  tradeId: string;
  /** The record as it was read (null: none); the write is refused when another call changed it since. */
  expect: string | null;
  record: TradeRecord | null;
}

export interface JournalCommit {
  /** The events this step records, each once (the freshness the journal reads is the newest `atMs`). */
  events: { eventId: string; atMs: number; realized: number }[];
  writes: TradeWrite[];
}

/**
 * `conflict`: an event was recorded or a record changed since they were read, or the trades the writes begin no
 * longer fit the journal's bound (other calls began trades meanwhile); nothing written.
 */
export type CommitResult = 'recorded' | 'conflict';

/** What applying events needs, read in one round trip. */
export interface EventsRead {
  /** The records as stored (their raw text, for the compare-and-set), in the order asked. */
  raw: (string | null)[];
  /** Whether each event id is recorded already, in the order asked. */
  seen: boolean[];
  /** Trades the journal holds, and the most it takes (an event that would begin one more past it is refused). */
  held: number;
  maxTrades: number;
}

/** The most trades one account's journal holds (about 220 MB of Redis); past it, an event that begins a trade is refused. */
const MAX_TRADES_PER_ACCOUNT = 100_000;

/**
 * The event ids an account's journal keeps to answer a resend `duplicate`: the newest 20,000 (by the event's time),
 * older ones dropped in the step that records a new one. A resend comes from a bridge's outbox, which holds at most
 * 5,000 events unanswered (src/bridge-kit/trade-outbox.ts); at the rate bound (TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE,
 * src/trades/record.ts) 20,000 ids are the last 16 minutes at least, at a real account's pace days to months. At most
 * about 4.5 MB of Redis an account with 128-character ids, whatever a bridge sends.
 */
const MAX_EVENT_IDS_PER_ACCOUNT = 20_000;

/** A trades call let in (`end` lets the account's next one in; call it once) or refused with when to come back. */
export type TradesCall = { open: true; end: () => Promise<void> } | { open: false; reason: 'spent' | 'busy'; retryAfterMs: number };

export interface TradeListQuery {
  status: 'open' | 'closed' | 'all';
  fromMs?: number;
  toMs?: number;
  /** Newest first, after this position (the cursor's score and id). */
  after?: { score: number; tradeId: string };
  /** At most this many ids read from the index (the caller filters and pages). */
  scan: number;
}

export interface TradeJournal {
  /** The records as stored (their raw text, for the compare-and-set), in the order asked. */
  readRaw(accountId: string, tradeIds: readonly string[]): Promise<(string | null)[]>;
  /** The records events touch and whether their ids are recorded, in one round trip. */
  readForEvents(accountId: string, tradeIds: readonly string[], eventIds: readonly string[]): Promise<EventsRead>;
  /** Records the events once per (account, eventId) and applies their writes, in one atomic step. */
  commit(accountId: string, commit: JournalCommit): Promise<CommitResult>;
  /**
   * Takes `count` of the account's trade events out of its budget of `max` a `windowMs`, checked and charged in one
   * atomic step; undefined when taken, else the ms until the window ends (nothing charged).
   */
  chargeEvents(accountId: string, count: number, max: number, windowMs: number): Promise<{ retryAfterMs: number } | undefined>;
  /**
   * Opens one trades call of the account, before its body is read, in one atomic step: refused when the account's
   * budget of `maxEvents` is spent (`spent`) or another of its calls holds the account (`busy`, held at most `holdMs`).
   */
  openCall(accountId: string, maxEvents: number, holdMs: number): Promise<TradesCall>;
  /** Trades open or pending now. */
  openTradeIds(accountId: string, max: number): Promise<string[]>;
  saveBook(accountId: string, book: Book): Promise<void>;
  book(accountId: string): Promise<Book | undefined>;
  /** The time of the newest event recorded (ms), or undefined. */
  lastEventMs(accountId: string): Promise<number | undefined>;
  /** Ids newest first, with the score each is ordered by. */
  list(accountId: string, query: TradeListQuery): Promise<{ tradeId: string; score: number }[]>;
  /** Trade ids a signal opened, modified or closed. */
  tradesOfSignal(accountId: string, signalId: string, max: number): Promise<string[]>;
  /** Realized money per quarter hour (bucket = floor(ms / 900000)) since `fromBucket`. */
  realizedBuckets(accountId: string, fromBucket: number): Promise<Map<number, number>>;
  /** Equity points in [from, to], at most `max`, thinned evenly. */
  equity(accountId: string, fromMs: number, toMs: number, max: number): Promise<{ at: string; balance: number; equity: number }[]>;
  /** The highest equity point since `fromMs`, or undefined when there is none. */
  equityPeak(accountId: string, fromMs: number): Promise<number | undefined>;
  /** The first equity point at or after `fromMs`. */
  firstEquityAfter(accountId: string, fromMs: number): Promise<{ at: string; balance: number; equity: number } | undefined>;
  /** Removes what is past retention (trades closed before `cutoffMs`, at most `max` of them); returns how many went. */
  prune(accountId: string, cutoffMs: number, max: number): Promise<number>;
}

export const QUARTER_HOUR_MS = 15 * 60_000;

/** Every key of one account's journal shares its hash tag, so each script runs on one Redis Cluster slot. */
export function journalKeys(accountId: string) {
  const base = bridgeKeys.tradesPrefix(accountId);
  return {
    records: `${base}records`,
    seen: `${base}seen`,
    open: `${base}open`,
    closed: `${base}closed`,
    all: `${base}all`,
    signals: `${base}signals`,
    pnl: `${base}pnl`,
    last: `${base}last`,
    book: `${base}book`,
    equity: `${base}equity`,
    /** The trade events charged in the current minute (src/ratelimit/caps.ts window cap). */
    eventBudget: `${base}event-budget`,
    /** The account's trades call in progress (its random id), so that two never apply at once. */
    call: `${base}call`,
  };
}

// KEYS: records seen open closed all signals pnl last. ARGV: events (JSON: {id, at, bucket, pnl}, times and sums as
// text), writes (JSON), max event ids (the oldest beyond it dropped in this step), max trades.
// A write: {id, expect (string|false), value (string|false), start, closedAt (number|false), signals, oldSignals}.
const COMMIT = `
local events = cjson.decode(ARGV[1])
local writes = cjson.decode(ARGV[2])
for _, e in ipairs(events) do
  if redis.call('ZSCORE', KEYS[2], e.id) then return 'conflict' end
end
local begun = 0
for _, w in ipairs(writes) do
  if redis.call('HGET', KEYS[1], w.id) ~= w.expect then return 'conflict' end
  if not w.expect and w.value then begun = begun + 1 elseif w.expect and not w.value then begun = begun - 1 end
end
if begun > 0 and redis.call('ZCARD', KEYS[5]) + begun > tonumber(ARGV[4]) then return 'conflict' end
for _, w in ipairs(writes) do
  for _, s in ipairs(w.oldSignals) do redis.call('ZREM', KEYS[6], s .. '|' .. w.id) end
  redis.call('ZREM', KEYS[3], w.id)
  redis.call('ZREM', KEYS[4], w.id)
  redis.call('ZREM', KEYS[5], w.id)
  if w.value then
    redis.call('HSET', KEYS[1], w.id, w.value)
    redis.call('ZADD', KEYS[5], w.start, w.id)
    if w.closedAt then redis.call('ZADD', KEYS[4], w.closedAt, w.id) else redis.call('ZADD', KEYS[3], w.start, w.id) end
    for _, s in ipairs(w.signals) do redis.call('ZADD', KEYS[6], 0, s .. '|' .. w.id) end
  else
    redis.call('HDEL', KEYS[1], w.id)
  end
end
local mine = {}
local last = tonumber(redis.call('GET', KEYS[8]) or '0')
local newest = last
for _, e in ipairs(events) do
  redis.call('ZADD', KEYS[2], e.at, e.id)
  mine[e.id] = true
  if e.pnl ~= '0' then redis.call('HINCRBYFLOAT', KEYS[7], e.bucket, e.pnl) end
  if tonumber(e.at) > newest then newest = tonumber(e.at) end
end
-- The oldest ids beyond the bound go, never one just recorded (an event older than all it keeps is still answered
-- duplicate when it comes again).
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, over + #events - 1)) do
    if over > 0 and not mine[id] then redis.call('ZREM', KEYS[2], id); over = over - 1 end
  end
end
if newest > last then redis.call('SET', KEYS[8], string.format('%d', newest)) end
return 'recorded'
`;

// KEYS: event budget (the window cap's hash), call. ARGV: max events, the call's id, hold ms. The budget is only read
// here: the call's events are charged once its body is read (chargeEvents).
const OPEN_CALL = `
if tonumber(redis.call('HGET', KEYS[1], 'n') or '0') >= tonumber(ARGV[1]) then
  return {0, 'spent', math.max(redis.call('PTTL', KEYS[1]), 1)}
end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return {0, 'busy', math.max(redis.call('PTTL', KEYS[2]), 1)} end
return {1, 'open', 0}
`;

// KEYS: call. ARGV: the call's id. Only its own: a call that outlived its hold must not end the next one's.
const END_CALL = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

// KEYS: records seen open closed all signals pnl equity. ARGV: cutoffMs, max, cutoff bucket.
const PRUNE = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  local v = redis.call('HGET', KEYS[1], id)
  if v then
    local r = cjson.decode(v)
    if type(r.signalId) == 'string' then redis.call('ZREM', KEYS[6], r.signalId .. '|' .. id) end
    for _, s in ipairs(r.linkedSignals or {}) do redis.call('ZREM', KEYS[6], s .. '|' .. id) end
  end
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('ZREM', KEYS[4], id)
  redis.call('ZREM', KEYS[5], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', ARGV[1])
if #ids > 0 then
  for _, b in ipairs(redis.call('HKEYS', KEYS[7])) do
    if tonumber(b) < tonumber(ARGV[3]) then redis.call('HDEL', KEYS[7], b) end
  end
end
return #ids
`;

// KEYS: equity. ARGV: from, to, max. Thinned in Redis, so a 90-day curve never crosses the wire whole.
const EQUITY = `
local n = redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[2])
local max = tonumber(ARGV[3])
if n <= max then return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2]) end
local all = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2])
local out = {}
for i = 0, max - 1 do out[#out + 1] = all[math.floor(i * (n - 1) / (max - 1)) + 1] end
return out
`;

// KEYS: equity. ARGV: from. Read in Redis: a 90-day curve is up to 129,600 points.
const EQUITY_PEAK = `
local peak = nil
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')) do
  local e = tonumber(string.match(m, '^[^:]+:[^:]+:(.+)$'))
  if e and (peak == nil or e > peak) then peak = e end
end
if peak == nil then return false end
return tostring(peak)
`;

/** An equity point as the curve keeps it: `<ms>:<balance>:<equity>` (unique by its time, small). */
export const equityMember = (atMs: number, balance: number, equity: number): string => `${atMs}:${balance}:${equity}`;

export class RedisTradeJournal implements TradeJournal {
  constructor(
    private readonly redis: Redis,
    private readonly maxTrades = MAX_TRADES_PER_ACCOUNT,
    private readonly maxEventIds = MAX_EVENT_IDS_PER_ACCOUNT,
  ) {}

  async readRaw(accountId: string, tradeIds: readonly string[]): Promise<(string | null)[]> {
    if (tradeIds.length === 0) return [];
    return this.redis.hmget(journalKeys(accountId).records, ...tradeIds);
  }

  async readForEvents(accountId: string, tradeIds: readonly string[], eventIds: readonly string[]): Promise<EventsRead> {
    const k = journalKeys(accountId);
    const read = this.redis.pipeline();
    if (tradeIds.length > 0) read.hmget(k.records, ...tradeIds);
    if (eventIds.length > 0) read.zmscore(k.seen, ...eventIds);
    read.zcard(k.all);
    const answers = (await read.exec())!.map(([err, value]) => {
      if (err) throw err;
      return value;
    });
    const raw = tradeIds.length > 0 ? (answers.shift() as (string | null)[]) : [];
    const seen = eventIds.length > 0 ? (answers.shift() as (string | null)[]).map((score) => score !== null) : [];
    return { raw, seen, held: Number(answers.shift()), maxTrades: this.maxTrades };
  }

  async commit(accountId: string, c: JournalCommit): Promise<CommitResult> {
    const k = journalKeys(accountId);
    const writes = c.writes.map((w) => {
      const old = w.expect === null ? undefined : (JSON.parse(w.expect) as TradeRecord);
      const r = w.record;
      return {
        id: w.tradeId,
        expect: w.expect ?? false,
        value: r ? JSON.stringify(r) : false,
        start: r ? startMs(r) : 0,
        closedAt: r && r.status !== 'open' && r.status !== 'pending' && r.closedAt ? Date.parse(r.closedAt) : false,
        signals: r ? signalsOf(r) : [],
        oldSignals: old ? signalsOf(old) : [],
      };
    });
    const events = c.events.map((e) => ({ id: e.eventId, at: String(e.atMs), bucket: String(Math.floor(e.atMs / QUARTER_HOUR_MS)), pnl: String(e.realized) }));
    const keys = [k.records, k.seen, k.open, k.closed, k.all, k.signals, k.pnl, k.last];
    return (await runScript(this.redis, COMMIT, keys, [JSON.stringify(events), JSON.stringify(writes), this.maxEventIds, this.maxTrades])) as CommitResult;
  }

  async chargeEvents(accountId: string, count: number, max: number, windowMs: number): Promise<{ retryAfterMs: number } | undefined> {
    const taken = await takeSlot(this.redis, { kind: 'window', key: journalKeys(accountId).eventBudget, max, windowMs, weight: count });
    return taken.taken ? undefined : { retryAfterMs: taken.retryAfterMs };
  }

  async openCall(accountId: string, maxEvents: number, holdMs: number): Promise<TradesCall> {
    const k = journalKeys(accountId);
    const id = randomBytes(12).toString('base64url');
    const [open, reason, retryAfterMs] = (await runScript(this.redis, OPEN_CALL, [k.eventBudget, k.call], [maxEvents, id, holdMs])) as [number, string, number];
    if (open === 0) return { open: false, reason: reason as 'spent' | 'busy', retryAfterMs };
    let ended = false;
    return {
      open: true,
      end: async () => {
        if (ended) return;
        ended = true;
        await runScript(this.redis, END_CALL, [k.call], [id]);
      },
    };
  }

  async openTradeIds(accountId: string, max: number): Promise<string[]> {
    return this.redis.zrange(journalKeys(accountId).open, 0, max - 1);
  }

  async saveBook(accountId: string, book: Book): Promise<void> {
    await this.redis.set(journalKeys(accountId).book, JSON.stringify(book));
  }

  async book(accountId: string): Promise<Book | undefined> {
    const text = await this.redis.get(journalKeys(accountId).book);
    return text === null ? undefined : (JSON.parse(text) as Book);
  }

  async lastEventMs(accountId: string): Promise<number | undefined> {
    const text = await this.redis.get(journalKeys(accountId).last);
    return text === null ? undefined : Number(text);
  }

  async list(accountId: string, q: TradeListQuery): Promise<{ tradeId: string; score: number }[]> {
    const k = journalKeys(accountId);
    const key = q.status === 'open' ? k.open : q.status === 'closed' ? k.closed : k.all;
    const max = Math.min(q.toMs ?? Infinity, q.after?.score ?? Infinity);
    const out: { tradeId: string; score: number }[] = [];
    let offset = 0;
    // Ties at the cursor's score come in descending id order: those at or above the cursor's id were answered already.
    while (out.length < q.scan) {
      const batch = await this.redis.zrevrangebyscore(key, Number.isFinite(max) ? max : '+inf', q.fromMs ?? '-inf', 'WITHSCORES', 'LIMIT', offset, q.scan);
      if (batch.length === 0) break;
      for (let i = 0; i < batch.length; i += 2) {
        const tradeId = batch[i]!;
        const score = Number(batch[i + 1]);
        if (q.after && score === q.after.score && tradeId >= q.after.tradeId) continue;
        out.push({ tradeId, score });
      }
      offset += batch.length / 2;
      if (batch.length / 2 < q.scan) break;
    }
    return out.slice(0, q.scan);
  }

  async tradesOfSignal(accountId: string, signalId: string, max: number): Promise<string[]> {
    const members = await this.redis.zrangebylex(journalKeys(accountId).signals, `[${signalId}|`, `[${signalId}|\xff`, 'LIMIT', 0, max);
    return members.map((m) => m.slice(signalId.length + 1));
  }

  async realizedBuckets(accountId: string, fromBucket: number): Promise<Map<number, number>> {
    const all = await this.redis.hgetall(journalKeys(accountId).pnl);
    const out = new Map<number, number>();
    for (const [bucket, sum] of Object.entries(all)) if (Number(bucket) >= fromBucket) out.set(Number(bucket), Number(sum));
    return out;
  }

  async equity(accountId: string, fromMs: number, toMs: number, max: number): Promise<{ at: string; balance: number; equity: number }[]> {
    const members = (await runScript(this.redis, EQUITY, [journalKeys(accountId).equity], [fromMs, toMs, max])) as string[];
    return members.map(pointOf);
  }

  async equityPeak(accountId: string, fromMs: number): Promise<number | undefined> {
    const peak = (await runScript(this.redis, EQUITY_PEAK, [journalKeys(accountId).equity], [fromMs])) as string | null;
    return peak === null ? undefined : Number(peak);
  }

  async firstEquityAfter(accountId: string, fromMs: number): Promise<{ at: string; balance: number; equity: number } | undefined> {
    const [first] = await this.redis.zrangebyscore(journalKeys(accountId).equity, fromMs, '+inf', 'LIMIT', 0, 1);
    return first === undefined ? undefined : pointOf(first);
  }

  async prune(accountId: string, cutoffMs: number, max: number): Promise<number> {
    const k = journalKeys(accountId);
    const bucket = Math.floor(cutoffMs / QUARTER_HOUR_MS);
    return (await runScript(this.redis, PRUNE, [k.records, k.seen, k.open, k.closed, k.all, k.signals, k.pnl, k.equity], [cutoffMs, max, bucket])) as number;
  }
}

/** What orders a trade in the journal: when it began (placed or opened), else when the journal first saw it. */
function startMs(r: TradeRecord): number {
  const at = r.placedAt ?? r.openedAt ?? r.events[0]?.at ?? r.updatedAt;
  return Date.parse(at);
}

function pointOf(member: string): { at: string; balance: number; equity: number } {
  const [at, balance, equity] = member.split(':').map(Number) as [number, number, number];
  return { at: new Date(at).toISOString(), balance, equity };
}

function signalsOf(r: TradeRecord): string[] {
  return [...new Set([...(r.signalId ? [r.signalId] : []), ...r.linkedSignals])];
}
