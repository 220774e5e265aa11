import { Router, type Response } from 'express';
import { ownerCaller } from '../proven';
import { Refusal } from '../../refusal';
import { ownerBook, ownerDay, ownerEquity, ownerSignalTrades, ownerTrade, ownerTrades, type OwnerTradesDeps } from '../../trades/read';

/**
 * The trade journal on the owner API (docs/trades.md): positions and orders, trades, the equity curve, the day and a
 * signal's trades. Mounted behind the owner API's authentication; every answer is the owner's own and never cached.
 */
export function ownerTradesRoutes(deps: OwnerTradesDeps | undefined): Router {
  const router = Router();
  const owner = (res: Response) => ownerCaller.get(res).owner;
  router.use(
    [
      '/v1/owner/accounts/:accountId/book',
      '/v1/owner/accounts/:accountId/trades',
      '/v1/owner/accounts/:accountId/equity',
      '/v1/owner/accounts/:accountId/day',
      '/v1/owner/signals/:signalId/trades',
    ],
    (_req, res, next) => {
      res.setHeader('Cache-Control', 'no-store');
      if (!deps) throw new Refusal('not_available', 'This service keeps no trade journal');
      next();
    },
  );
  if (!deps) return router;
  router.get('/v1/owner/accounts/:accountId/book', async (req, res) => {
    res.json(await ownerBook(deps, owner(res), req.params.accountId));
  });
  router.get('/v1/owner/accounts/:accountId/trades', async (req, res) => {
    res.json(await ownerTrades(deps, owner(res), req.params.accountId, req.query));
  });
  router.get('/v1/owner/accounts/:accountId/trades/:tradeId', async (req, res) => {
    res.json(await ownerTrade(deps, owner(res), req.params.accountId, req.params.tradeId));
  });
  router.get('/v1/owner/accounts/:accountId/equity', async (req, res) => {
    res.json(await ownerEquity(deps, owner(res), req.params.accountId, req.query));
  });
  router.get('/v1/owner/accounts/:accountId/day', async (req, res) => {
    res.json(await ownerDay(deps, owner(res), req.params.accountId));
  });
  router.get('/v1/owner/signals/:signalId/trades', async (req, res) => {
    res.json(await ownerSignalTrades(deps, owner(res), req.params.signalId));
  });
  return router;
}
