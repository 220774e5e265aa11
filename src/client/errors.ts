/** The errors the typed client throws: a failed status poll, and an answer the contract does not allow. */

export type StatusErrorKind =
  | 'unauthorized' // 401: missing or invalid API token
  | 'token_suspended' // 403: see suspendedUntil
  | 'rate_limited' // 429: slow down (retryable)
  | 'server_error' // 500: safe to retry
  | 'unavailable' // 503: fail-closed limiter store (retryable)
  | 'network' // no HTTP answer (retryable)
  | 'unexpected'; // any other status or an unreadable body

const RETRYABLE_STATUS_ERRORS: ReadonlySet<StatusErrorKind> = new Set(['rate_limited', 'server_error', 'unavailable', 'network']);

/** A failed status poll (spec §4.3), typed by cause. */
export class StatusError extends Error {
  override readonly name = 'StatusError';
  constructor(
    readonly kind: StatusErrorKind,
    message: string,
    readonly info: {
      httpStatus?: number;
      suspendedUntil?: string;
      retryAfterSeconds?: number;
      scope?: string;
      limit?: number;
      windowMs?: number;
      correlationId?: string;
    } = {},
  ) {
    super(message);
  }

  /** The spec calls a retry safe (possibly after a wait: `info.retryAfterSeconds`). */
  get retryable(): boolean {
    return RETRYABLE_STATUS_ERRORS.has(this.kind);
  }
}

/** The service answered something the contract does not allow (e.g. a 202 without a signalId). */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError';
  constructor(
    message: string,
    readonly info: { httpStatus: number; idempotencyKey?: string; correlationId?: string },
  ) {
    super(message);
  }
}
