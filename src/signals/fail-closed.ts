import { isStoreFailure } from '../redis';
import { ExecutionsUnavailable, Refusal } from '../refusal';

/**
 * Seconds a client is told to wait (Retry-After) when a limiter or the registry cannot reach Redis: long enough for a
 * Redis failover (a few seconds with Sentinel), short enough that a retrying alert is still fresh.
 */
export const FAIL_CLOSED_RETRY_AFTER_SECONDS = 5;

/** Runs a step that needs the registry or a limiter's store; if the store cannot answer, fail closed. */
export async function failClosedOnStoreError<T>(retryAfterSeconds: number, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof Refusal) throw err;
    if (isStoreFailure(err)) throw new Refusal('store_unavailable', 'service_unavailable', { retryAfterSeconds });
    throw err;
  }
}

/** A call to where signals execute: overloaded or unreachable is backpressure, not a 500. */
export async function backpressureOnUnavailable<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ExecutionsUnavailable) throw new Refusal('backpressure', 'System under high load, retry later');
    throw err;
  }
}
