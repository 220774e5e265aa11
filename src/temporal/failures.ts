import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import { ExecutionsUnavailable, LaunchFailure } from '../refusal';

/** gRPC codes that mean Temporal cannot take work now (overloaded, unreachable, or too slow for our deadline). */
const BACKPRESSURE_CODES = new Set([
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
  14, // UNAVAILABLE
  1, // CANCELLED (our own deadline)
]);

export function isTemporalBackpressure(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    if (isGrpcServiceError(e) && BACKPRESSURE_CODES.has(e.code)) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number' && BACKPRESSURE_CODES.has(code)) return true;
    if (e instanceof Error && /deadline|timed? ?out|UNAVAILABLE|RESOURCE_EXHAUSTED|ECONNREFUSED|connect/i.test(e.message)) return true;
    e = e instanceof ServiceError || e instanceof Error ? (e as Error).cause : undefined;
  }
  return false;
}

/** The call never left this process (no connection, or no time left): Temporal cannot have acted on it. */
export class NotSentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`UNAVAILABLE: ${message}`, options);
    this.name = 'NotSentError';
  }
}

/**
 * A start whose answer was lost (deadline, cancel, dropped connection after sending): the workflow may exist.
 * Answering "not accepted" then would invite a retry that places a second order, so the caller must be told to poll.
 */
export class AmbiguousStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AmbiguousStartError';
  }
}

/** Whether a failed start certainly did not start anything (so "not accepted, retry" is the truth). */
export function certainlyNotStarted(err: unknown): boolean {
  if (err instanceof NotSentError) return true;
  if (err instanceof AmbiguousStartError) return false;
  // RESOURCE_EXHAUSTED is Temporal refusing the work; other definite answers (bad namespace, bad argument) are refusals too.
  const code = grpcCode(err);
  if (code === 8) return true;
  // UNAVAILABLE because no connection could be made: the request never reached a server.
  if (code === 14 && NO_CONNECTION.test(messages(err))) return true;
  return !isTemporalBackpressure(err);
}

const NO_CONNECTION = /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|No connection established|failed to connect|connection refused/i;

/**
 * A gRPC status that says the call was never sent (no connection could be made). The client's retry interceptor
 * must not retry these past our deadline: the caller retries them itself while that is still certain, and then
 * answers "not accepted" instead of the ambiguous "deadline exceeded".
 */
export function neverSent(status: { code: number; details?: string }): boolean {
  return status.code === 14 && NO_CONNECTION.test(status.details ?? '');
}

function messages(err: unknown): string {
  const out: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    const details = (e as { details?: unknown }).details;
    out.push((e as Error).message, typeof details === 'string' ? details : details === undefined ? '' : JSON.stringify(details));
    e = (e as Error).cause;
  }
  return out.join(' ');
}

function grpcCode(err: unknown): number | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    if (isGrpcServiceError(e)) return e.code;
    e = (e as Error).cause;
  }
  return undefined;
}

/** A Temporal call in the ingress's terms: overload or unreachability becomes ExecutionsUnavailable (backpressure). */
export async function unavailableOnBackpressure<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isTemporalBackpressure(err)) throw new ExecutionsUnavailable('Temporal cannot take the call now', { cause: err });
    throw err;
  }
}

/** A failed start in the ingress's terms: whether it may have started, whether it was overload. */
export function launchFailure(err: unknown): LaunchFailure {
  return new LaunchFailure(!certainlyNotStarted(err), isTemporalBackpressure(err), { cause: err });
}
