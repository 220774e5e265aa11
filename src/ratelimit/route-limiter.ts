import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import { Refusal } from '../refusal';

/**
 * express-rate-limit with rate-limit-redis, one store (and key prefix) per limiter. A store error reaches the error
 * handler (passOnStoreError false), which fails closed with 503.
 */
export function createRouteLimiter(options: {
  redis: Redis;
  prefix: string;
  max: number;
  windowMs: number;
  key: (req: Request, res: Response) => string;
  /** What to answer when the limit is hit: the error handler (src/http/errors.ts) turns it into the response. */
  refusal: (limit: number, windowMs: number) => Refusal;
}): RequestHandler {
  return rateLimit({
    windowMs: options.windowMs,
    limit: options.max,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    passOnStoreError: false,
    keyGenerator: options.key,
    store: new RedisStore({ prefix: options.prefix, sendCommand: scriptSafeSender(options.redis) }),
    handler: (_req, _res, next) => next(options.refusal(options.max, options.windowMs)),
  });
}

/**
 * rate-limit-redis loads its Lua scripts once, at construction; if Redis is down then, the store keeps the failed
 * load forever and never recovers. So SCRIPT LOAD is answered locally (a script's SHA1 is its identity) and EVALSHA
 * is sent as EVAL: the store works from the first request after Redis comes back.
 */
function scriptSafeSender(redis: Redis) {
  const scripts = new Map<string, string>();
  return async (command: string, ...args: string[]): Promise<never> => {
    const cmd = command.toUpperCase();
    if (cmd === 'SCRIPT' && args[0]?.toUpperCase() === 'LOAD' && args[1] !== undefined) {
      const sha = createHash('sha1').update(args[1]).digest('hex');
      scripts.set(sha, args[1]);
      return sha as never;
    }
    if (cmd === 'EVALSHA' && args[0] !== undefined && scripts.has(args[0])) {
      return (await redis.call('EVAL', scripts.get(args[0])!, ...args.slice(1))) as never;
    }
    return (await redis.call(command, ...args)) as never;
  };
}
