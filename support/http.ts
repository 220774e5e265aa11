import { request as httpRequest } from 'node:http';

/** HTTP as a caller makes it: the body parsed as JSON when it is JSON; a 10 s deadline on every call. */

export interface HttpResult {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when it is not JSON. */
  body: any;
  text: string;
}

/**
 * A request that hangs is a failure, but a 2-core runner under a whole suite can take seconds to answer 150 requests
 * sent at once: the guard is well past any answer the service gives, and well inside every test's own timeout.
 */
const REQUEST_GUARD_MS = 30_000;

async function call(url: string, init: RequestInit): Promise<HttpResult> {
  const res = await fetch(url, { signal: AbortSignal.timeout(REQUEST_GUARD_MS), ...init });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** POST a JSON body (a string is sent as is). */
export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return call(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function get(url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  return call(url, { headers });
}

/** Any method; a body (JSON unless a string) only when given. */
export function send(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  if (body === undefined) return call(url, { method, headers });
  return call(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** Runs `fn` and says how long it took (ms). */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

/**
 * POST a JSON body from a given local address (any 127.x.y.z reaches a loopback listener), so a test can be two
 * clients at once: an attacker and a trader seen by the service as different addresses.
 */
export function postFrom(localAddress: string, url: string, body: unknown, headers: Record<string, string> = {}, timeoutMs = 10_000): Promise<HttpResult> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        localAddress,
        timeout: timeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${url} from ${localAddress} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
