/**
 * The retry policy of the typed client, kept apart so it reads as one page (docs/integrations/scripts.md).
 *
 * Spec §4.1, §5 rule 5, §7: a retry is safe only where the spec says so — 500 (same X-Idempotency-Key), 503 without a
 * signalId (nothing was accepted), 429 (slow down) and a network error (same key). A retry with the same key is
 * deduplicated only inside the 45-second replay window; after it the same key runs as a NEW action. So every retry of
 * one submit must start well inside the window, counted from the first attempt.
 */

/** Spec §8: the replay window of an idempotency key. */
export const REPLAY_WINDOW_MS = 45_000;
/**
 * No attempt of one submit starts later than this after the first one: the window opens when the server first sees
 * the key (at or after our first send), so this leaves 5 s for transit, queueing and clock skew.
 */
export const MAX_RETRY_SPAN_MS = REPLAY_WINDOW_MS - 5_000;
/** Default time budget of one submit, retries included. */
export const DEFAULT_SUBMIT_DEADLINE_MS = 30_000;
export const DEFAULT_MAX_ATTEMPTS = 4;

/** First backoff step and its cap. */
export const BASE_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;

/**
 * Bounded exponential backoff with "equal jitter": retry n (1-based) waits between half and all of
 * min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2^(n-1)), so clients that failed together do not retry together, and no wait
 * is ever close to zero.
 */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * The server's own hint, in milliseconds: the `Retry-After` header (delta-seconds, or an HTTP date), else the
 * `retryAfterSeconds` body field of the fail-closed 503. Undefined when neither is usable.
 */
export function retryAfterMs(header: string | null, body: unknown, now: number): number | undefined {
  if (header !== null && header.trim() !== '') {
    const value = header.trim();
    if (/^\d+$/.test(value)) return Number(value) * 1000;
    const at = Date.parse(value);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  const field = (body as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  if (typeof field === 'number' && Number.isFinite(field) && field >= 0) return field * 1000;
  return undefined;
}

/** How long to wait before retry n: never less than the server asked for, never less than the backoff. */
export function retryWaitMs(retry: number, hintMs: number | undefined, random: () => number = Math.random): number {
  return Math.max(hintMs ?? 0, backoffMs(retry, random));
}
