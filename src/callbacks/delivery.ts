import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { PinnedTarget } from './guard';

/**
 * One delivery attempt, from connect to the answer's status and its bounded read: a receiver answers in well under a
 * second; 10 s is one that is down, and the attempt is retried later rather than holding a delivery slot.
 */
export const CALLBACK_TIMEOUT_MS = 10_000;
/** The most of a receiver's answer read and kept with the attempt, for the owner to see why it failed. */
export const CALLBACK_RESPONSE_MAX_BYTES = 4096;

/**
 * What went wrong, as the owner may see it: coarse on purpose. The transport's own words (`econnreset`,
 * `hpe_invalid_constant`, a TLS alert) tell what kind of service listens on a port, which made the attempt list a
 * port scanner of whatever a URL could reach (issue 25 finding 4). Operators get the detail (PostResult.detail).
 */
export type DeliveryError = 'timeout' | 'connection_failed' | 'http_1xx' | 'http_3xx' | 'http_4xx' | 'http_5xx' | 'refused_by_guard' | 'not_configured';

export const DELIVERY_ERRORS: readonly DeliveryError[] = [
  'timeout',
  'connection_failed',
  'http_1xx',
  'http_3xx',
  'http_4xx',
  'http_5xx',
  'refused_by_guard',
  'not_configured',
];

/** What one POST to a receiver came to. Delivered means a 2xx answer; anything else is retried by the caller. */
export interface PostResult {
  status: number | null;
  error: DeliveryError | null;
  /** The transport's own error code, for the operator's log and Temporal's history only: never the owner's list. */
  detail: string | null;
  durationMs: number;
  delivered: boolean;
}

export interface PostSettings {
  /** The whole attempt: connect, send, the answer's status line and the bounded read. */
  timeoutMs: number;
  /** How much of the answer's body is read (and discarded) before the connection is closed. */
  maxResponseBytes: number;
}

/**
 * POSTs the body to the pinned address: the connection goes to the address the guard checked, whatever the name
 * resolves to by now, while TLS still verifies the certificate against the URL's host name. Redirects are not
 * followed (a 3xx is not delivered): a redirect could point anywhere. Never throws.
 */
export function postCallback(target: PinnedTarget, headers: Record<string, string>, body: string, settings: PostSettings): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (result: { status: number | null; error?: DeliveryError; detail?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const { status } = result;
      const delivered = status !== null && status >= 200 && status < 300;
      const error = result.error ?? (status === null || delivered ? null : statusClass(status));
      resolve({ status, error, detail: result.detail ?? null, durationMs: elapsed(), delivered });
      req.destroy();
    };
    const req = client.request(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'external-signals-callbacks/1' },
      },
      (res) => {
        const status = res.statusCode ?? null;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= settings.maxResponseBytes) finish({ status });
        });
        res.on('end', () => finish({ status }));
        res.on('error', () => finish({ status }));
      },
    );
    const timer = setTimeout(() => finish({ status: null, error: 'timeout', detail: 'timeout' }), settings.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ status: null, error: 'connection_failed', detail: describe(err) }));
    req.end(body);
  });
}

/** An answer that is not a 2xx, by its class only (the exact status is in PostResult.status). */
function statusClass(status: number): DeliveryError {
  if (status < 200) return 'http_1xx';
  if (status < 400) return 'http_3xx';
  if (status < 500) return 'http_4xx';
  return 'http_5xx';
}

/** A transport failure in a few words, for the operator (no stack, no address beyond the error code). */
function describe(err: NodeJS.ErrnoException): string {
  if (err.code) return err.code.toLowerCase();
  return err.message.slice(0, 120);
}
