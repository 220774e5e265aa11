import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { CreatedVia } from '../domain/account';
import { Refusal } from '../refusal';
import { apiKeyOwner, sessionOwner, type OwnerAuthDeps } from '../owners/sign-in';
import { bearerToken } from './middleware';
import { ownerCaller } from './proven';

/**
 * Who is calling the owner API: a browser session (cookie) or an owner API key (`Authorization: Bearer oak_…`).
 * A browser's state-changing request must also carry the session's CSRF token in X-CSRF-Token (the synchronizer
 * token pattern, on top of SameSite=Strict cookies); an API key is never sent by a browser on its own, so it needs none.
 */
export interface CookieSettings {
  secure: boolean;
  ttlSeconds: number;
}

const cookieName = (c: CookieSettings) => (c.secure ? '__Host-es_session' : 'es_session');

export function sessionCookie(c: CookieSettings, token: string): string {
  return [`${cookieName(c)}=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${c.ttlSeconds}`, ...(c.secure ? ['Secure'] : [])].join('; ');
}

export function clearedCookie(c: CookieSettings): string {
  return [`${cookieName(c)}=`, 'Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=0', ...(c.secure ? ['Secure'] : [])].join('; ');
}

export function cookieToken(req: Request, c: CookieSettings): string | undefined {
  const header = req.get('cookie');
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === cookieName(c)) return value.join('=');
  }
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Proves the caller's owner (ownerCaller: with the CSRF and session tokens of a session), or answers 401 / 403. */
export function ownerAuth(deps: OwnerAuthDeps, cookies: CookieSettings): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = bearerToken(req);
    if (key !== undefined) {
      const owner = await apiKeyOwner(deps, key);
      if (owner === null) throw new Refusal('unauthorized', 'Invalid or revoked owner API key');
      ownerCaller.set(res, { owner, via: 'api_key' });
      next();
      return;
    }
    const token = cookieToken(req, cookies);
    const session = token ? await sessionOwner(deps, token) : null;
    if (!session) throw new Refusal('unauthorized', 'Sign in first');
    if (!SAFE_METHODS.has(req.method) && !sameText(req.get('x-csrf-token') ?? '', session.csrf)) {
      throw new Refusal('forbidden', 'Missing or wrong X-CSRF-Token (read it from GET /v1/owner/session)');
    }
    ownerCaller.set(res, { owner: session.owner, via: 'session', csrf: session.csrf, ...(token ? { sessionToken: token } : {}) });
    next();
  };
}

/** How the caller of an owner route signed in (set by ownerAuth): recorded on each credential it makes. */
export const signedInVia = (res: Response): CreatedVia => ownerCaller.get(res).via;

/** One year: browsers keep to https for the host that long after they last saw the header. */
const HSTS = 'max-age=31536000';

/**
 * Headers of the owners' surfaces, whatever the answer (a 401 and a 404 too). Every owner API answer is the owner's
 * data or a credential shown once: `no-store`, so no browser, proxy or shared cache keeps a copy (issue 25 finding 8).
 * With Secure cookies the deployment is https, so browsers are told to keep to it (HSTS): a cookie that is never sent
 * over http cannot help a user who typed http:// and was served a look-alike page.
 */
export function ownerSurfaceHeaders(c: Pick<CookieSettings, 'secure'>): { api: RequestHandler; pages: RequestHandler } {
  const hsts = (res: Response) => {
    if (c.secure) res.setHeader('Strict-Transport-Security', HSTS);
  };
  return {
    api: (_req, res, next) => {
      res.setHeader('Cache-Control', 'no-store');
      hsts(res);
      next();
    },
    pages: (_req, res, next) => {
      hsts(res);
      next();
    },
  };
}

/** Owner API bodies are JSON by their Content-Type too: a cross-site HTML form cannot send one (no login CSRF). */
export const requireJson: RequestHandler = (req, _res, next) => {
  const hasBody = req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? 0) > 0;
  if (!SAFE_METHODS.has(req.method) && hasBody && !req.is('application/json')) {
    next(new Refusal('invalid', 'Send the body as application/json'));
    return;
  }
  next();
};
