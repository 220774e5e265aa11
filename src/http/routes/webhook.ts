import { createHash } from 'node:crypto';
import { Router, type Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import { acceptSignal, type AcceptDeps } from '../../signals/accept';
import { inFlightCap, jsonBody } from '../middleware';
import { createRouteLimiter } from '../../ratelimit/route-limiter';

/** POST /webhook/custom and /webhook/custom/:accountId (spec §4.1, §4.2): the pipeline of DESIGN.md in order. */
export function webhookRoutes(deps: { accept: AcceptDeps; redis: Redis; config: Config }): Router {
  const router = Router();
  const { config } = deps;
  const routeLimiter = createRouteLimiter({
    redis: deps.redis,
    prefix: `${config.limits.keyPrefix}route:`,
    ...config.limits.route,
    key: routeLimitKey,
    respond: (res, limit, windowMs) => res.status(429).json({ error: 'Rate limit exceeded', limit, windowMs }),
  });

  const submit = async (req: Request<{ accountId?: string }>, res: import('express').Response) => {
    const result = await acceptSignal(deps.accept, {
      routeAccountId: req.params.accountId,
      body: req.body,
      idempotencyKey: req.get('x-idempotency-key'),
      correlationId: res.locals.correlationId as string,
    });
    if ('replayed' in result && result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    const status = result.kind === 'accepted' ? 202 : result.kind === 'no_targets' ? 200 : 503;
    res.status(status).json(result.body);
  };

  // The in-flight slot is taken only once the body is in: a slow sender must not hold one.
  const pipeline = [...jsonBody(config.ingress.bodyLimitBytes, config.ingress.bodyReadTimeoutMs, 'ingestion'), inFlightCap(config.ingress.maxInFlight), routeLimiter];
  router.post('/webhook/custom', ...pipeline, submit);
  router.post('/webhook/custom/:accountId', ...pipeline, submit);
  return router;
}

/** Keyed by target account, else by the secret's hash (never the secret itself), else by client IP. */
function routeLimitKey(req: Request): string {
  const accountId = (req.params as { accountId?: string }).accountId;
  if (accountId) return `account:${accountId}`;
  const secret = (req.body as { secret?: unknown } | null)?.secret;
  if (typeof secret === 'string' && secret.length > 0) return `secret:${createHash('sha256').update(secret).digest('hex')}`;
  return `ip:${ipKeyGenerator(req.ip ?? 'unknown')}`;
}
