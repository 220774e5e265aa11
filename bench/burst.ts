/**
 * The bar close's client, the same for the service and for its floor (bench/http-floor.ts): every alert of a bar
 * close posted at one instant from this process, each on a connection of its own (node:http, no agent, as a sender
 * like TradingView opens one per alert), and what came back: the status, or the connection's error code.
 */
import http from 'node:http';
import { summarize, type Summary } from './stats';

/** TradingView gives up on a webhook after 3 s. */
export const SENDER_TIMEOUT_MS = 3_000;

export interface BurstPost {
  path: string;
  /** The HTTP status, or the connection's error code when there was no answer (a reset, a timeout). */
  answer: string;
  signalId?: string;
  /** ms since the epoch: the request created (the alert), and its whole answer received. */
  sentAt: number;
  answeredAt: number;
}

export interface BurstFigures {
  posts: number;
  /** How many posts got each answer (status, or error code). */
  answered: Record<string, number>;
  /** The alert (its post sent) → its answer, every post (an error counts at the time it came). */
  answerMs: Summary;
  /** The bar close's instant (the first post sent) → the last answer. */
  lastAnswerMs: number;
  /** Answers (or errors) later than the sender's 3 s. */
  answeredAfter3s: number;
  accepted: number;
}

function postOne(url: URL, path: string, body: string, timeoutMs: number): Promise<BurstPost> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const done = (answer: string, signalId?: string) => resolve({ path, answer, ...(signalId ? { signalId } : {}), sentAt, answeredAt: Date.now() });
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'error'));
        res.on('end', () => {
          let signalId: string | undefined;
          if (res.statusCode === 202) {
            try {
              signalId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { signalId?: string }).signalId;
            } catch {
              // counted by status anyway
            }
          }
          done(String(res.statusCode), signalId);
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'error'));
    req.end(body);
  });
}

/** Posts `body` to each path at once (one connection each) and waits for every answer or error. */
export async function postBurst(baseUrl: string, paths: readonly string[], body: string, timeoutMs = 20_000): Promise<BurstPost[]> {
  const url = new URL(baseUrl);
  return Promise.all(paths.map((p) => postOne(url, p, body, timeoutMs)));
}

export function burstFigures(posts: readonly BurstPost[]): BurstFigures {
  const answered: Record<string, number> = {};
  for (const p of posts) answered[p.answer] = (answered[p.answer] ?? 0) + 1;
  const t0 = Math.min(...posts.map((p) => p.sentAt));
  const ms = posts.map((p) => p.answeredAt - p.sentAt);
  return {
    posts: posts.length,
    answered,
    answerMs: summarize(ms),
    lastAnswerMs: Math.max(...posts.map((p) => p.answeredAt)) - t0,
    answeredAfter3s: ms.filter((m) => m > SENDER_TIMEOUT_MS).length,
    accepted: posts.filter((p) => p.signalId !== undefined).length,
  };
}
