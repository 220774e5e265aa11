import http from 'node:http';
import https from 'node:https';

/** One answer of the ingress, as the bridge client reads it. */
interface TransportAnswer {
  status: number;
  text: string;
  retryAfter: string | null;
}

interface TransportRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export type Transport = (req: TransportRequest) => Promise<TransportAnswer>;

/**
 * The most an answer may hold. The largest the ingress sends is a poll of 100 commands, each from a signal of at most
 * 64 KiB: an answer past this is not the ingress's, and the bridge stops reading instead of holding it in memory.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

type Agents = Record<'http:' | 'https:', http.Agent>;

// One pool per process, as fetch has: each account's own loop holds its own long-poll, so this pool is unbounded.
const perAccountAgents: Agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/**
 * A pool of at most `maxSockets` kept-alive connections to each ingress: a multi-account session's calls (its polls,
 * its batched reports, trades and hellos) queue for one of them, so the process holds that many whatever its number
 * of accounts (docs/bridge-protocol.md, "Multi-account sessions").
 */
export function boundedAgents(maxSockets: number): Agents {
  return { 'http:': new http.Agent({ keepAlive: true, maxSockets }), 'https:': new https.Agent({ keepAlive: true, maxSockets }) };
}

/**
 * The bridge's calls over node:http with kept-alive connections. The global fetch (undici) spent 42 % of the paper
 * bridge's busy time in its own machinery (headers, pools, abort signals, web streams) while it served 100 accounts'
 * fills in one thread (CHANGELOG.md, "Performance"); a bridge process makes four calls per fill.
 */
export function nodeHttpTransport(agents: Agents = perAccountAgents): Transport {
  return (req) =>
    new Promise<TransportAnswer>((resolve, reject) => {
      const url = new URL(req.url);
      const lib = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
      if (!lib) {
        reject(new Error(`unsupported protocol ${url.protocol}`));
        return;
      }
      const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) };
      const request = lib.request(url, { method: req.method, headers, agent: agents[url.protocol as 'http:' | 'https:'], signal: req.signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            reject(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
            request.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error('the ingress closed its answer before the end'));
        });
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          });
        });
      });
      request.on('error', reject);
      request.end(req.body);
    });
}

/** A fetch as the transport: what tests script their answers with. */
export function fetchTransport(fetchFn: typeof fetch): Transport {
  return async (req) => {
    const res = await fetchFn(req.url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal });
    return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
  };
}
