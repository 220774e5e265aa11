import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { readLedger } from '../../src/paper/ledger';
import { waitFor } from '../../support/infra';
import {
  ensureBuilt,
  httpPost as post,
  processLogDir,
  startProcessStack,
  startWorkerProcess,
  type ProcessStack,
  type ServiceProcess,
} from '../../support/processes';
import { importRegistry, writeRegistry, type RegistryFile } from './support';
import { commandIdOf } from '../helpers/commands';
import { mt5AndCtraderOwner } from '../helpers/registry';
import { describeOrUndefined, workflowResult, temporalClient, type TemporalView } from '../helpers/temporal';
import { reportedStatus } from '../helpers/poll';
import { MARKET_FILL } from '../helpers/poll-items';

/**
 * Graceful shutdown of the built processes under load. SIGTERM to the ingress while a burst of submissions is in
 * flight: every 202 must be a signal that exists in Temporal and fills; every other answer must be "not accepted"
 * (a refused or reset connection, or a 503 without a signalId), and then nothing was placed for it. SIGTERM to the
 * worker mid-run: a new worker process finishes every accepted signal, each exactly once. Both exit 0.
 */

const { tag, mt5, ctrader, secret, token, doc: registryDoc } = mt5AndCtraderOwner('shut');
const accounts = [mt5, ctrader];

/** The fetch failure's root cause (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET …), for the report. */
function causeOf(err: unknown): string {
  let e = err as { code?: string; message?: string; cause?: unknown } | undefined;
  const seen: string[] = [];
  while (e) {
    seen.push(e.code ?? e.message ?? String(e));
    e = e.cause as typeof e;
  }
  return seen.join(' ← ');
}

interface Answer {
  i: number;
  accountId: string;
  sentAt: number;
  answeredAt: number;
  status?: number;
  body?: { signalId?: string; [k: string]: unknown };
  error?: string;
}

