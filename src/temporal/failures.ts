import { isGrpcServiceError, ServiceError } from '@temporalio/client';

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
