import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../../src/logger';

/** What a log line says of an error, and what it never says of a secret. */
function lineOf(log: (logger: pino.Logger) => void): Record<string, unknown> {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  log(pino(loggerOptions('info', 'test'), sink));
  return JSON.parse(text) as Record<string, unknown>;
}

describe('logger', () => {
  it("an Error under `error` (the Temporal SDK's activity failures) is logged with its type, message, cause and stack, not as {}", () => {
    const line = lineOf((l) => l.warn({ error: new Error('adoptCommand failed', { cause: new Error('Connection is closed.') }) }, 'Activity failed'));
    expect(line.error).toEqual({
      type: 'Error',
      message: 'adoptCommand failed: Connection is closed.',
      stack: expect.stringContaining('caused by: Error: Connection is closed.'),
    });
  });

  it('an Error under `err` too; secrets and tokens are redacted', () => {
    const line = lineOf((l) => l.error({ err: new TypeError('bad'), secret: 'whsec_x', account: { bridgeToken: 'brg_y' } }, 'failed'));
    expect(line).toMatchObject({ err: { type: 'TypeError', message: 'bad' }, secret: '[redacted]', account: { bridgeToken: '[redacted]' } });
  });
});
