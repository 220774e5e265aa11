import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import { Refusal } from '../signals/errors';

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
          route: (req.route?.path as string | undefined) ?? req.path.slice(0, 64),
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'request',
      );
    });
    next();
  };
}

/**
 * The body as JSON whatever the Content-Type says (TradingView posts JSON as text/plain), at most `limit` bytes.
 * Malformed JSON is a 400.
 */
export function jsonBody(limit: number): RequestHandler[] {
  return [
    express.raw({ type: () => true, limit }),
    (req: Request, _res: Response, next: NextFunction) => {
      const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      try {
        req.body = JSON.parse(raw) as unknown;
        next();
      } catch {
        next(new Refusal('invalid', 'Malformed JSON body', { details: [{ path: '', message: 'the body is not valid JSON' }] }));
      }
    },
  ];
}

/** Answers 503 backpressure before the process drowns: at most `max` submissions in flight at once. */
export function inFlightCap(max: number): RequestHandler {
  let inFlight = 0;
  return (_req, res, next) => {
    if (inFlight >= max) return next(new Refusal('backpressure', 'System under high load, retry later'));
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

export function bearerToken(req: Request): string | undefined {
  const header = req.get('authorization');
  const match = header ? /^Bearer\s+(\S{1,512})$/i.exec(header) : null;
  return match?.[1];
}
