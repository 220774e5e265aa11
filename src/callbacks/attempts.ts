import type { Redis } from 'ioredis';
import { z } from 'zod';
import { ownerKey } from './endpoints';
import { DELIVERY_ERRORS, type DeliveryError } from './delivery';

/** Delivery attempts kept per owner for the owner to read, and for how long: a week of a busy endpoint's failures. */
export const CALLBACK_ATTEMPTS_KEEP = { count: 200, seconds: 7 * 86_400 } as const;

/** One delivery attempt, as the owner sees it: never the URL's secret parts, never the response body. */
export interface DeliveryAttempt {
  at: string;
  endpointId: string;
  /** The delivery's webhook-id: `callback:<signalId>:<accountId>`. */
  messageId: string;
  attempt: number;
  /** The receiver's HTTP status, when it answered. */
  status: number | null;
  /** What went wrong when it did not answer 2xx, coarse on purpose (src/callbacks/delivery.ts): `timeout`, `http_5xx`, … */
  error: DeliveryError | null;
  durationMs: number;
  delivered: boolean;
}

/** Recent attempts per owner, newest first, bounded in count and in age. */
export interface AttemptLog {
  record(owner: string, attempt: DeliveryAttempt): Promise<void>;
  recent(owner: string, limit: number): Promise<DeliveryAttempt[]>;
}

const attemptSchema = z.object({
  at: z.string(),
  endpointId: z.string(),
  messageId: z.string(),
  attempt: z.number(),
  status: z.number().nullable(),
  error: z.string().nullable(),
  durationMs: z.number(),
  delivered: z.boolean(),
});

export class RedisAttemptLog implements AttemptLog {
  constructor(
    private readonly redis: Redis,
    private readonly keep: { count: number; seconds: number },
  ) {}

  async record(owner: string, attempt: DeliveryAttempt): Promise<void> {
    const key = ownerKey(owner, 'at');
    const results = await this.redis
      .multi()
      .lpush(key, JSON.stringify(attempt))
      .ltrim(key, 0, this.keep.count - 1)
      .expire(key, this.keep.seconds)
      .exec();
    const failed = results?.find(([err]) => err !== null);
    if (failed) throw failed[0]!;
  }

  async recent(owner: string, limit: number): Promise<DeliveryAttempt[]> {
    const texts = await this.redis.lrange(ownerKey(owner, 'at'), 0, Math.max(0, Math.min(limit, this.keep.count) - 1));
    return texts.flatMap((text) => {
      try {
        const parsed = attemptSchema.safeParse(JSON.parse(text));
        return parsed.success ? [{ ...parsed.data, error: coarse(parsed.data.error) }] : [];
      } catch {
        return [];
      }
    });
  }
}

/**
 * An attempt recorded before errors were coarse (`econnreset`, `refused: …`, kept up to CALLBACK_ATTEMPTS_KEEP.seconds)
 * is shown in today's words: the detail that let an owner tell one kind of listener from another is never read back.
 */
function coarse(error: string | null): DeliveryError | null {
  if (error === null) return null;
  if ((DELIVERY_ERRORS as readonly string[]).includes(error)) return error as DeliveryError;
  if (error === 'timeout') return 'timeout';
  if (error.startsWith('refused: no CALLBACK_SECRET_KEY_FILE')) return 'not_configured';
  if (error.startsWith('refused')) return 'refused_by_guard';
  return 'connection_failed';
}
