/**
 * One HTTP request of the typed client: a fetch with a timeout whose outcome is either a response (body parsed as
 * JSON when it is JSON) or a network failure that says whether the request can have reached the service.
 */

/** What every request of a SignalsClient shares, fixed at construction (defaults filled in). */
export interface ClientDeps {
  /** Without a trailing slash. */
  baseUrl: string;
  fetchImpl: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  clock: () => number;
  random: () => number;
}

export type Answer =
  | { type: 'response'; status: number; headers: Headers; body: unknown; text: string }
  | { type: 'network'; error: string; timedOut: boolean; neverSent: boolean };

export async function request(
  deps: ClientDeps,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<Answer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), init.timeoutMs);
  try {
    const res = await deps.fetchImpl(url, { method: init.method, headers: init.headers, body: init.body, signal: controller.signal });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      body = undefined;
    }
    return { type: 'response', status: res.status, headers: res.headers, body, text };
  } catch (err) {
    return { type: 'network', error: describeNetworkError(err), timedOut: controller.signal.aborted, neverSent: connectionNeverMade(err) };
  } finally {
    clearTimeout(timer);
  }
}

function describeNetworkError(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
}

/** Errors of the connect phase: the request certainly never reached the service. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

function connectionNeverMade(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return (cause?.code !== undefined && CONNECT_FAILURES.has(cause.code)) || cause?.message === 'bad port';
}

export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat || '(empty body)';
}
