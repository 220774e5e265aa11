import type { ValidationDetail } from './domain/signal';

/**
 * Why a request was refused, in the service's own terms. The HTTP layer maps each kind to a status and a body in
 * one place (src/http/errors.ts); nothing here knows about HTTP.
 */
export type RefusalKind =
  | 'invalid' // 400
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not_found' // 404: nothing of the caller's has this id (another owner's is not found either)
  | 'not_accepted_by_account' // 409
  | 'conflict' // 409: the change clashes with what exists (an owner at the account cap, an account linked elsewhere)
  | 'upstream_unavailable' // 502: a service we depend on (cTrader's token endpoint, Open API) failed or did not answer in time
  | 'at_cap' // 409, the owner has the most of something allowed (accounts); nothing was made
  | 'bridge_too_old' // 412
  | 'too_slow' // 408, the request body did not arrive in time
  | 'throttled' // 429 fairness / token caps / the poll's per-address cap
  | 'route_limited' // 429 the spec's route limiter (and the webhook's pre-auth cap, the bridge's per-token limit)
  | 'too_large' // 413, the body is above the limit
  | 'token_suspended' // 403 on the poll
  | 'backpressure' // 503, nothing accepted
  | 'not_available' // 503, something this server has not got (the MT5 bridge package not built)
  | 'store_unavailable'; // 503, a guard's store is failing: fail closed

/** The HTTP status each refusal answers (src/http/errors.ts; the multi-account calls name it per account). */
export const REFUSAL_STATUS: Record<Refusal['kind'], number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  token_suspended: 403,
  not_accepted_by_account: 409,
  conflict: 409,
  upstream_unavailable: 502,
  at_cap: 409,
  bridge_too_old: 412,
  too_slow: 408,
  throttled: 429,
  route_limited: 429,
  too_large: 413,
  backpressure: 503,
  not_available: 503,
  store_unavailable: 503,
};

export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
    readonly extra: {
      details?: ValidationDetail[];
      scope?: string;
      limit?: number;
      windowMs?: number;
      suspendedUntil?: string;
      retryAfterSeconds?: number;
      /** 412: the bridge version that runs the action (the MT5 package the service serves, the cTrader connector). */
      installBridgeVersion?: string;
    } = {},
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

/** The spec's route limiter answer (and the webhook's pre-auth cap's, the bridge's per-token limit's). */
export function routeLimited(limit: number, windowMs: number, retryAfterSeconds?: number): Refusal {
  return new Refusal('route_limited', 'Rate limit exceeded', { limit, windowMs, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) });
}

/** Where signals execute could not take or answer the call now (overloaded, unreachable, out of time): backpressure. */
export class ExecutionsUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ExecutionsUnavailable';
  }
}

/**
 * A start that failed, in the use case's terms: whether the signal may have started anyway (the answer was lost, so
 * "not accepted" would invite a second order) and whether it failed for overload (so "retry later" is the answer).
 */
export class LaunchFailure extends Error {
  constructor(
    readonly mayHaveStarted: boolean,
    readonly overloaded: boolean,
    options?: { cause?: unknown },
  ) {
    super(mayHaveStarted ? 'the start may have happened' : 'nothing was started', options);
    this.name = 'LaunchFailure';
  }
}
