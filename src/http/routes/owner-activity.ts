import { Router, type Response } from 'express';
import { ownerCaller } from '../proven';
import { z } from 'zod';
import { Refusal } from '../../refusal';
import { SignalNotFound, type SignalLog } from '../../signals/log';
import { CallbackRegistrationRefused, type OwnerCallbacks } from '../../callbacks/owner-callbacks';
import { eventTypesSchema } from '../../callbacks/endpoints';
import { CALLBACK_EVENT_TYPES } from '../../domain/callback';
import type { OwnerAuthDeps } from '../../owners/sign-in';
import { ownerAuth, requireJson, type CookieSettings } from '../owner-auth';
import { jsonBody } from '../middleware';

/**
 * What happened on the owner's accounts: the signal log (read from Temporal visibility, docs/signal-log.md) and the
 * outcome callbacks with their delivery attempts (docs/callbacks.md). Same authentication as the rest of the owner API.
 */
export interface OwnerActivityDeps {
  auth: OwnerAuthDeps;
  cookies: CookieSettings;
  signals: SignalLog;
  callbacks: OwnerCallbacks;
  bodyReadTimeoutMs: number;
}

const ownerOf = (res: Response) => ownerCaller.get(res).owner;
const registrationSchema = z.strictObject({ url: z.string().min(1).max(2048), eventTypes: eventTypesSchema.optional() });
const limitSchema = z.coerce.number().int().min(1).max(500).default(100);

async function found<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof SignalNotFound) throw new Refusal('not_found', err.message);
    throw err;
  }
}

export function ownerActivityRoutes(deps: OwnerActivityDeps): Router {
  const router = Router();
  const body = jsonBody(16 * 1024, deps.bodyReadTimeoutMs, 'owner');
  router.use(['/v1/owner/signals', '/v1/owner/callbacks'], ownerAuth(deps.auth, deps.cookies), requireJson);

  router.get('/v1/owner/signals', async (req, res) => {
    res.json(await found(() => deps.signals.list(ownerOf(res), req.query)));
  });
  router.get('/v1/owner/signals/:signalId', async (req, res) => {
    res.json(await found(() => deps.signals.detail(ownerOf(res), req.params.signalId)));
  });

  router.get('/v1/owner/callbacks', async (_req, res) => {
    res.json({ callbacks: await deps.callbacks.list(ownerOf(res)) });
  });
  router.get('/v1/owner/callbacks/attempts', async (req, res) => {
    const limit = limitSchema.safeParse(req.query.limit);
    if (!limit.success) throw new Refusal('invalid', 'limit: 1 to 500');
    res.json({ attempts: await deps.callbacks.recentAttempts(ownerOf(res), limit.data) });
  });
  router.post('/v1/owner/callbacks', ...body, async (req, res) => {
    const parsed = registrationSchema.safeParse(req.body);
    if (!parsed.success) {
      const onTypes = parsed.error.issues.some((i) => i.path[0] === 'eventTypes');
      throw new Refusal('invalid', 'Invalid request', {
        details: [
          onTypes
            ? { path: 'eventTypes', message: `at least one of ${CALLBACK_EVENT_TYPES.join(', ')}` }
            : { path: 'url', message: 'a URL of at most 2048 characters' },
        ],
      });
    }
    try {
      const { endpoint, secret } = await deps.callbacks.register(ownerOf(res), parsed.data.url, parsed.data.eventTypes);
      await deps.auth.owners.audit(ownerOf(res), {
        at: deps.auth.now().toISOString(),
        by: 'owner',
        action: 'callback.add',
        detail: { id: endpoint.id, url: endpoint.url, ...(endpoint.eventTypes ? { eventTypes: endpoint.eventTypes } : {}) },
      });
      res.status(201).json({ ...endpoint, secret });
    } catch (err) {
      if (err instanceof CallbackRegistrationRefused) {
        if (err.reason === 'not_configured') throw new Refusal('store_unavailable', err.message);
        throw new Refusal('invalid', err.message, { details: [{ path: 'url', message: err.message }] });
      }
      throw err;
    }
  });
  router.delete('/v1/owner/callbacks/:id', async (req, res) => {
    if (!(await deps.callbacks.remove(ownerOf(res), req.params.id))) throw new Refusal('not_found', 'No such callback endpoint');
    await deps.auth.owners.audit(ownerOf(res), { at: deps.auth.now().toISOString(), by: 'owner', action: 'callback.remove', detail: { id: req.params.id } });
    res.status(204).end();
  });
  return router;
}
