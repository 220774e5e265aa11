import type { Redis } from 'ioredis';
import type { CoalescedTradeEvent } from '../domain/callback';
import { runScript } from '../registry/scripts';
import { ownerKeys } from '../redis-keys';

/**
 * The owner's trade-event callbacks a minute (docs/callbacks.md, "Trade events"): the first
 * TRADE_CALLBACKS_PER_OWNER_PER_MINUTE of an owner's minute each start their own delivery, as they always did; past
 * that, the minute's events are coalesced into one delivery after the minute ends (`trade.coalesced`), holding at
 * most COALESCED_EVENTS_MAX events (the rest counted as `omitted`: the owner reads them in the trade journal). So a
 * bridge that sends without end costs its owner's callbacks at most 61 delivery workflows a minute, and Temporal, which
 * every owner's signals share, does no more work for it.
 */
const TRADE_CALLBACKS_PER_OWNER_PER_MINUTE = 60;
/** The events one coalesced delivery carries (about 400 bytes each: at most about 200 KB, in the delivery's history). */
const COALESCED_EVENTS_MAX = 500;
const TRADE_CALLBACK_WINDOW_MS = 60_000;
/**
 * A minute's coalesced events are kept this long for their delivery, which reads them as the minute ends: an owner's
 * kept events are then at most 15 minutes' worth (about 3 MB), whatever a bridge sends. A delivery that cannot read
 * them so long (no worker for 15 minutes) finds none and sends nothing; the trade journal still holds the events.
 */
const COALESCED_KEEP_MS = 15 * 60_000;

/** `deliver`: a delivery of its own; `coalesce`: in the minute's coalesced delivery, which must be started (`start`) or was. */
export type TradeCallbackSlot = { kind: 'deliver' } | { kind: 'coalesce'; window: number; startsAtMs: number; endsAtMs: number; start: boolean };

// KEYS: the minute's count, the minute's coalesced events (a hash: webhook-id → entry; `~omitted`, `~started`).
// ARGV: max, count ttl (ms), webhook-id, entry (JSON), most entries, events ttl (ms).
const TAKE = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n <= tonumber(ARGV[1]) then return 'deliver' end
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then
  local held = redis.call('HLEN', KEYS[2]) - redis.call('HEXISTS', KEYS[2], '~omitted') - redis.call('HEXISTS', KEYS[2], '~started')
  if held < tonumber(ARGV[5]) then redis.call('HSET', KEYS[2], ARGV[3], ARGV[4]) else redis.call('HINCRBY', KEYS[2], '~omitted', 1) end
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
end
if redis.call('HEXISTS', KEYS[2], '~started') == 1 then return 'started' end
return 'start'`;

export class RedisTradeCallbackCap {
  constructor(
    private readonly redis: Redis,
    private readonly windowMs = TRADE_CALLBACK_WINDOW_MS,
    private readonly perWindow = TRADE_CALLBACKS_PER_OWNER_PER_MINUTE,
  ) {}

  /** Counts one event against the owner's minute, and keeps it for the coalesced delivery when past the minute's cap. */
  async take(owner: string, nowMs: number, entry: CoalescedTradeEvent): Promise<TradeCallbackSlot> {
    const window = Math.floor(nowMs / this.windowMs);
    const keys = [countKey(owner, window), eventsKey(owner, window)];
    const args = [this.perWindow, 2 * this.windowMs, entry.webhookId, JSON.stringify(entry), COALESCED_EVENTS_MAX, COALESCED_KEEP_MS];
    const answer = (await runScript(this.redis, TAKE, keys, args)) as 'deliver' | 'start' | 'started';
    if (answer === 'deliver') return { kind: 'deliver' };
    return { kind: 'coalesce', window, startsAtMs: window * this.windowMs, endsAtMs: (window + 1) * this.windowMs, start: answer === 'start' };
  }

  /** The minute's coalesced delivery was started: the next events of the minute need not start it again. */
  async started(owner: string, window: number): Promise<void> {
    await this.redis.hset(eventsKey(owner, window), '~started', '1');
  }

  /** The minute's coalesced events, for its delivery (read once the minute has ended). */
  async coalesced(owner: string, window: number): Promise<{ events: CoalescedTradeEvent[]; omitted: number }> {
    const all = await this.redis.hgetall(eventsKey(owner, window));
    const events = Object.entries(all)
      .filter(([field]) => !field.startsWith('~'))
      .map(([, v]) => JSON.parse(v) as CoalescedTradeEvent)
      .sort((a, b) => a.event.timestamp.localeCompare(b.event.timestamp) || a.webhookId.localeCompare(b.webhookId));
    return { events, omitted: Number(all['~omitted'] ?? 0) };
  }
}

const countKey = (owner: string, window: number) => `${ownerKeys.callbacks(owner, 'tc')}:${window}`;
const eventsKey = (owner: string, window: number) => `${ownerKeys.callbacks(owner, 'tb')}:${window}`;
