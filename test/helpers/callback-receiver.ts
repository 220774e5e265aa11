import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
  return { received, scripts, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
