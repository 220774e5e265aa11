/**
 * The load generator, run as its own process by bench/run.ts: `node dist/bench/load.js SPEC.json OUT.json`.
 * It drives the ingress with autocannon, over loopback only, for a bounded duration, and writes what it measured.
 *
 * - closed loop (`connections`): N connections, each sends its next request when the previous answer arrived.
 * - paced (`rate`): a steady open-loop rate. autocannon's own overallRate sends each connection's per-second quota
 *   back to back at the start of every second (a burst each second), so instead `min(rate, 50)` autocannon instances
 *   of one or a few connections at 1 request/s each are started staggered over the first second: the requests are
 *   spread evenly over every second.
 *
 * Latencies are autocannon's own per-request times (write of the request → end of the response), kept raw here, by
 * status. For webhook load, the time of every 202 (Date.now() when its body arrived) is recorded with its signalId.
 * If the parent goes away (its pipe to our stdin closes), this process exits at once.
 */
import fs from 'node:fs';
import autocannon from 'autocannon';
import { summarize, type Summary } from './stats';

export interface LoadSpec {
  label: string;
  kind: 'webhook' | 'poll';
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  durationSec: number;
  /** Closed loop with this many connections, or a paced rate (requests/s); exactly one. */
  connections?: number;
  rate?: number;
  /** webhook: the secret and the accounts to spread the per-account URL over; the body is a market buy. */
  secret?: string;
  accounts?: string[];
  symbol?: string;
  volume?: number;
  /** webhook: keep {signalId, accountId, t202} of every 202 (up to maxRecords). */
  recordAccepted?: boolean;
  maxRecords?: number;
  /** poll: the bearer token and the signalIds to rotate over. */
  token?: string;
  signalIds?: string[];
  /** Per-request timeout (s); default 10. */
  timeoutSec?: number;
}

export interface AcceptedRecord {
  signalId: string;
  accountId: string;
  /** Date.now() when the 202's body had arrived. */
  t202: number;
  /** Date.now() when the request was set up to be sent (the alert). */
  sent?: number;
}

export interface LoadResult {
  label: string;
  kind: LoadSpec['kind'];
  mode: 'closed' | 'paced';
  connections: number;
  instances: number;
  targetRate: number | null;
  durationSec: number;
  startedAt: number;
  endedAt: number;
  elapsedMs: number;
  requests: number;
  /** Requests written (autocannon's count); those beyond the answers were still in flight when it stopped. */
  sent: number;
  statusCounts: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Latency (ms) of the responses with the success status (202 for webhook, 200 for poll). */
  okLatencyMs: Summary;
  /** Latency (ms) of every response. */
  allLatencyMs: Summary;
  /** How fast a refusal (503) came back: the door must answer at once. */
  refusedLatencyMs?: Summary;
  /** Success responses per second of elapsed time. */
  okPerSec: number;
  /** webhook: 503 answers that carried a signalId (the signal may run; the caller is to poll, not resend). */
  pollable503?: number;
  /** poll: how many 200 answers said status "reported". */
  pollReported?: number;
  accepted?: AcceptedRecord[];
}

