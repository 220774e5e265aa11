import pino, { type Logger, type LoggerOptions } from 'pino';

/** Structured JSON logs. Secrets and tokens are redacted by path wherever they could appear. */
export function createLogger(level: string, name: string): Logger {
  return pino(loggerOptions(level, name));
}

export function loggerOptions(level: string, name: string): LoggerOptions {
  return {
    name,
    level,
    // An Error under `err` or `error` (the Temporal SDK's own logs put it under `error`) is logged with its type,
    // message and stack: as a plain object it would be `{}`.
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    redact: {
      paths: [
        'secret',
        '*.secret',
        'body.secret',
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        'token',
        '*.token',
        'bridgeToken',
        '*.bridgeToken',
      ],
      censor: '[redacted]',
    },
  };
}
export type { Logger };
