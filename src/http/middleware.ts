import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import { Refusal } from '../refusal';
import { parseAlertLine } from '../domain/alert-line';
import { sendRefusal, type Channel } from './errors';

/**
 * How long a client may take to send a request body; past it, 408 and the connection is closed. A 64 KB body arrives
 * in milliseconds on any link that can place trades; 5 s bounds how long a slow sender holds a connection slot.
 */
export const BODY_READ_TIMEOUT_MS = 5000;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes a well-formed incoming X-Request-ID or makes one; always echoed. It is the correlationId. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const id = incoming && REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
    res.locals.correlationId = id;
    res.setHeader('X-Request-ID', id);
    next();
  };
}

/** One log line per request, with the correlationId; never a body, a query string or a header. */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info(
        {
          correlationId: res.locals.correlationId,
          method: req.method,
          route: routeOf(req) ?? req.path.slice(0, 64),
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          // What an operator needs when no workflow was made (a refusal) or some accounts were left out (a broadcast).
          ...accountOf(req.path),
          ...(res.locals.refusal ? { refusal: res.locals.refusal as string } : {}),
          ...(res.locals.routing ? { routed: res.locals.routing as unknown } : {}),
        },
        'request',
      );
    });
    next();
  };
}

/** The account a per-account webhook URL names (bounded, as logged). */
function accountOf(path: string): { accountId?: string } {
  const m = /^\/webhook\/custom\/([^/]{1,256})$/.exec(path);
  if (!m) return {};
  try {
    return { accountId: decodeURIComponent(m[1]!).slice(0, 128) };
  } catch {
    return {};
  }
}

/**
 * The body as JSON whatever the Content-Type says (TradingView posts JSON as text/plain), at most `limit` bytes,
 * received within `readTimeoutMs`. Malformed JSON is a 400; a body still arriving at the deadline is a 408, and the
 * connection is closed (the rest of the body is never read), so a slow sender holds a socket for seconds, not a minute.
 * With `alertLine` (the webhook), a text/plain body that is not JSON and does not look like JSON is read as a one-line
 * alert (src/domain/alert-line.ts); a broken JSON message (or an empty body) stays "Malformed JSON body", whatever its
 * Content-Type.
 */
export function jsonBody(limit: number, readTimeoutMs: number, channel: Channel, options: { alertLine?: boolean } = {}): RequestHandler[] {
  return [
    bodyDeadline(readTimeoutMs, channel),
    express.raw({ type: () => true, limit }),
    (req: Request, res: Response, next: NextFunction) => {
      // The deadline answered while the last bytes were arriving: that answer stands.
      if (res.headersSent) return;
      const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      try {
        req.body = JSON.parse(raw) as unknown;
        next();
        return;
      } catch {
        // Not JSON: a one-line alert, or a broken JSON body.
      }
      if (options.alertLine && req.is('text/plain') && raw.trim() !== '' && !/^\s*[[{"]/.test(raw)) {
        const line = parseAlertLine(raw);
        if (line.ok) req.body = line.body;
        next(line.ok ? undefined : new Refusal('invalid', line.error, { details: line.details }));
        return;
      }
      next(new Refusal('invalid', 'Malformed JSON body', { details: [{ path: '', message: 'the body is not valid JSON' }] }));
    },
  ];
}

function bodyDeadline(ms: number, channel: Channel): RequestHandler {
  return (req, res, next) => {
    if (req.complete) {
      next();
      return;
    }
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      res.setHeader('Connection', 'close');
      sendRefusal(res, new Refusal('too_slow', `Request body not received within ${ms} ms`), channel, res.locals.correlationId as string);
      res.once('finish', () => req.socket.destroy());
    }, ms);
    const clear = () => clearTimeout(timer);
    req.once('end', clear);
    req.once('close', clear);
    next();
  };
}

/**
 * Answers 503 backpressure before the process drowns: at most `max` submissions in flight at once. Placed after the
 * body is read, so a slow sender never holds a slot (it is bounded by the body deadline and the per-IP connection cap).
 */
export function inFlightCap(max: number): RequestHandler {
  let inFlight = 0;
  return (_req, res, next) => {
    if (inFlight >= max) {
      next(new Refusal('backpressure', 'System under high load, retry later'));
      return;
    }
    inFlight++;
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        inFlight--;
      }
    };
    res.on('finish', release);
    res.on('close', release);
    next();
  };
}

/** The route pattern Express matched (`/v1/signals/:id`), never the raw path: logs and metric labels stay bounded. */
export function routeOf(req: Request): string | undefined {
  const route = req.route as { path?: unknown } | undefined;
  return typeof route?.path === 'string' ? route.path : undefined;
}

export function bearerToken(req: Request): string | undefined {
  const header = req.get('authorization');
  const match = header ? /^Bearer\s+(\S{1,512})$/i.exec(header) : null;
  return match?.[1];
}
