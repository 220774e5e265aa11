import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_ANSWER_BYTES, nodeHttpTransport } from '../../src/bridge-kit/http-transport';

/** The bridge's node:http transport against a local server that answers as the test says. */
describe('the bridge transport over node:http', () => {
  let server: http.Server;
  let url: string;
  let answer: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => answer(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = nodeHttpTransport();

  test('when it posts a body, then the server gets method, headers and body whole, and the answer comes back whole', async () => {
    let seen: { method?: string; auth?: string; length?: string; body?: string } = {};
    answer = (req, body, res) => {
      seen = { method: req.method, auth: req.headers.authorization, length: req.headers['content-length'], body };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: ['é', 'x'.repeat(100_000)] }));
    };
    const body = JSON.stringify({ reports: [{ message: 'prix à 1,08 €' }] });
    const got = await send({
      method: 'POST',
      url: `${url}/bridge/v1/reports`,
      headers: { authorization: 'Bearer t' },
      body,
      signal: new AbortController().signal,
    });
    expect(seen).toEqual({ method: 'POST', auth: 'Bearer t', length: String(Buffer.byteLength(body)), body });
    expect(got.status).toBe(200);
    expect(JSON.parse(got.text)).toEqual({ results: ['é', 'x'.repeat(100_000)] });
    expect(got.retryAfter).toBeNull();
  });

  test('when the ingress answers 429 with Retry-After, then the status and the header reach the client', async () => {
    answer = (_req, _body, res) => res.writeHead(429, { 'retry-after': '7' }).end('{"error":"rate_limited"}');
    const got = await send({ method: 'GET', url: `${url}/bridge/v1/commands`, headers: {}, signal: new AbortController().signal });
    expect(got).toEqual({ status: 429, text: '{"error":"rate_limited"}', retryAfter: '7' });
  });

  test('when the call is aborted while the ingress holds it, then it rejects', async () => {
    answer = () => undefined; // a long-poll that never answers
    const aborted = new AbortController();
    const call = send({ method: 'GET', url: `${url}/bridge/v1/commands?waitMs=25000`, headers: {}, signal: aborted.signal });
    aborted.abort();
    await expect(call).rejects.toThrow();
  });

  test('when the ingress cuts the answer before its end, then it rejects instead of handing over a partial body', async () => {
    answer = (_req, _body, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"commands":[');
      setImmediate(() => res.socket?.destroy());
    };
    await expect(send({ method: 'GET', url: `${url}/bridge/v1/commands`, headers: {}, signal: new AbortController().signal })).rejects.toThrow();
  });

  test('when an answer is larger than any the ingress sends, then it rejects and stops reading', async () => {
    let written = 0;
    answer = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 'x');
      const more = (): void => {
        while (written <= MAX_ANSWER_BYTES * 2) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => res.removeAllListeners('drain'));
      more();
    };
    await expect(send({ method: 'GET', url: `${url}/bridge/v1/commands`, headers: {}, signal: new AbortController().signal })).rejects.toThrow(/larger than/);
    expect(written).toBeLessThan(MAX_ANSWER_BYTES * 2);
  });

  test('when nothing listens, then it rejects', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(send({ method: 'GET', url: `http://127.0.0.1:${port}/x`, headers: {}, signal: new AbortController().signal })).rejects.toThrow();
  });

  test('when the URL is not http or https, then it rejects without a call', async () => {
    await expect(send({ method: 'GET', url: 'ftp://127.0.0.1/x', headers: {}, signal: new AbortController().signal })).rejects.toThrow(/unsupported protocol/);
  });
});