describe('graceful shutdown of the built processes under load', () => {
  let registry: RegistryFile;
  let ledgerFile: string;
  let stack: ProcessStack | undefined;
  let temporal: TemporalView;
  const extraWorkers: ServiceProcess[] = [];
  const notes: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    registry = writeRegistry(registryDoc, 'shutdown');
    const dir = path.join(processLogDir(), `shutdown-${tag}`);
    fs.mkdirSync(dir, { recursive: true });
    ledgerFile = path.join(dir, 'ledger.jsonl');
    expect(await importRegistry(registry.file)).toEqual({ accounts: 2, secrets: 1, tokens: 1 });
    temporal = await temporalClient();
    // A generous Temporal deadline: under a burst on a loaded machine a start can take over the default 1.5 s and get a
    // pollable 503 (test/integration/resilience.test.ts covers that). This suite is about shutdown: a 503 here must come
    // from shutting down.
    stack = await startProcessStack({ registryFile: registry.file, ledgerFile, env: { TEMPORAL_START_TIMEOUT_MS: '15000' } });
  }, 120_000);

  afterAll(async () => {
    for (const w of extraWorkers) await w.stop();
    await stack?.stop();
    await temporal?.close();
    registry?.remove();
    if (notes.length > 0) console.log(`[shutdown]\n  ${notes.join('\n  ')}`);
  });

  const url = () => stack!.ingress.url;
  const buy = (i: number, label: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.01, meta: { origin: `${label}-${i}` } });

  /** Polls until the signal is reported filled with a ticket (503 answers are retried: Temporal may be slow). */
  async function untilFilled(signalId: string, accountId: string, timeoutMs: number): Promise<string> {
    const body = await reportedStatus(url, token, signalId, { deadlineMs: timeoutMs, intervalMs: 50 });
    expect(body.accounts).toEqual([
      { accountId, outcome: 'filled', ticket: expect.stringMatching(/^\d+$/), reason: null, occurredAt: expect.any(String), ...MARKET_FILL },
    ]);
    return body.accounts[0]!.ticket as string;
  }

  /** Orders (market fills) in the ledger per commandId of an account. */
  function opensByCommand(accountId: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const l of readLedger(ledgerFile)) {
      if (l.accountId !== accountId || l.op !== 'open' || l.commandId === null) continue;
      out.set(l.commandId, (out.get(l.commandId) ?? 0) + 1);
    }
    return out;
  }

  test('SIGTERM to the ingress during a burst of 40 submissions: each answer is a 202 that fills, or not accepted; the ingress exits 0', async () => {
    const before = new Map(accounts.map((a) => [a, new Set(opensByCommand(a).keys())]));
    const N = 40;
    let first!: () => void;
    const firstAnswer = new Promise<void>((resolve) => (first = resolve));
    const burst = Promise.all(
      Array.from({ length: N }, async (_, i): Promise<Answer> => {
        await delay(i * 2);
        const accountId = accounts[i % 2]!;
        const sentAt = Date.now();
        try {
          const res = await post(`${url()}/webhook/custom/${accountId}`, buy(i, `burst-${tag}`));
          first();
          return { i, accountId, sentAt, answeredAt: Date.now(), status: res.status, body: res.body };
        } catch (err) {
          first();
          return { i, accountId, sentAt, answeredAt: Date.now(), error: causeOf(err) };
        }
      }),
    );
    // SIGTERM as soon as the first answer is back: the pipeline is warm, some requests are mid-way, more are coming.
    await firstAnswer;
    const sigtermAt = Date.now();
    const exit = await stack!.ingress.stop(15_000);
    const exitedAfterMs = Date.now() - sigtermAt;
    const answers = await burst;
    expect(exit).toEqual({ code: 0, signal: null });

    const accepted = answers.filter((a) => a.status === 202);
    const unavailable = answers.filter((a) => a.status === 503);
    const failed = answers.filter((a) => a.error !== undefined);
    const inFlight = answers.filter((a) => a.sentAt <= sigtermAt && a.answeredAt >= sigtermAt);
    notes.push(
      `ingress burst: ${accepted.length} × 202, ${unavailable.length} × 503, ${failed.length} connection errors ` +
        `(${[...new Set(failed.map((f) => f.error))].join('; ') || 'none'}); ${inFlight.length} in flight at SIGTERM ` +
        `(${inFlight.filter((a) => a.status === 202).length} of them 202); exit 0 after ${exitedAfterMs} ms`,
      `answers, ms after SIGTERM: ${answers.map((a) => `${a.status ?? 'err'}@${a.answeredAt - sigtermAt}`).join(' ')}`,
    );
    // Nothing else: no 500, no 4xx, no 503 that carries a signalId (a partial acceptance with one region is a bug).
    expect(answers.filter((a) => a.status !== undefined && a.status !== 202 && a.status !== 503)).toEqual([]);
    for (const a of unavailable) expect(a.body?.signalId).toBeUndefined();
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted.length + unavailable.length + failed.length).toBe(N);

    // Every 202 is a signal Temporal knows, with no ingress running.
    for (const a of accepted) {
      const d = await describeOrUndefined(temporal.client, `signal/${a.body!.signalId}`);
      expect({ signalId: a.body!.signalId, known: d !== undefined }).toEqual({ signalId: a.body!.signalId, known: true });
    }

    // The ingress comes back on the same port; the bridge reconnects by itself and every accepted signal fills.
    await stack!.ingress.start();
    for (const a of accepted) await untilFilled(a.body!.signalId!, a.accountId, 30_000);
    // A request that was accepted but never answered would still be running: wait until no workflow of this stack runs,
    // so the ledger below is final.
    await waitFor(
      'every workflow of this stack to close',
      async () => {
        for await (const _ of temporal.client.workflow.list({ query: `TaskQueue = "${stack!.env.TEMPORAL_TASK_QUEUE}" AND ExecutionStatus = "Running"` }))
          return false;
        return true;
      },
      30_000,
      250,
    );
    for (const accountId of accounts) {
      const opens = opensByCommand(accountId);
      const mine = accepted.filter((a) => a.accountId === accountId).map((a) => commandIdOf(a.body!.signalId!, accountId));
      for (const id of mine) expect({ id, orders: opens.get(id) }).toEqual({ id, orders: 1 });
      // Nothing was placed for a request that was not answered 202: every new order belongs to a 202.
      const unanswered = [...opens.keys()].filter((id) => !before.get(accountId)!.has(id) && !mine.includes(id));
      expect({ accountId, ordersWithout202: unanswered }).toEqual({ accountId, ordersWithout202: [] });
    }
  }, 120_000);

  test('SIGTERM to the worker mid-run: it exits 0; signals accepted meanwhile still reach the bridge; a new worker records every outcome exactly once', async () => {
    const N = 20;
    const accepted: { accountId: string; signalId: string; whileDown: boolean }[] = [];
    let exitedAfterMs = 0;
    for (let i = 0; i < N; i++) {
      const accountId = accounts[i % 2]!;
      if (i === 5) {
        const sigtermAt = Date.now();
        // Every later signal is accepted with no worker running at all.
        expect(await stack!.worker.stop(30_000)).toEqual({ code: 0, signal: null });
        exitedAfterMs = Date.now() - sigtermAt;
      }
      const res = await post(`${url()}/webhook/custom/${accountId}`, buy(i, `worker-${tag}`));
      expect(res.status).toBe(202);
      accepted.push({ accountId, signalId: res.body.signalId, whileDown: i >= 5 });
    }

    // Dispatch at acceptance: the ingress queued each command itself, so the bridge fills the signals accepted while
    // no worker runs, and the poll shows the bridge's reports the ingress recorded. Temporal records nothing yet.
    const down = accepted.filter((a) => a.whileDown);
    for (const a of down) await untilFilled(a.signalId, a.accountId, 40_000);
    for (const a of down) {
      const account = await temporal.client.workflow
        .getHandle(commandIdOf(a.signalId, a.accountId))
        .describe()
        .catch(() => undefined);
      expect({ signalId: a.signalId, closed: account !== undefined && account.status.name !== 'RUNNING' }).toEqual({ signalId: a.signalId, closed: false });
    }

    const restartedAt = Date.now();
    const worker = await startWorkerProcess(stack!.env, { label: 'worker-2' });
    extraWorkers.push(worker);
    // The new worker's account workflows adopt the commands the bridge already filled and record those very fills.
    const recordedAfter = await Promise.all(
      accepted.map(async (a) => {
        const ticket = await untilFilled(a.signalId, a.accountId, 40_000);
        const result = await workflowResult<{ outcome: string; ticket: string }>(temporal.client, commandIdOf(a.signalId, a.accountId), 60_000);
        expect({ signalId: a.signalId, ...result }).toMatchObject({ signalId: a.signalId, outcome: 'filled', ticket });
        return Date.now() - restartedAt;
      }),
    );
    notes.push(
      `worker: SIGTERM after 5 of ${N} accepted, exit 0 after ${exitedAfterMs} ms; ${down.length} accepted and filled with no worker; ` +
        `recorded in Temporal, ms after the new worker was started (in acceptance order): ${recordedAfter.join(' ')}`,
    );
    for (const a of accepted) {
      const id = commandIdOf(a.signalId, a.accountId);
      expect({ id, orders: opensByCommand(a.accountId).get(id) }).toEqual({ id, orders: 1 });
    }
    // The new worker stops cleanly too.
    expect(await worker.stop(30_000)).toEqual({ code: 0, signal: null });
  }, 150_000);
});
