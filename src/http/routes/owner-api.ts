import { Router, type Response } from 'express';
import { ownerCaller } from '../proven';
import { z } from 'zod';
import { Refusal } from '../../refusal';
import { listOwnerAccounts, showOwnerAccount, updateOwnerAccount } from '../../owners/accounts';
import { addOwnerAccount, type AddAccountDeps } from '../../owners/add-account';
import { createCredential, listCredentials, relinkCredential, revokeCredential, rotateBridgeToken, type OwnerCredentialsDeps } from '../../owners/credentials';
import type { OwnerAuthDeps } from '../../owners/sign-in';
import { ownerAuth, requireJson, signedInVia, type CookieSettings } from '../owner-auth';
import { jsonBody } from '../middleware';
import type { CtraderConnectDeps } from '../../owners/ctrader-connect';
import { ownerCtraderRoutes } from './owner-ctrader';
import { ownerTradesRoutes } from './owner-trades';
import type { OwnerTradesDeps } from '../../trades/read';

/**
 * The owner API (docs/owners.md): everything the dashboard's pages do, for a signed-in browser or an owner API key.
 * Every route reads the owner from the caller's credentials, never from the request: an id of another owner's is
 * answered 404, like an id that does not exist.
 */
export interface OwnerApiDeps {
  auth: OwnerAuthDeps;
  cookies: CookieSettings;
  accounts: AddAccountDeps;
  credentials: OwnerCredentialsDeps;
  bodyReadTimeoutMs: number;
  /** Connect with cTrader; absent when the operator has not configured it. */
  ctrader?: CtraderConnectDeps;
  /** The trade journal's reads (src/trades/read.ts). */
  trades?: OwnerTradesDeps;
}

const ownerOf = (res: Response) => ownerCaller.get(res).owner;
const nameSchema = z.strictObject({ name: z.string().trim().min(1).max(64) });
const limitSchema = z.coerce.number().int().min(1).max(1000).default(100);

export function ownerApiRoutes(deps: OwnerApiDeps): Router {
  const router = Router();
  const body = jsonBody(64 * 1024, deps.bodyReadTimeoutMs, 'owner');
  router.use('/v1/owner', ownerAuth(deps.auth, deps.cookies), requireJson);

  router.get('/v1/owner/accounts', async (_req, res) => {
    res.json({ accounts: await listOwnerAccounts(deps.accounts, ownerOf(res)) });
  });
  router.post('/v1/owner/accounts', ...body, async (req, res) => {
    res.status(201).json(await addOwnerAccount(deps.accounts, ownerOf(res), req.body, signedInVia(res)));
  });
  router.get('/v1/owner/accounts/:accountId', async (req, res) => {
    res.json(await showOwnerAccount(deps.accounts, ownerOf(res), req.params.accountId));
  });
  router.patch('/v1/owner/accounts/:accountId', ...body, async (req, res) => {
    res.json(await updateOwnerAccount(deps.accounts, ownerOf(res), String(req.params.accountId), req.body));
  });
  router.post('/v1/owner/accounts/:accountId/bridge-token', async (req, res) => {
    const rotated = await rotateBridgeToken(deps.credentials, ownerOf(res), req.params.accountId, signedInVia(res));
    // A linked cTrader account's bridge is the connector: it gets the new token too, rather than being locked out.
    await deps.ctrader?.links.replaceBridgeToken(rotated.accountId, rotated.value);
    res.status(201).json(rotated);
  });

  for (const [path, kind] of [
    ['secrets', 'secret'],
    ['tokens', 'token'],
  ] as const) {
    router.get(`/v1/owner/${path}`, async (_req, res) => {
      res.json({ [path]: await listCredentials(deps.credentials, ownerOf(res), kind) });
    });
    router.post(`/v1/owner/${path}`, ...body, async (req, res) => {
      res.status(201).json(await createCredential(deps.credentials, ownerOf(res), kind, req.body, signedInVia(res)));
    });
    router.put(`/v1/owner/${path}/:id/accounts`, ...body, async (req, res) => {
      res.json(await relinkCredential(deps.credentials, ownerOf(res), kind, String(req.params.id), req.body));
    });
    router.delete(`/v1/owner/${path}/:id`, async (req, res) => {
      await revokeCredential(deps.credentials, ownerOf(res), kind, req.params.id);
      res.status(204).end();
    });
  }

  router.get('/v1/owner/api-keys', async (_req, res) => {
    res.json({ apiKeys: await deps.auth.apiKeys.list(ownerOf(res)) });
  });
  router.post('/v1/owner/api-keys', ...body, async (req, res) => {
    const parsed = nameSchema.safeParse(req.body);
    if (!parsed.success) throw new Refusal('invalid', 'Invalid request', { details: [{ path: 'name', message: 'a name of 1 to 64 characters' }] });
    const made = await deps.auth.apiKeys.create(ownerOf(res), parsed.data.name, deps.auth.now());
    if (!made) throw new Refusal('invalid', 'You have the most API keys allowed; revoke one first');
    await deps.auth.owners.audit(ownerOf(res), { at: deps.auth.now().toISOString(), by: 'owner', action: 'api_key.create', detail: { id: made.view.id } });
    res.status(201).json({ ...made.view, value: made.key });
  });
  router.delete('/v1/owner/api-keys/:id', async (req, res) => {
    if (!(await deps.auth.apiKeys.revoke(ownerOf(res), req.params.id))) throw new Refusal('not_found', 'No such API key');
    await deps.auth.owners.audit(ownerOf(res), { at: deps.auth.now().toISOString(), by: 'owner', action: 'api_key.revoke', detail: { id: req.params.id } });
    res.status(204).end();
  });

  router.get('/v1/owner/audit', async (req, res) => {
    const limit = limitSchema.safeParse(req.query.limit);
    if (!limit.success) throw new Refusal('invalid', 'limit: 1 to 1000');
    res.json({ entries: await deps.auth.owners.auditLog(ownerOf(res), limit.data) });
  });
  router.use(ownerCtraderRoutes(deps.ctrader, body));
  router.use(ownerTradesRoutes(deps.trades));
  return router;
}
