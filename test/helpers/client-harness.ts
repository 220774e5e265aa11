/**
 * The typed client (src/client) against a scripted fetch, for its unit tests (test/unit/client-*.test.ts): the fake
 * clock advances only when the client sleeps.
 */
import { SignalsClient, type ExternalSignal } from '../../src/client';

export const BASE = 'http://signals.test';
const SECRET = 'whsec_unit_test_secret_0123456789';
export const BUY: ExternalSignal = { secret: SECRET, action: 'buy', symbol: 'EURUSD', volume: 0.1 };
export const ACCEPTED = { success: true, signalId: 'sig_0123456789abcdef0123456789abcdef', correlationId: 'req_1', accountsResolved: 2 };

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | { network: string } | { hang: true };

export function json(status: number, body?: unknown, headers: Record<string, string> = {}) {
  return { status, body, headers };
}

export function harness(script: Scripted[], options: { random?: () => number; start?: number } = {}) {
  const calls: Call[] = [];
  const waits: number[] = [];
  let now = options.start ?? 1_700_000_000_000;
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]));
    calls.push({ url: String(input), method: init?.method ?? 'GET', headers, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    const next = script.shift();
    if (!next) throw new Error('the script ran out of answers');
    if ('network' in next) throw new TypeError('fetch failed', { cause: { code: next.network } });
    if ('hang' in next) {
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')));
      });
    }
    return new Response(next.body === undefined ? '' : JSON.stringify(next.body), {
      status: next.status,
      headers: { 'content-type': 'application/json', 'x-request-id': `req_hdr_${calls.length}`, ...next.headers },
    });
  }) as typeof fetch;
  const client = new SignalsClient({
    baseUrl: `${BASE}/`,
    fetch: fetchImpl,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
    clock: () => now,
    random: options.random ?? (() => 0.5),
  });
  return { client, calls, waits, advance: (ms: number) => (now += ms), now: () => now };
}

export const keyOf = (c: Call) => c.headers['x-idempotency-key'];
