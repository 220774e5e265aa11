import type { NextFunction, Request, Response } from 'express';
import { formatBytes, SPEC_LIMITS } from '../domain/limits';
import type { Logger } from 'pino';
import { Refusal, REFUSAL_STATUS } from '../refusal';
import { isStoreFailure } from '../redis';

/**
 * The one place that turns a refusal or a failure into a status and a body (spec §2.5, §7). Internals never leak:
 * an unexpected error is a 500 with the correlationId and nothing else.
 * `ingestion` is the webhook path, whose errors carry the correlationId (except 400s and route-limiter 429s).
 */
export type Channel = 'ingestion' | 'poll' | 'bridge' | 'owner';

const STATUS = REFUSAL_STATUS;

export function sendRefusal(res: Response, err: Refusal, channel: Channel, correlationId: string): void {
  const status = STATUS[err.kind];
  const withId = channel === 'ingestion' ? { correlationId } : {};
  switch (err.kind) {
    case 'invalid':
      res.status(status).json({ error: err.message, details: err.extra.details ?? [] });
      return;
    case 'at_cap':
      res.status(status).json({ error: err.message, limit: err.extra.limit });
      return;
    case 'token_suspended':
      res.status(status).json({ error: 'token_suspended', suspendedUntil: err.extra.suspendedUntil });
      return;
    case 'throttled':
      // A limiter that knows when its window ends has said so already (express-rate-limit's Retry-After).
      // One that knows when its own window ends says that; else the whole window.
      if (err.extra.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.extra.retryAfterSeconds));
      else if (err.extra.windowMs && !res.getHeader('Retry-After')) res.setHeader('Retry-After', String(Math.ceil(err.extra.windowMs / 1000)));
      res.status(status).json({
        error: 'rate_limit_exceeded',
        scope: err.extra.scope,
        message: err.message,
        limit: err.extra.limit,
        windowMs: err.extra.windowMs,
        ...withId,
      });
      return;
    case 'route_limited':
      // Spec §4.1: the route limiter's body is exactly this, with no correlationId.
      if (err.extra.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.extra.retryAfterSeconds));
      res.status(status).json({ error: 'Rate limit exceeded', limit: err.extra.limit, windowMs: err.extra.windowMs });
      return;
    case 'backpressure':
      if (err.extra.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.extra.retryAfterSeconds));
      res.status(status).json({ error: 'System under high load, retry later', backpressure: true });
      return;
    case 'store_unavailable': {
      const retryAfterSeconds = err.extra.retryAfterSeconds ?? 5;
      res.setHeader('Retry-After', String(retryAfterSeconds));
      res.status(status).json({ error: 'service_unavailable', retryAfterSeconds });
      return;
    }
    case 'bridge_too_old':
      // Additive to the spec's Error body (§9.2): which bridge version to install, when a newer bridge would do.
      res
        .status(status)
        .json({ error: err.message, ...withId, ...(err.extra.installBridgeVersion ? { installBridgeVersion: err.extra.installBridgeVersion } : {}) });
      return;
    default:
      res.status(status).json({ error: err.message, ...withId });
  }
}

export function errorHandler(logger: Logger, failClosedRetryAfterSeconds: number, channelOf: (req: Request) => Channel) {
  return (failure: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let err = failure;
    const correlationId = res.locals.correlationId as string;
    if (res.headersSent) return;
    const channel = channelOf(req);
    const e = err as { type?: string; status?: number; limit?: number };
    if (e?.type === 'entity.too.large') err = new Refusal('too_large', `Request body exceeds the ${formatBytes(e.limit ?? SPEC_LIMITS.bodyLimitBytes)} limit`);
    if (err instanceof Refusal) {
      res.locals.refusal = err.kind;
      sendRefusal(res, err, channel, correlationId);
      return;
    }
    if (isStoreFailure(err)) {
      sendRefusal(res, new Refusal('store_unavailable', 'service_unavailable', { retryAfterSeconds: failClosedRetryAfterSeconds }), channel, correlationId);
      return;
    }
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      res.status(400).json({ error: 'Malformed request' });
      return;
    }
    logger.error({ err, correlationId }, 'unexpected error');
    const message = channel === 'poll' ? 'Internal error reading outcomes; safe to retry' : 'Unexpected internal error; safe to retry';
    res.status(500).json({ error: message, ...(channel === 'ingestion' ? { correlationId } : {}) });
  };
}
