import { isStoreFailure } from '../redis';
import { Refusal } from '../refusal';

/** Runs a step that needs the registry or a limiter's store; if the store cannot answer, fail closed. */
export async function guarded<T>(retryAfterSeconds: number, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof Refusal) throw err;
    if (isStoreFailure(err)) throw new Refusal('store_unavailable', 'service_unavailable', { retryAfterSeconds });
    throw err;
  }
}
