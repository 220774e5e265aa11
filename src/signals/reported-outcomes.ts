import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { AccountOutcome } from '../domain/outcome';
import { signalKeys } from '../redis-keys';

/**
 * How long the outcomes bridges reported stay in Redis for the poll; past it the poll reads Temporal alone. An hour
 * covers any caller's poll loop; Temporal keeps every outcome for its retention.
 */
export const REPORTED_OUTCOMES_KEEP_SECONDS = 3600;

/**
 * The outcomes bridges reported, kept in Redis by the ingress the moment it recorded the report as its command's
 * first (docs/poll.md). The poll reads them without waiting for Temporal: a busy execution path (its backlog, a slow
 * persistence) never holds a poll up, and a fill is visible before Temporal has even taken the report. That first
 * report is the one every delivery sends, so the workflow derives the same outcome from it (outcomeOfReport): what
 * this shows is never something the workflow will not record. Outcomes the workflow decides on its own (a risk rule,
 * expiry before a bridge took the command) are Temporal's alone.
 */
export interface ReportedOutcomes {
  /** Keeps the account's outcome unless one is kept already (a repeated report keeps the first one's time). */
  record(signalId: string, outcome: AccountOutcome): Promise<void>;
  /** Every account's outcome kept for the signal; [] when none (or none any more). */
  read(signalId: string): Promise<AccountOutcome[]>;
}

const outcomeSchema = z.object({
  accountId: z.string(),
  outcome: z.enum(['filled', 'rejected', 'done']),
  ticket: z.string().nullable(),
  reason: z.string().nullable(),
  occurredAt: z.string(),
  entry: z.enum(['position', 'order']).optional(),
  fill: z.object({ price: z.number(), volume: z.number() }).optional(),
});

export class RedisReportedOutcomes implements ReportedOutcomes {
  constructor(
    private readonly redis: Redis,
    /** How long a signal's outcomes are kept here; past that the poll reads them from Temporal alone. */
    private readonly keepSeconds: number,
  ) {}

  private key(signalId: string): string {
    return signalKeys.reportedOutcomes(signalId);
  }

  async record(signalId: string, outcome: AccountOutcome): Promise<void> {
    const key = this.key(signalId);
    const results = await this.redis.pipeline().hsetnx(key, outcome.accountId, JSON.stringify(outcome)).expire(key, this.keepSeconds).exec();
    const failed = results?.find(([err]) => err !== null);
    if (failed) throw failed[0]!;
  }

  async read(signalId: string): Promise<AccountOutcome[]> {
    const fields = await this.redis.hgetall(this.key(signalId));
    // A field that does not parse is skipped: it can only be ours, damaged, and Temporal still has the outcome.
    return Object.values(fields).flatMap((text) => {
      try {
        const parsed = outcomeSchema.safeParse(JSON.parse(text));
        return parsed.success ? [parsed.data] : [];
      } catch {
        return [];
      }
    });
  }
}
