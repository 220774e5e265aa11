import { Router } from 'express';
import { Refusal } from '../../refusal';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import { readSignalStatus, type StatusDeps } from '../../signals/status';
import { createRouteLimiter } from '../../ratelimit/route-limiter';
import { bearerToken } from '../middleware';

/** GET /v1/signals/:signalId (spec §4.3). */
export function signalRoutes(deps: { status: StatusDeps; redis: Redis; config: Config }): Router {
  const router = Router();
  const ipCap = createRouteLimiter({
    redis: deps.redis,
    prefix: `${deps.config.limits.keyPrefix}poll-ip:`,
    ...deps.config.limits.pollIp,
    key: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
    refusal: (limit, windowMs) => new Refusal('throttled', 'Too many requests from this address; slow down and retry later', { scope: 'ip', limit, windowMs }),
  });
  router.get('/v1/signals/:signalId', ipCap, async (req, res) => {
    res.status(200).json(await readSignalStatus(deps.status, { token: bearerToken(req), signalId: String(req.params.signalId) }));
  });
  return router;
}
