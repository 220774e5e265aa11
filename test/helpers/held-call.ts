import http from 'node:http';

/**
 * A bridge's `POST /bridge/v1/trades` whose body comes only when the test writes it: what the service does before it
 * has read a body (its door, its one-call-at-a-time hold) is seen by holding the body back.
 */
export function heldCall(
  baseUrl: string,
  bridgeToken: string,
  contentLength: number,
): { write(chunk: string): void; close(): void; answer: Promise<{ status: number; body: Record<string, unknown>; retryAfter?: string }> } {
  const url = new URL('/bridge/v1/trades', baseUrl);
  const req = http.request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(contentLength), authorization: `Bearer ${bridgeToken}` },
  });
  const answer = new Promise<{ status: number; body: Record<string, unknown>; retryAfter?: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, ...(retryAfter ? { retryAfter } : {}) });
      });
    });
    req.on('error', reject);
  });
  // The headers go now; the body only as written.
  req.flushHeaders();
  return { write: (chunk) => void req.write(chunk), close: () => req.destroy(), answer };
}
