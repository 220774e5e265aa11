import { Router, type RequestHandler, type Response } from 'express';
import { ownerCaller } from '../proven';
import { beginConnect, completeConnect, linkPickedAccounts, type CtraderConnectDeps } from '../../owners/ctrader-connect';

/**
 * "Connect with cTrader" in the owner API (docs/owners.md), mounted inside the owner API's router (the owner is
 * already known). The flow is bound to a dashboard session: an owner API key gets 403. Without the operator's
 * CTRADER_OAUTH_* settings, 503 `ctrader_connect_not_configured`.
 */
export function ownerCtraderRoutes(deps: CtraderConnectDeps | undefined, body: RequestHandler[]): Router {
  const router = Router();
  const owner = (res: Response) => ownerCaller.get(res).owner;
  const session = (res: Response) => ownerCaller.get(res).sessionToken;
  router.get('/v1/owner/ctrader', (_req, res) => {
    res.json({ connectEnabled: deps !== undefined });
  });
  router.use('/v1/owner/ctrader', (_req, res, next) => {
    if (deps) {
      next();
      return;
    }
    res.status(503).json({ error: 'ctrader_connect_not_configured', message: 'The operator has not set up Connect with cTrader (docs/ctrader-connector.md)' });
  });
  const noStore = (res: Response) => res.setHeader('Cache-Control', 'no-store');
  router.post('/v1/owner/ctrader/authorizations', async (_req, res) => {
    noStore(res);
    res.status(201).json(await beginConnect(deps!, owner(res), session(res)));
  });
  router.post('/v1/owner/ctrader/callback', ...body, async (req, res) => {
    noStore(res);
    res.json(await completeConnect(deps!, owner(res), session(res), req.body));
  });
  router.post('/v1/owner/ctrader/links', ...body, async (req, res) => {
    res.status(201).json(await linkPickedAccounts(deps!, owner(res), session(res), req.body));
  });
  return router;
}
