/**
 * The fault suite's load: bounded request loops, spec §4.1's two 503s told apart, and a client's retries until
 * accepted.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { HttpResult } from '../../support/processes';

export interface Sent<T = unknown> {
  index: number;
  meta: T;
  /** ms since the epoch when the request left / its answer arrived. */
  sentAt: number;
  doneAt: number;
  ms: number;
  status: number;
  body: any;
  headers?: Headers;
  /** Set when no HTTP answer came at all (connection refused, reset, or the 10 s deadline of httpPost). */
  error?: string;
}

/**
 * Runs `count` requests, at most `concurrency` at once, and stops starting new ones past `deadlineMs` (bounded in
 * count and time). `send(i)` makes request i; `onDone` sees every answer as it arrives.
 */
export async function runBounded<T>(opts: {
  count: number;
  concurrency: number;
  deadlineMs: number;
  send: (index: number) => { meta: T; request: () => Promise<HttpResult> };
  onDone?: (sent: Sent<T>, all: Sent<T>[]) => void;
  /** Checked before each new request: true ends the run early. */
  stop?: () => boolean;
  /** How long the lane waits after this answer before its next request (a client told "retry later" waits). */
  pauseAfter?: (sent: Sent<T>) => number;
}): Promise<Sent<T>[]> {
  const until = Date.now() + opts.deadlineMs;
  const results: Sent<T>[] = [];
  let next = 0;
  const lane = async () => {
    while (next < opts.count && Date.now() < until && !opts.stop?.()) {
      const index = next++;
      const { meta, request } = opts.send(index);
      const sentAt = Date.now();
      let sent: Sent<T>;
      try {
        const res = await request();
        const doneAt = Date.now();
        sent = { index, meta, sentAt, doneAt, ms: doneAt - sentAt, status: res.status, body: res.body, headers: res.headers };
      } catch (err) {
        const doneAt = Date.now();
        sent = { index, meta, sentAt, doneAt, ms: doneAt - sentAt, status: 0, body: undefined, error: String((err as Error)?.message ?? err) };
      }
      results.push(sent);
      opts.onDone?.(sent, results);
      const pause = opts.pauseAfter?.(sent) ?? 0;
      if (pause > 0) await delay(pause);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, lane));
  return results.sort((a, b) => a.index - b.index);
}

/** Counts by a key, for messages: {"202": 290, "503": 10}. */
export function tally<T>(items: readonly T[], key: (t: T) => string | number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[String(key(item))] = (out[String(key(item))] ?? 0) + 1;
  return out;
}

const BACKPRESSURE_BODY = { error: 'System under high load, retry later', backpressure: true };

/**
 * Which of spec §4.1's two 503s an answer is: `backpressure` (not accepted, no signalId: retry later) or `partial`
 * (SignalAccepted with success false and a pollable signalId: a start that may have happened; poll, or retry with the
 * same key, which is deduplicated). Undefined for anything else.
 */
export function kindOf503(res: { status: number; body: any }): 'backpressure' | 'partial' | undefined {
  if (res.status !== 503) return undefined;
  const b = res.body;
  if (b && b.error === BACKPRESSURE_BODY.error && b.backpressure === true && Object.keys(b).length === 2) return 'backpressure';
  if (
    b &&
    b.success === false &&
    typeof b.signalId === 'string' &&
    /^sig_[0-9a-f]{32}$/.test(b.signalId) &&
    typeof b.correlationId === 'string' &&
    typeof b.accountsResolved === 'number' &&
    Object.keys(b).length === 4
  ) {
    return 'partial';
  }
  return undefined;
}

/**
 * Re-sends every answer that was not a 202 (same request, same idempotency key), as a client told to retry later
 * would, until it is a 202: at most `attempts` times each, within `deadlineMs` for all. Returns the final answers.
 */
export async function retryUntilAccepted<T>(
  results: readonly Sent<T>[],
  request: (r: Sent<T>) => Promise<HttpResult>,
  opts: { attempts?: number; deadlineMs?: number } = {},
): Promise<Map<number, Sent<T>>> {
  const out = new Map<number, Sent<T>>();
  const until = Date.now() + (opts.deadlineMs ?? 60_000);
  for (const r of results.filter((x) => x.status !== 202)) {
    let last: Sent<T> = r;
    for (let attempt = 1; attempt <= (opts.attempts ?? 10) && Date.now() < until && last.status !== 202; attempt++) {
      const sentAt = Date.now();
      const res = await request(r).catch(() => undefined);
      const doneAt = Date.now();
      last = { ...r, sentAt, doneAt, ms: doneAt - sentAt, status: res?.status ?? 0, body: res?.body, headers: res?.headers };
      if (last.status !== 202 && last.status !== 503 && last.status !== 0) break;
      // The caller's backoff between retries (what a client told "retry later" does), not a wait for a condition.
      if (last.status !== 202) await delay(200 * attempt);
    }
    // A partial 503 named the signal already: the retry with the same key is a replay of that very signal.
    if (kindOf503(r) === 'partial' && last.status === 202)
      expect({ index: r.index, signalId: last.body.signalId }).toEqual({ index: r.index, signalId: r.body.signalId });
    out.set(r.index, last);
  }
  return out;
}
