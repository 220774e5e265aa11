import { Router, type Request, type RequestHandler, type Response } from 'express';
import { routeLimited } from '../../refusal';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import type { SecretGrant } from '../../domain/account';
import { acceptSignal } from '../../signals/accept';
import type { AcceptDeps } from '../../signals/acceptance';
import { authenticateSender } from '../../signals/authenticate';
import { failClosedOnStoreError } from '../../signals/fail-closed';
import { inFlightCap, jsonBody } from '../middleware';
import { createRouteLimiter } from '../../ratelimit/route-limiter';
import { PreAuthCap } from '../../ratelimit/preauth';
import type { Slot } from '../../ratelimit/caps';

/**
 * POST /webhook/custom and /webhook/custom/:accountId (spec §4.1, §4.2): the pipeline of docs/architecture.md in order. The
 * route limiter spends an account's or a secret's budget only for a sender authenticated for it; everything that does
 * not authenticate is counted per client address by the pre-auth cap (docs/decisions.md, "Limits").
 */
export function webhookRoutes(deps: { accept: AcceptDeps; redis: Redis; config: Config }): Router {
  const router = Router();
  const { config } = deps;
  const failClosed = config.limits.failClosedRetryAfterSeconds;
  const routeLimiter = createRouteLimiter({
    redis: deps.redis,
    prefix: `${config.limits.keyPrefix}route:`,
    ...config.limits.route,
    key: routeLimitKey,
    refusal: routeLimited,
  });
  const preAuth = new PreAuthCap(deps.redis, config.limits.webhookPreAuthIp, config.limits.keyPrefix);
  const address = (req: Request) => ipKeyGenerator(req.ip ?? 'unknown');

  // A slot of the address's pre-auth cap before anything else (taken and checked in one step); given back once the
  // sender authenticates. Whatever ends a request before that (a bad secret, a broken body) keeps it: a failure.
  const preAuthSlot: RequestHandler = async (req, res, next) => {
    const verdict = await failClosedOnStoreError(failClosed, () => preAuth.take(address(req)));
    if (!verdict.taken) throw routeLimited(preAuth.limit.max, preAuth.limit.windowMs, Math.max(1, Math.ceil(verdict.retryAfterMs / 1000)));
    res.locals.preAuthSlot = verdict.slot;
    next();
  };
  const authenticate: RequestHandler = async (req, res, next) => {
    res.locals.grant = await failClosedOnStoreError(failClosed, () =>
      authenticateSender(deps.accept.registry, req.body, (req.params as { accountId?: string }).accountId),
    );
    // A store that cannot give the slot back leaves it charged: the sender's own good traffic is at stake, nobody else's.
    await preAuth.giveBack(res.locals.preAuthSlot as Slot).catch(() => undefined);
    next();
  };

  const submit = async (req: Request<{ accountId?: string }>, res: Response) => {
    const result = await acceptSignal(deps.accept, {
      routeAccountId: req.params.accountId,
      grant: res.locals.grant as SecretGrant,
      body: req.body,
      idempotencyKey: req.get('x-idempotency-key'),
      correlationId: res.locals.correlationId as string,
    });
    if ('replayed' in result && result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    // For the request's log line: where it was routed, and which linked accounts a broadcast skipped and why.
    if (result.routing) res.locals.routing = result.routing;
    const status = result.kind === 'accepted' ? 202 : result.kind === 'no_targets' ? 200 : 503;
    res.status(status).json(result.body);
  };

  // The pre-auth cap first (per address, no lookup); the in-flight slot only once the body is in (a slow sender must
  // not hold one); then who is sending, and only then the route limiter spends an account's or a secret's budget.
  const pipeline = [
    preAuthSlot,
    ...jsonBody(config.ingress.bodyLimitBytes, config.ingress.bodyReadTimeoutMs, 'ingestion', { alertLine: true }),
    inFlightCap(config.ingress.maxInFlight),
    authenticate,
    routeLimiter,
  ];
  router.post('/webhook/custom', ...pipeline, submit);
  router.post('/webhook/custom/:accountId', ...pipeline, submit);
  return router;
}

/**
 * Keyed by target account, else by the secret's hash (never the secret itself), as spec §8 orders them; only an
 * authenticated sender gets here, so the key is an account the secret links or a secret that exists.
 */
function routeLimitKey(req: Request, res: Response): string {
  const accountId = (req.params as { accountId?: string }).accountId;
  if (accountId) return `account:${accountId}`;
  return `secret:${(res.locals.grant as SecretGrant).hash}`;
}
