import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { PinnedTarget } from './guard';

/** What one POST to a receiver came to. Delivered means a 2xx answer; anything else is retried by the caller. */
export interface PostResult {
  status: number | null;
  error: string | null;
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
    const finish = (result: Omit<PostResult, 'durationMs' | 'delivered'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const delivered = result.status !== null && result.status >= 200 && result.status < 300;
      resolve({ ...result, durationMs: elapsed(), delivered });
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
          if (read >= settings.maxResponseBytes) finish({ status, error: null });
        });
        res.on('end', () => finish({ status, error: null }));
        res.on('error', () => finish({ status, error: null }));
      },
    );
    const timer = setTimeout(() => finish({ status: null, error: 'timeout' }), settings.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ status: null, error: describe(err) }));
    req.end(body);
  });
}

/** A transport failure in a few words, for the owner's attempt list (no stack, no address beyond the error code). */
function describe(err: NodeJS.ErrnoException): string {
  if (err.code) return err.code === 'ECONNREFUSED' ? 'connection refused' : err.code.toLowerCase();
  return err.message.slice(0, 120);
}
