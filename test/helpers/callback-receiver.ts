import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What a callback receiver got: one request. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A receiver on `host`: records every request and answers with the next status of its path's script (then 200). */
export async function callbackReceiver(host: string) {
  const received: Received[] = [];
  const scripts = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      received.push({ path: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(scripts.get(req.url ?? '')?.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const url = (p: string) => `http://${host}:${(server.address() as AddressInfo).port}${p}`;
  const origin = () => `http://${host}:${(server.address() as AddressInfo).port}`;
  return { received, scripts, url, origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * The environment of a stack whose callbacks can be registered and delivered to receivers on loopback: a fresh
 * sealing key file, exactly these origins allowed (that port of that host, not the stack's other ports beside it),
 * http allowed.
 */
export function callbackEnv(origins: readonly string[]): Record<string, string> {
  const keyFile = path.join(mkdtempSync(path.join(tmpdir(), 'callbacks-')), 'callback.key');
  writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  return { CALLBACK_SECRET_KEY_FILE: keyFile, CALLBACK_ALLOWED_ORIGINS: origins.join(','), CALLBACK_ALLOW_HTTP: 'true' };
}
