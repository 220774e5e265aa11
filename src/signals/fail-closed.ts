import { isStoreFailure } from '../redis';
import { ExecutionsUnavailable, Refusal } from '../refusal';

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
