/** HTTP as a caller makes it: the body parsed as JSON when it is JSON; a 10 s deadline on every call. */

export interface HttpResult {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when it is not JSON. */
  body: any;
  text: string;
}

async function call(url: string, init: RequestInit): Promise<HttpResult> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000), ...init });
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

/** Runs `fn` and says how long it took (ms). */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}
