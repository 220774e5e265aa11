import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { StopOutEvent } from '../domain/bridge-protocol';

/**
 * The stop-outs bridges carried out (docs/risk-sizing.md, "Stop-out"), one per (account, eventId): a bridge resends
 * its event until it is acknowledged, so the second and later copies are answered `duplicate` and recorded nowhere.
 * Kept without expiry (one per owner's reset of the drawdown guard, so few), with the latest one apart for the views.
 */

/** What the owner and operators see of a stop-out. */
export interface StopOutSummary {
  eventId: string;
  trippedAt: string;
  recordedAt: string;
  equity: number;
  peak: number;
  drawdownPercent: number;
  maxDrawdownPercent: number;
  currency: string;
  closed: number;
  cancelled: number;
  failed: number;
}

const summarySchema = z.strictObject({
  eventId: z.string(),
  trippedAt: z.string(),
  recordedAt: z.string(),
  equity: z.number(),
  peak: z.number(),
  drawdownPercent: z.number(),
  maxDrawdownPercent: z.number(),
  currency: z.string(),
  closed: z.number(),
  cancelled: z.number(),
  failed: z.number(),
});

export interface StopOutStore {
  /** `recorded` the first time this account sends this eventId, `duplicate` after. */
  record(accountId: string, event: StopOutEvent, atMs: number): Promise<'recorded' | 'duplicate'>;
  /** Undoes a record whose follow-up (the owner's audit entry) failed, so the bridge's resend records it again. */
  forget(accountId: string, eventId: string): Promise<void>;
  latest(accountId: string): Promise<StopOutSummary | undefined>;
}

export function summariseStopOut(event: StopOutEvent, atMs: number): StopOutSummary {
  const failed = [...event.closed, ...event.cancelled].filter((t) => t.result === 'failed').length;
  return {
    eventId: event.eventId,
    trippedAt: event.trippedAt,
    recordedAt: new Date(atMs).toISOString(),
    equity: event.equity,
    peak: event.peak,
    drawdownPercent: event.drawdownPercent,
    maxDrawdownPercent: event.maxDrawdownPercent,
    currency: event.currency,
    closed: event.closed.filter((t) => t.result === 'closed').length,
    cancelled: event.cancelled.filter((t) => t.result === 'cancelled').length,
    failed,
  };
}

/** The event once (HSETNX) and, when it is the first, the latest summary, in one step. */
const RECORD = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
return 1`;

/** Forgets the event, and the latest summary if it is this event's. */
const FORGET = `
redis.call('HDEL', KEYS[1], ARGV[1])
local latest = redis.call('GET', KEYS[2])
if latest and cjson.decode(latest).eventId == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`;

export class RedisStopOuts implements StopOutStore {
  constructor(private readonly redis: Redis) {}

  private keys(accountId: string): [string, string] {
    return [`es:stop-outs:{${accountId}}`, `es:stop-out-latest:{${accountId}}`];
  }

  async record(accountId: string, event: StopOutEvent, atMs: number): Promise<'recorded' | 'duplicate'> {
    const summary = JSON.stringify(summariseStopOut(event, atMs));
    const first = await this.redis.eval(RECORD, 2, ...this.keys(accountId), event.eventId, JSON.stringify(event), summary);
    return Number(first) === 1 ? 'recorded' : 'duplicate';
  }

  async forget(accountId: string, eventId: string): Promise<void> {
    await this.redis.eval(FORGET, 2, ...this.keys(accountId), eventId);
  }

  async latest(accountId: string): Promise<StopOutSummary | undefined> {
    const text = await this.redis.get(this.keys(accountId)[1]);
    if (text === null) return undefined;
    const parsed = summarySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  }
}
