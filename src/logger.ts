import pino, { type Logger } from 'pino';

/** Structured JSON logs. Secrets and tokens are redacted by path wherever they could appear. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
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
  });
}
export type { Logger };
