import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { StopOutEvent } from '../domain/bridge-protocol';
import { bridgeKeys } from '../redis-keys';

/**
 * The stop-outs bridges carried out (docs/risk-sizing.md, "Stop-out"), one per (account, eventId): a bridge resends
 * its event until it is acknowledged, so the second and later copies are answered `duplicate` and recorded nowhere
 * (a copy that arrives before the first one's audit entry is written answers only once that entry is).
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
  /**
   * `recorded` the first time this account sends this eventId; `unaudited` for a copy of one whose audit entry was
   * not written yet (the first attempt failed, or is still under way); `duplicate` after that.
   */
  record(accountId: string, event: StopOutEvent, atMs: number): Promise<'recorded' | 'unaudited' | 'duplicate'>;
  /** The owner's audit entry of this event is written: a later copy is a plain duplicate. True for the call that ended it. */
  audited(accountId: string, eventId: string): Promise<boolean>;
  latest(accountId: string): Promise<StopOutSummary | undefined>;
}

function summariseStopOut(event: StopOutEvent, atMs: number): StopOutSummary {
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

/**
 * The event once (HSETNX) and, when it is the first, the latest summary, in one step; the event stays among the
 * unaudited until its audit entry is written. 1: first; 2: a copy of one not yet audited; 0: a duplicate.
 */
const RECORD = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return 2 end
  return 0
end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[3], ARGV[1])
return 1`;

export class RedisStopOuts implements StopOutStore {
  constructor(private readonly redis: Redis) {}

  private keys(accountId: string): [string, string, string] {
    return [bridgeKeys.stopOuts(accountId), bridgeKeys.latestStopOut(accountId), bridgeKeys.unauditedStopOuts(accountId)];
  }

  async record(accountId: string, event: StopOutEvent, atMs: number): Promise<'recorded' | 'unaudited' | 'duplicate'> {
    const summary = JSON.stringify(summariseStopOut(event, atMs));
    const got = Number(await this.redis.eval(RECORD, 3, ...this.keys(accountId), event.eventId, JSON.stringify(event), summary));
    return got === 1 ? 'recorded' : got === 2 ? 'unaudited' : 'duplicate';
  }

  async audited(accountId: string, eventId: string): Promise<boolean> {
    return (await this.redis.srem(this.keys(accountId)[2], eventId)) === 1;
  }

  private latestKey(accountId: string): string {
    return this.keys(accountId)[1];
  }

  async latest(accountId: string): Promise<StopOutSummary | undefined> {
    const text = await this.redis.get(this.latestKey(accountId));
    if (text === null) return undefined;
    const parsed = summarySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  }
}