async function main(): Promise<void> {
  const [specFile, outFile] = process.argv.slice(2);
  if (!specFile || !outFile) throw new Error('usage: load.js SPEC.json OUT.json');
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as LoadSpec;
  // The parent holds our stdin: when it dies, so do we.
  process.stdin.on('end', () => process.exit(3));
  process.stdin.on('error', () => process.exit(3));
  process.stdin.resume();

  const url = new URL(spec.baseUrl);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') throw new Error(`loopback only, not ${url.hostname}`);
  if (!(spec.durationSec > 0 && spec.durationSec <= 600)) throw new Error('durationSec must be in (0, 600]');

  const okStatus = spec.kind === 'webhook' ? 202 : 200;
  const okLatencies: number[] = [];
  const allLatencies: number[] = [];
  const refusedLatencies: number[] = [];
  const statusCounts: Record<string, number> = {};
  const accepted: AcceptedRecord[] = [];
  const maxRecords = spec.maxRecords ?? 200_000;
  let errors = 0;
  let timeouts = 0;
  let pollReported = 0;
  let next = 0;
  let sent = 0;
  let pollable503 = 0;

  const request = buildRequest(spec, () => next++, {
    onAccepted: (rec) => {
      if (spec.recordAccepted && accepted.length < maxRecords) accepted.push(rec);
    },
    onPoll: (reported) => {
      if (reported) pollReported++;
    },
    onPollable503: () => {
      pollable503++;
    },
  });

  /** One autocannon instance; resolves when it is done (its duration is over). */
  const startOne = (connections: number, connectionRate?: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const instance = autocannon(
        {
          url: spec.baseUrl,
          connections,
          ...(connectionRate ? { connectionRate } : {}),
          duration: spec.durationSec,
          timeout: spec.timeoutSec ?? 10,
          pipelining: 1,
          requests: [request],
        },
        (err, result) => {
          if (err) return void reject(err instanceof Error ? err : new Error(String(err)));
          sent += result?.requests?.sent ?? 0;
          resolve();
        },
      );
      instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
        statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
        allLatencies.push(responseTime);
        if (statusCode === okStatus) okLatencies.push(responseTime);
        else if (statusCode === 503) refusedLatencies.push(responseTime);
      });
      instance.on('reqError', (err: Error) => {
        if (/timed out/.test(err?.message ?? '')) timeouts++;
        else errors++;
      });
    });

  const startedAt = Date.now();
  const runs: Promise<unknown>[] = [];
  let instances = 0;
  let connectionsTotal = 0;
  if (spec.rate !== undefined) {
    const rate = Math.max(1, Math.round(spec.rate));
    const k = Math.min(rate, 50);
    for (let i = 0; i < k; i++) {
      const conns = Math.floor(rate / k) + (i < rate % k ? 1 : 0);
      connectionsTotal += conns;
      instances++;
      runs.push(new Promise((resolve) => setTimeout(resolve, Math.round((i * 1000) / k))).then(() => startOne(conns, 1)));
    }
  } else {
    const connections = spec.connections ?? 50;
    connectionsTotal = connections;
    instances = 1;
    runs.push(startOne(connections));
  }
  await Promise.all(runs);
  const endedAt = Date.now();
  const elapsedMs = endedAt - startedAt;

  const result: LoadResult = {
    label: spec.label,
    kind: spec.kind,
    mode: spec.rate !== undefined ? 'paced' : 'closed',
    connections: connectionsTotal,
    instances,
    targetRate: spec.rate ?? null,
    durationSec: spec.durationSec,
    startedAt,
    endedAt,
    elapsedMs,
    requests: allLatencies.length,
    sent,
    statusCounts,
    errors,
    timeouts,
    okLatencyMs: summarize(okLatencies),
    allLatencyMs: summarize(allLatencies),
    refusedLatencyMs: summarize(refusedLatencies),
    // Closed loop: the run's own span. Paced: the configured duration (the staggered starts add up to a second).
    okPerSec: okLatencies.length / (spec.rate !== undefined ? spec.durationSec : elapsedMs / 1000),
    ...(spec.kind === 'poll' ? { pollReported } : { pollable503 }),
    ...(spec.recordAccepted ? { accepted } : {}),
  };
  fs.writeFileSync(`${outFile}.tmp`, JSON.stringify(result));
  fs.renameSync(`${outFile}.tmp`, outFile);
}

function buildRequest(
  spec: LoadSpec,
  counter: () => number,
  hooks: { onAccepted: (r: AcceptedRecord) => void; onPoll: (reported: boolean) => void; onPollable503: () => void },
): autocannon.Request {
  if (spec.kind === 'webhook') {
    const accounts = spec.accounts ?? [];
    if (accounts.length === 0 || !spec.secret) throw new Error('webhook load needs accounts and a secret');
    const body = JSON.stringify({ secret: spec.secret, action: 'buy', symbol: spec.symbol ?? 'EURUSD', volume: spec.volume ?? 0.01 });
    return {
      method: 'POST',
      path: `/webhook/custom/${accounts[0]}`,
      headers: { 'content-type': 'application/json' },
      body,
      // One context per connection and one request in flight per connection: at onResponse the context still
      // holds the account of the request being answered (the next setupRequest runs after it).
      setupRequest: (req, context) => {
        const accountId = accounts[counter() % accounts.length]!;
        Object.assign(context, { accountId, sent: Date.now() });
        return { ...req, path: `/webhook/custom/${accountId}`, body };
      },
      onResponse: (status, resBody, context) => {
        if (status === 503) {
          // A 503 with a signalId (SignalAccepted shape, success false) says the signal may run: poll it.
          if (/"signalId"/.test(resBody)) hooks.onPollable503();
          return;
        }
        if (status !== 202) return;
        const t202 = Date.now();
        try {
          const parsed = JSON.parse(resBody) as { signalId?: string; accountsResolved?: number };
          const { accountId, sent } = context as { accountId?: string; sent?: number };
          if (parsed.signalId) hooks.onAccepted({ signalId: parsed.signalId, accountId: accountId ?? '', t202, ...(sent ? { sent } : {}) });
        } catch {
          // counted by status anyway
        }
      },
    };
  }
  const ids = spec.signalIds ?? [];
  if (ids.length === 0 || !spec.token) throw new Error('poll load needs signalIds and a token');
  return {
    method: 'GET',
    path: `/v1/signals/${ids[0]}`,
    headers: { authorization: `Bearer ${spec.token}` },
    setupRequest: (req) => ({ ...req, path: `/v1/signals/${ids[counter() % ids.length]}` }),
    onResponse: (status, resBody) => {
      if (status !== 200) return;
      try {
        hooks.onPoll((JSON.parse(resBody) as { status?: string }).status === 'reported');
      } catch {
        hooks.onPoll(false);
      }
    },
  };
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`load: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
