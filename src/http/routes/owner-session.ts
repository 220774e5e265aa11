import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ownerCaller } from '../proven';
import { ipKeyGenerator } from 'express-rate-limit';
import { z } from 'zod';
import { routeLimited, Refusal } from '../../refusal';
import { failClosedOnStoreError } from '../../signals/fail-closed';
import type { PreAuthCap } from '../../ratelimit/preauth';
import type { Slot } from '../../ratelimit/caps';
import { beginSetup, completeSetup, signIn, type OwnerAuthDeps } from '../../owners/sign-in';
import { clearedCookie, cookieToken, ownerAuth, requireJson, sessionCookie, type CookieSettings } from '../owner-auth';
import { jsonBody } from '../middleware';

/**
 * Setup (the operator's link), sign-in and sign-out. Failed attempts count against the client's address only:
 * nobody can lock an owner out by failing on their behalf (an attacker's guesses stop at their own address's cap,
 * and the second factor stands behind the password).
 */
export interface OwnerSessionDeps {
  auth: OwnerAuthDeps;
  cookies: CookieSettings;
  signInCap: PreAuthCap;
  failClosedRetryAfterSeconds: number;
  bodyReadTimeoutMs: number;
}

const signInSchema = z.strictObject({ owner: z.string().min(1).max(128), password: z.string().min(1).max(256), code: z.string().min(1).max(16) });
const setupSchema = z.strictObject({ token: z.string().min(1).max(256), password: z.string().max(256).optional(), code: z.string().max(16).optional() });

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new Refusal('invalid', 'Invalid request', { details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) });
  return parsed.data;
}

export function ownerSessionRoutes(deps: OwnerSessionDeps): Router {
  const router = Router();
  const address = (req: Request) => ipKeyGenerator(req.ip ?? 'unknown');
  const body = jsonBody(16 * 1024, deps.bodyReadTimeoutMs, 'owner');
  // A slot of the address's cap before the body is read and before any lookup or password hash, taken and checked in
  // one step; it stays taken only when the attempt fails as a guess would (below).
  const capped: RequestHandler = async (req, res, next) => {
    const verdict = await failClosedOnStoreError(deps.failClosedRetryAfterSeconds, () => deps.signInCap.take(address(req)));
    if (!verdict.taken) throw routeLimited(deps.signInCap.limit.max, deps.signInCap.limit.windowMs, Math.max(1, Math.ceil(verdict.retryAfterMs / 1000)));
    res.locals.signInSlot = verdict.slot;
    next();
  };
  const giveBack = async (res: Response) => {
    const slot = res.locals.signInSlot as Slot | undefined;
    res.locals.signInSlot = undefined;
    // A store that cannot give it back leaves it charged: only this address's own budget is at stake.
    if (slot) await deps.signInCap.giveBack(slot).catch(() => undefined);
  };
  /** Runs an attempt: a wrong owner, password, code or link keeps the address's slot; anything else gives it back. */
  const attempt = async <T>(res: Response, run: () => Promise<T>): Promise<T> => {
    try {
      const done = await run();
      await giveBack(res);
      return done;
    } catch (err) {
      if (err instanceof Refusal && (err.kind === 'unauthorized' || err.kind === 'not_found' || err.kind === 'invalid')) res.locals.signInSlot = undefined;
      throw err;
    }
  };
  // What ended a request before its attempt ran (a body that is not JSON, too big, too slow, of the wrong shape) did
  // not guess anything: not counted, as before the slots.
  const giveBackUnattempted = async (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    await giveBack(res);
    next(err);
  };

  router.post('/v1/owner/setup/begin', capped, requireJson, ...body, async (req, res) => {
    const { token } = parse(setupSchema, req.body);
    res.status(200).json(await attempt(res, () => beginSetup(deps.auth, token)));
  });
  router.post('/v1/owner/setup/complete', capped, requireJson, ...body, async (req, res) => {
    const { token, password, code } = parse(setupSchema, req.body);
    const { token: session, session: s } = await attempt(res, () => completeSetup(deps.auth, token, password, code));
    res.setHeader('Set-Cookie', sessionCookie(deps.cookies, session));
    res.status(201).json({ owner: s.owner, csrfToken: s.csrf });
  });
  router.post('/v1/owner/session', capped, requireJson, ...body, async (req, res) => {
    const { owner, password, code } = parse(signInSchema, req.body);
    const { token, session } = await attempt(res, () => signIn(deps.auth, owner, password, code));
    res.setHeader('Set-Cookie', sessionCookie(deps.cookies, token));
    res.status(201).json({ owner: session.owner, csrfToken: session.csrf });
  });
  const signedIn = ownerAuth(deps.auth, deps.cookies);
  router.get('/v1/owner/session', signedIn, (_req, res) => {
    res.status(200).json({ owner: ownerCaller.get(res).owner, csrfToken: ownerCaller.get(res).csrf ?? null });
  });
  // Sign-out ends every session of the owner, on every device.
  router.delete('/v1/owner/session', signedIn, async (req, res) => {
    const ended = await deps.auth.sessions.endAll(ownerCaller.get(res).owner);
    if (cookieToken(req, deps.cookies)) res.setHeader('Set-Cookie', clearedCookie(deps.cookies));
    res.status(200).json({ sessionsEnded: ended });
  });
  router.use(giveBackUnattempted);
  return router;
}
