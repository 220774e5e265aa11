import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { signCallback } from '../../src/callbacks/signer';
import { newEndpointSecret, SecretBox } from '../../src/callbacks/secret-box';
import { postCallback } from '../../src/callbacks/delivery';

const body = JSON.stringify({ type: 'signal.outcome', timestamp: '2026-11-25T12:00:00.000Z', data: { signalId: 'sig_x', ticket: '42' } });

describe('signCallback (Standard Webhooks)', () => {
  it('is verified by the standardwebhooks library with the endpoint secret', () => {
    const secret = newEndpointSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signCallback(secret, 'callback:sig_x:acc-1', new Date(), body);
    expect(headers['webhook-id']).toBe('callback:sig_x:acc-1');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('fails verification for another secret, an altered body, an altered id or a stale timestamp', () => {
    const secret = newEndpointSecret();
    const headers = { ...signCallback(secret, 'callback:sig_x:acc-1', new Date(), body) };
    expect(() => new Webhook(newEndpointSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body.replace('42', '43'), headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'callback:sig_x:acc-2' })).toThrow(WebhookVerificationError);
    const stale = { ...signCallback(secret, 'callback:sig_x:acc-1', new Date(Date.now() - 10 * 60_000), body) };
    expect(() => new Webhook(secret).verify(body, stale)).toThrow(/too old/i);
  });
});

describe('the verification function of docs/callbacks.md (what the n8n and Zapier steps run)', () => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'callbacks.md'), 'utf8');
  const source = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes('function verify('));
  type Verify = (secret: string, id: string, timestamp: string, signature: string, rawBody: string) => boolean;
  const verify = new Function('require', `${source}\nreturn verify;`)(require) as Verify;

  it('accepts what we sign, and refuses another secret, an altered body and a stale timestamp', () => {
    const secret = newEndpointSecret();
    const h = signCallback(secret, 'callback:sig_x:acc-1', new Date(), body);
    expect(verify(secret, h['webhook-id'], h['webhook-timestamp'], h['webhook-signature'], body)).toBe(true);
    expect(verify(newEndpointSecret(), h['webhook-id'], h['webhook-timestamp'], h['webhook-signature'], body)).toBe(false);
    expect(verify(secret, h['webhook-id'], h['webhook-timestamp'], h['webhook-signature'], body.replace('42', '43'))).toBe(false);
    const old = signCallback(secret, 'callback:sig_x:acc-1', new Date(Date.now() - 10 * 60_000), body);
    expect(verify(secret, old['webhook-id'], old['webhook-timestamp'], old['webhook-signature'], body)).toBe(false);
  });
});

describe('SecretBox', () => {
  const box = SecretBox.fromBase64(randomBytes(32).toString('base64'), 'CALLBACK_SECRET_KEY_FILE');
  it('opens what it sealed, for the same binding only', () => {
    const secret = newEndpointSecret();
    const sealed = box.seal(secret, 'owner-a\nep_1');
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed, 'owner-a\nep_1')).toBe(secret);
    expect(() => box.open(sealed, 'owner-b\nep_1')).toThrow(/cannot be decrypted/);
    expect(() => SecretBox.fromBase64(randomBytes(32).toString('base64'), 'CALLBACK_SECRET_KEY_FILE').open(sealed, 'owner-a\nep_1')).toThrow(
      /cannot be decrypted/,
    );
  });
  it('refuses a key that is not 32 bytes', () => {
    expect(() => SecretBox.fromBase64(randomBytes(16).toString('base64'), 'CALLBACK_SECRET_KEY_FILE')).toThrow(/32 bytes/);
  });
});

describe('postCallback', () => {
  let server: http.Server;
  let port: number;
  let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  const received: { host: string | undefined; body: string }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ host: req.headers.host, body: Buffer.concat(chunks).toString() });
        answer(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const settings = { timeoutMs: 2000, maxResponseBytes: 1024 };

  it('connects to the pinned address whatever the name is, and sends the body', async () => {
    answer = (_req, res) => res.writeHead(204).end();
    // This name resolves nowhere: only the pinned address can have reached the receiver.
    const target = { url: new URL(`http://receiver.invalid:${port}/hook`), address: '127.0.0.1', family: 4 as const };
    const result = await postCallback(target, { 'webhook-id': 'm1' }, body, settings);
    expect(result).toMatchObject({ status: 204, delivered: true, error: null });
    expect(received.at(-1)).toEqual({ host: `receiver.invalid:${port}`, body });
  });

  it('does not count a non-2xx or a redirect as delivered, and reads a large answer only up to its bound', async () => {
    const target = { url: new URL(`http://127.0.0.1:${port}/hook`), address: '127.0.0.1', family: 4 as const };
    answer = (_req, res) => res.writeHead(500).end('no');
    await expect(postCallback(target, {}, body, settings)).resolves.toMatchObject({ status: 500, delivered: false });
    answer = (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    await expect(postCallback(target, {}, body, settings)).resolves.toMatchObject({ status: 302, delivered: false });
    // An endless answer: the read stops at its bound instead of waiting for the timeout.
    answer = (_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
      res.on('close', () => res.removeAllListeners('drain'));
    };
    // Had the read gone on, the timeout would have ended it: status null, error 'timeout'.
    const result = await postCallback(target, {}, body, settings);
    expect(result).toMatchObject({ status: 200, delivered: true, error: null });
  });

  it('gives up after its timeout', async () => {
    answer = () => undefined; // never answers
    const target = { url: new URL(`http://127.0.0.1:${port}/hook`), address: '127.0.0.1', family: 4 as const };
    const result = await postCallback(target, {}, body, { timeoutMs: 200, maxResponseBytes: 1024 });
    expect(result).toMatchObject({ status: null, error: 'timeout', delivered: false });
  });
});
