import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { Refusal, routeLimited, type RefusalKind } from '../../refusal';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import { acceptSignal } from '../../signals/accept';
import type { AcceptDeps } from '../../signals/acceptance';
import { authenticateSender } from '../../signals/authenticate';
import { failClosedOnStoreError } from '../../signals/fail-closed';
import { inFlightCap, jsonBody } from '../middleware';
import { createRouteLimiter } from '../../ratelimit/route-limiter';
import { PreAuthCap } from '../../ratelimit/preauth';
import { sender } from '../proven';

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

  const capped = (retryAfterMs: number) => routeLimited(preAuth.limit.max, preAuth.limit.windowMs, Math.max(1, Math.ceil(retryAfterMs / 1000)));

  const authenticate: RequestHandler = async (req, res, next) => {
    sender.set(
      res,
      await failClosedOnStoreError(failClosed, () => authenticateSender(deps.accept.registry, req.body, (req.params as { accountId?: string }).accountId)),
    );
    next();
  };
  // A request that failed before it authenticated, for what its sender sent, is charged to its address, checked and
  // charged in one step: failures that arrive together cannot slip past the cap, and one over it is a 429, not a 401.
  // A store that cannot charge it refuses it (503). Nothing is read or charged before: an address's good requests
  // (a bar close from TradingView's few addresses) are never refused for the failures of other traders' alerts.
  const chargeFailure: ErrorRequestHandler = async (err: unknown, req, _res, next) => {
    if (!senderFailed(err)) {
      next(err);
      return;
    }
    const verdict = await failClosedOnStoreError(failClosed, () => preAuth.take(address(req)));
    next(verdict.taken ? err : capped(verdict.retryAfterMs));
  };

  const submit = async (req: Request<{ accountId?: string }>, res: Response) => {
    const result = await acceptSignal(deps.accept, {
      routeAccountId: req.params.accountId,
      grant: sender.get(res),
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

  // The in-flight slot only once the body is in (a slow sender must not hold one); then who is sending, a failure up
  // to there charged to the address; only then the route limiter spends an account's or a secret's budget.
  const pipeline = [
    ...jsonBody(config.ingress.bodyLimitBytes, config.ingress.bodyReadTimeoutMs, 'ingestion', { alertLine: true }),
    inFlightCap(config.ingress.maxInFlight),
    authenticate,
    chargeFailure,
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
  return `secret:${sender.get(res).hash}`;
}

/** What a sender sent that ends its request before it authenticates: a failure of its address. */
const SENDER_FAILURES: ReadonlySet<RefusalKind> = new Set<RefusalKind>(['invalid', 'unauthorized', 'too_large', 'too_slow']);

/**
 * A failure is a 4xx: no secret or a wrong one, an account the secret does not link, a body that is not a JSON object,
 * too large or not sent in time. A 503 is the service's own state (the in-flight cap, a store that cannot answer),
 * never the sender's failure: it is not charged.
 */
function senderFailed(err: unknown): boolean {
  if (err instanceof Refusal) return SENDER_FAILURES.has(err.kind);
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
