import { Router } from 'express';
import { bridgeCommands, bridgeHello, bridgeReports, type GatewayDeps } from '../../bridge/gateway';
import { bearerToken, jsonBody } from '../middleware';

/** The bridge API (docs/bridge-protocol.md): EAs and cBots connect out to us with their bridge token. */
export function bridgeRoutes(deps: GatewayDeps): Router {
  const router = Router();
  const body = jsonBody(256 * 1024);
  router.post('/bridge/v1/hello', ...body, async (req, res) => {
    res.json(await bridgeHello(deps, bearerToken(req), req.body));
  });
  router.get('/bridge/v1/commands', async (req, res) => {
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const waitMs = Number(req.query.waitMs ?? 0);
    const result = await bridgeCommands(deps, bearerToken(req), waitMs, aborted.signal);
    if (!res.writableEnded && !aborted.signal.aborted) res.json(result);
  });
  router.post('/bridge/v1/reports', ...body, async (req, res) => {
    res.json(await bridgeReports(deps, bearerToken(req), req.body));
  });
  return router;
}
