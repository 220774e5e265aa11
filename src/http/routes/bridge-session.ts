import { createHash } from 'node:crypto';
import { Router, type Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { GatewayDeps } from '../../bridge/gateway';
import { sessionCommands, sessionHello, sessionReports, sessionTrades, type SessionDeps } from '../../bridge/session-gateway';
import { SessionStore } from '../../bridge/session-store';
import { routeLimited } from '../../refusal';
import { createRouteLimiter } from '../../ratelimit/route-limiter';
import { bearerToken, jsonBody } from '../middleware';

/**
 * A session hello of 10,000 accounts (token, version, capabilities, figures) is about 3 MiB; a symbols list per
 * account fits only for fewer accounts (a bridge splits them over sessions).
 */
const SESSION_HELLO_BODY_LIMIT_BYTES = 8 * 1024 * 1024;
/** 1,000 accounts' reports calls of a few reports each. */
const SESSION_REPORTS_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** Trade events and books: a book alone may weigh 400 KiB, so a bridge sends as many as fit (it batches by size). */
const SESSION_TRADES_BODY_LIMIT_BYTES = 8 * 1024 * 1024;
/** One session's calls (polls, reports and trades together) per second: a bridge polls and reports a few times a second at most. */
const SESSION_CALLS_PER_SECOND = 20;
/** Session hellos per second from one address: a bridge says hello at start and after a reconnect. */
const SESSION_HELLOS_PER_SECOND = 5;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * The multi-account session (protocol 1.7, docs/bridge-protocol.md): one bridge process speaks for many accounts on
 * a fixed number of connections. The hello authenticates each account by its own bridge token (the body); the poll
 * and the reports carry the session token the hello gave (the bearer), budgeted per session.
 */
export function bridgeSessionRoutes(gateway: GatewayDeps, settings: { redis: Redis; keyPrefix: string; bodyReadTimeoutMs: number }): Router {
  const router = Router();
  const deps: SessionDeps = { gateway, sessions: new SessionStore(settings.redis) };
  const limiter = (name: string, max: number, key: (req: Request) => string) =>
    createRouteLimiter({ redis: settings.redis, prefix: `${settings.keyPrefix}bridge-session-${name}:`, max, windowMs: 1000, key, refusal: routeLimited });
  const perSession = limiter('calls', SESSION_CALLS_PER_SECOND, (req) => `session:${sha256(bearerToken(req) ?? '')}`);
  const perAddress = limiter('hello', SESSION_HELLOS_PER_SECOND, (req) => `ip:${ipKeyGenerator(req.ip ?? 'unknown')}`);
  router.post('/bridge/v1/session/hello', perAddress, ...jsonBody(SESSION_HELLO_BODY_LIMIT_BYTES, settings.bodyReadTimeoutMs, 'bridge'), async (req, res) => {
    res.json(await sessionHello(deps, req.body));
  });
  router.get('/bridge/v1/session/commands', perSession, async (req, res) => {
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const result = await sessionCommands(deps, bearerToken(req), Number(req.query.waitMs ?? 0), aborted.signal);
    if (!res.writableEnded && !aborted.signal.aborted) res.json(result);
  });
  router.post(
    '/bridge/v1/session/reports',
    perSession,
    ...jsonBody(SESSION_REPORTS_BODY_LIMIT_BYTES, settings.bodyReadTimeoutMs, 'bridge'),
    async (req, res) => {
      res.json(await sessionReports(deps, bearerToken(req), req.body));
    },
  );
  router.post('/bridge/v1/session/trades', perSession, ...jsonBody(SESSION_TRADES_BODY_LIMIT_BYTES, settings.bodyReadTimeoutMs, 'bridge'), async (req, res) => {
    res.json(await sessionTrades(deps, bearerToken(req), req.body));
  });
  return router;
}
