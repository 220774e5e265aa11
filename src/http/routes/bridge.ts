import { createHash } from 'node:crypto';
import { routeLimited } from '../../refusal';
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import { bridgeAccount, bridgeCommands, bridgeHello, bridgeReports, bridgeTrades, bridgeTradesCall, type GatewayDeps } from '../../bridge/gateway';
import { createRouteLimiter } from '../../ratelimit/route-limiter';
import { bearerToken, jsonBody } from '../middleware';
import { bridgeCaller, tradesCall } from '../proven';

export interface BridgeRouteSettings {
  redis: Redis;
  keyPrefix: string;
  limit: { max: number; windowMs: number };
  bodyReadTimeoutMs: number;
}

/**
 * The bridge API (docs/bridge-protocol.md): EAs and cBots connect out to us with their bridge token. The token is
 * authenticated first, then its budget is spent (per token, the spec's 429 body): a request with an unknown token never
 * creates a counter, and no one but the token's holder can spend its budget.
 */
export function bridgeRoutes(deps: GatewayDeps, settings: BridgeRouteSettings): Router {
  const router = Router();
  const body = jsonBody(256 * 1024, settings.bodyReadTimeoutMs, 'bridge');
  const authenticated = async (req: Request, res: Response, next: NextFunction) => {
    bridgeCaller.set(res, await bridgeAccount(deps, bearerToken(req)));
    next();
  };
  const limited = createRouteLimiter({
    redis: settings.redis,
    prefix: `${settings.keyPrefix}bridge:`,
    ...settings.limit,
    key: (req) =>
      `token:${createHash('sha256')
        .update(bearerToken(req) ?? '')
        .digest('hex')}`,
    refusal: routeLimited,
  });
  router.post('/bridge/v1/hello', authenticated, limited, ...body, async (req, res) => {
    res.json(await bridgeHello(deps, bridgeCaller.get(res), req.body));
  });
  router.get('/bridge/v1/commands', authenticated, limited, async (req, res) => {
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const waitMs = Number(req.query.waitMs ?? 0);
    const result = await bridgeCommands(deps, bridgeCaller.get(res), waitMs, aborted.signal);
    if (!res.writableEnded && !aborted.signal.aborted) res.json(result);
  });
  router.post('/bridge/v1/reports', authenticated, limited, ...body, async (req, res) => {
    res.json(await bridgeReports(deps, bridgeCaller.get(res), req.body));
  });
  // A whole book (1,000 positions and 1,000 orders) is about 400 KiB of JSON: this call's bound is larger than the others'.
  const tradesBody = jsonBody(TRADES_BODY_LIMIT_BYTES, settings.bodyReadTimeoutMs, 'bridge');
  // One call per account at a time, let in before its body is read: a bridge past its minute costs a read, not a parse.
  const oneCallAtATime = async (_req: Request, res: Response, next: NextFunction) => {
    const end = await bridgeTradesCall(deps, bridgeCaller.get(res));
    tradesCall.set(res, end);
    // A connection that goes first (a body that never came, a refused body) ends it too.
    res.once('close', () => void end().catch(() => undefined));
    next();
  };
  router.post('/bridge/v1/trades', authenticated, limited, oneCallAtATime, ...tradesBody, async (req, res) => {
    // Ended before the answer is written: a bridge sends its next call as soon as it reads this one's answer.
    const answer = await bridgeTrades(deps, bridgeCaller.get(res), req.body).finally(() =>
      tradesCall
        .get(res)()
        .catch(() => undefined),
    );
    res.json(answer);
  });
  return router;
}

const TRADES_BODY_LIMIT_BYTES = 512 * 1024;
