import type { ValidationDetail } from '../domain/signal';

/**
 * Why a request was refused, in the service's own terms. The HTTP layer maps each kind to a status and a body in
 * one place (src/http/errors.ts); nothing here knows about HTTP.
 */
export type RefusalKind =
  | 'invalid' // 400
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not_accepted_by_account' // 409
  | 'bridge_too_old' // 412
  | 'too_slow' // 408, the request body did not arrive in time
  | 'throttled' // 429 fairness / token caps
  | 'token_suspended' // 403 on the poll
  | 'backpressure' // 503, nothing accepted
  | 'store_unavailable'; // 503, a guard's store is failing: fail closed

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
    } = {},
  ) {
    super(message);
    this.name = 'Refusal';
  }
}
