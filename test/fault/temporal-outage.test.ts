import { testEnv } from '../../support/env';
import { waitFor, type TemporalServer } from '../../support/infra';
import type { ProcessStack } from '../../support/processes';
import {
  BACKPRESSURE_BODY,
  commandIdOf,
  stackOnOwnTemporal,
  httpGet,
  httpPost,
  kindOf503,
  listExecutions,
  makeRegistry,
  ordersByCommand,
  pollRetries,
  pollUntilReported,
  redisClient,
  retryUntilAccepted,
  runBounded,
  signalGroup,
  tally,
  temporalClient,
  temporalDiagnosis,
  type Sent,
} from './kit';
import { MARKET_FILL } from '../helpers/poll-items';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * Fault injection: the Temporal server goes away in the middle of a burst of signals (SIGTERM to its process group,
 * through the helper's stop()) and comes back on the same ports and the same SQLite database. The scenario has a
 * Temporal dev server of its own, so the run's shared one is never stopped. Redis is the run's shared one (it stays up).
 */

/**
 * Webhook answers during the outage must come within this. The stack's submission deadline is set to 500 ms here
 * (TEMPORAL_START_TIMEOUT_MS; the connect deadline is the fixed 1 s of src/temporal/regions.ts) because a deadline is not a hard bound today: the Temporal
 * client's gRPC retry interceptor sleeps its backoff (170, 289, 491, 835, 1420 ms ±20 %) past the call's deadline and
 * only then fails with "Deadline exceeded after 0.000s", so with the defaults (1 s / 1.5 s) answers were measured at
 * 1.0-2.03 s (and by the backoff arithmetic up to about 3 s). Reported as a defect of src/temporal/regions.ts (Regions.call).
 */
const OUTAGE_ANSWER_MS = 2_000;
const TEMPORAL_DEADLINES = { TEMPORAL_START_TIMEOUT_MS: '500' };
const BEFORE = 10;
const DURING = 12;
const AFTER = 10;

/**
 * The accounts keep the service's own staleness guard (market entries expire 30 s after acceptance) and the stack the
 * production admission settings, as in production. The bound on `rejected` (signal_expired / bridge_offline), with the
 * bridge online throughout: none for a signal accepted once Temporal was back (admission shuts the door while the path
 * is behind), and none for one accepted before the outage unless Temporal came back less than RECOVERY_MS before its
 * 30 s ran out (the worker reconnects with a backoff and then drains the backlog). An outage of a few seconds: none.
 */
const MAX_SIGNAL_AGE_MS = 30_000;
const RECOVERY_MS = 10_000;
const reg = makeRegistry('tdown', 2, { maxSignalAgeMs: 'service-default' });

describe('the Temporal server stops mid-burst and starts again on the same database', () => {
  let temporal: TemporalServer | undefined;
  let stack: ProcessStack | undefined;
  let ledgerFile: string;

  beforeAll(async () => {
    ({ temporal, stack, ledgerFile } = await stackOnOwnTemporal(reg, TEMPORAL_DEADLINES));
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await temporal?.stop();
  });

  /** For a failure message: the accounts' acceptance-order state in Redis and where the pending executions stand. */
  async function diagnose(signalIds: string[]): Promise<string> {
    const redis = redisClient(testEnv().redisUrl);
    const marks = await Promise.all(
      reg.accounts.map(
        async (a) =>
          `${a.id}: last seq ${await redis.get(bridgeKeys.sequence(a.id)).catch(() => '?')}, pending marks ${JSON.stringify(await redis.zrange(bridgeKeys.pendingMarks(a.id), 0, 4).catch(() => '?'))}, ` +
          `queued ${await redis.zcard(bridgeKeys.commandQueue(a.id)).catch(() => '?')}`,
      ),
    );
    redis.disconnect();
    const view = await temporalClient({ address: temporal!.address, namespace: 'default' });
    const pending = signalIds.filter((id) => !ordersByCommand(ledgerFile).has(commandIdOf(id, reg.accounts[0]!.id)));
    const diag = pending.length
      ? await temporalDiagnosis(view.client, stack!.env.TEMPORAL_TASK_QUEUE!, [`signal/${pending[0]}`, commandIdOf(pending[0]!, reg.accounts[0]!.id)])
      : '';
    await view.close();
    return `--- Redis:\n${marks.join('\n')}\n--- Temporal:\n${diag}`;
  }

  test(
    'when Temporal is down, then every webhook answer is 503 backpressure within 2 s (no 500, no hang); ' +
      'when it is back, then the worker has reconnected by itself, and every signal answered 202 before or after (or retried with its key after a 503) ' +
      'reaches its outcome on both accounts, each fill exactly one order in the ledger',
    async () => {
      const describeAll = () => [...stack!.all().map((p) => p.describe()), `Temporal log: ${temporal!.logFile}`].join('\n');
      const url = stack!.ingress.url;
      const phase = { stopBegin: 0, stopEnd: 0, startBegin: 0, startEnd: 0 };
      let done = false;
      const request = (i: number) =>
        httpPost(
          `${url}/webhook/custom`,
          { secret: reg.secret, action: i % 2 ? 'sell' : 'buy', symbol: 'EURUSD', volume: 0.01 },
          { 'x-idempotency-key': `${reg.tag}-${i}` },
        );
      const live: Sent<null>[] = [];
      const sender = runBounded({
        count: 500,
        concurrency: 2,
        deadlineMs: 150_000,
        stop: () => done,
        send: (i) => ({ meta: null, request: () => request(i) }),
        // A client told "System under high load, retry later" waits before its next request. Without it, a closed
        // loop sends a request every few ms while 503s come back at once, and the retry phase below has hundreds to redo.
        pauseAfter: (s) => (s.status === 503 ? 100 : 0),
        onDone: (s) => live.push(s),
      });
      const count = (pred: (s: Sent<null>) => boolean) => live.filter(pred).length;

      try {
        await waitFor(`${BEFORE} signals accepted before the outage`, async () => count((s) => s.status === 202) >= BEFORE, 30_000);
        phase.stopBegin = Date.now();
        await temporal!.stop();
        phase.stopEnd = Date.now();
        await waitFor(`${DURING} answers during the outage`, async () => count((s) => s.sentAt >= phase.stopEnd) >= DURING, 60_000);
        // The poll during the outage: it must answer too (not hang).
        const pollStarted = Date.now();
        const pollDuring = await httpGet(`${url}/v1/signals/${live.find((s) => s.status === 202)!.body.signalId}`, { authorization: `Bearer ${reg.token}` });
        const pollMs = Date.now() - pollStarted;
        phase.startBegin = Date.now();
        await temporal!.start();
        phase.startEnd = Date.now();
        await waitFor(`${AFTER} signals accepted after the outage`, async () => count((s) => s.sentAt >= phase.startEnd && s.status === 202) >= AFTER, 60_000);
        done = true;
        const results = await sender;

        const outage = results.filter((s) => s.sentAt >= phase.stopEnd && s.doneAt <= phase.startBegin);
        const firstBack = results.filter((s) => s.sentAt >= phase.startEnd && s.status === 202).reduce((t, s) => Math.min(t, s.doneAt), Infinity);
        const timeline = results.map((s) => (s.status === 202 ? '+' : kindOf503(s) === 'backpressure' ? '-' : kindOf503(s) === 'partial' ? 'p' : '?')).join('');
        console.log(
          `[fault] Temporal outage: stop ${phase.stopEnd - phase.stopBegin} ms, down ${phase.startBegin - phase.stopEnd} ms, start ${phase.startEnd - phase.startBegin} ms; ` +
            `${results.length} requests ${JSON.stringify(tally(results, (s) => (s.status === 503 ? `503 ${kindOf503(s)}` : s.status)))}; during the outage ${outage.length} answers ` +
            `${JSON.stringify(tally(outage, (s) => s.status))} in ${Math.min(...outage.map((s) => s.ms))}-${Math.max(...outage.map((s) => s.ms))} ms; ` +
            `poll during the outage ${pollDuring.status} in ${pollMs} ms; first 202 ${firstBack - phase.startEnd} ms after Temporal was back; answers in order ${timeline}`,
        );

        // No hang, no 500: a 202, or one of spec §4.1's two 503s (a request caught while the server was going down may
        // get the pollable partial acceptance: its start may have happened).
        for (const s of results) {
          if (s.status !== 202)
            expect({ i: s.index, status: s.status, kind: kindOf503(s), error: s.error }).toEqual({
              i: s.index,
              status: 503,
              kind: expect.any(String),
              error: undefined,
            });
        }
        expect(outage.length).toBeGreaterThanOrEqual(DURING - 2);
        // While it is down: backpressure, nothing else.
        for (const s of outage) {
          expect({ i: s.index, status: s.status, body: s.body }).toEqual({ i: s.index, status: 503, body: BACKPRESSURE_BODY });
          if (s.ms >= OUTAGE_ANSWER_MS) throw new Error(`request ${s.index} during the outage took ${s.ms} ms (limit ${OUTAGE_ANSWER_MS} ms)`);
        }
        // The poll cannot read Temporal: for a signal a bridge has reported it answers the kept report (docs/poll.md),
        // otherwise spec §4.3's 500 "safe to retry" (or a 503); never a hang, never a guessed "pending".
        if (pollDuring.status === 200) {
          expect(pollDuring.body).toMatchObject({ status: 'reported', accounts: expect.any(Array) });
          expect(pollDuring.body.accounts.map((a: { outcome: string }) => a.outcome)).toEqual(pollDuring.body.accounts.map(() => 'filled'));
        } else expect([500, 503]).toContain(pollDuring.status);
        if (pollDuring.status === 500) expect(pollDuring.body).toEqual({ error: 'Internal error reading outcomes; safe to retry' });
        expect(pollMs).toBeLessThan(OUTAGE_ANSWER_MS);

        // The worker kept running through the outage and reconnected by itself.
        expect(stack!.worker.running).toBe(true);
        expect(stack!.worker.spawns).toBe(1);

        // A 503 is "retry later": the caller retries with the same key, and gets its 202.
        const retried = await retryUntilAccepted(results, (s) => request(s.index), { deadlineMs: 60_000 });
        const final = results.map((s) => retried.get(s.index) ?? s);
        expect(tally(final, (s) => s.status)).toEqual({ 202: results.length });
        const signalIds = final.map((s) => s.body.signalId as string);
        // When each signal was accepted at the earliest: its first request, unless that was refused at the door (a
        // backpressure 503 started nothing), then the retry that got its 202.
        const firstSentAt = new Map(
          final.map((s, i) => [s.body.signalId as string, kindOf503(results[i]!) === 'backpressure' ? s.sentAt : results[i]!.sentAt]),
        );
        expect(new Set(signalIds).size).toBe(results.length);

        // None lost: every signal reaches an outcome on both accounts. Filled means exactly one order at the broker with
        // that ticket; rejected (too late for the staleness guard) means no order at all; nothing else is in the ledger.
        const settleStarted = Date.now();
        const outcomes = await pollUntilReported(() => url, reg.token, signalIds, { count: 2, deadlineMs: 150_000, concurrency: 4 }).catch(
          async (err: Error) => {
            throw new Error(`${err.message.split('\n')[0]}\n${await diagnose(signalIds)}\n--- processes:\n${describeAll()}`);
          },
        );
        const settledMs = Date.now() - settleStarted;
        const orders = ordersByCommand(ledgerFile);
        const all = [...outcomes.entries()].flatMap(([signalId, { accounts }]) => accounts.map((o) => ({ signalId, ...o })));
        expect(all).toHaveLength(2 * signalIds.length);
        for (const o of all) {
          const lines = orders.get(commandIdOf(o.signalId, o.accountId)) ?? [];
          if (o.outcome === 'filled') {
            expect({ signalId: o.signalId, accountId: o.accountId, tickets: lines.map((l) => l.ticket) }).toEqual({
              signalId: o.signalId,
              accountId: o.accountId,
              tickets: [o.ticket],
            });
          } else {
            // Only a signal that had less than RECOVERY_MS of its max age left when Temporal was back may expire.
            const acceptedAt = firstSentAt.get(o.signalId)!;
            expect({
              signalId: o.signalId,
              accountId: o.accountId,
              reason: o.reason,
              orders: lines.length,
              couldExpire: acceptedAt + MAX_SIGNAL_AGE_MS < phase.startEnd + RECOVERY_MS,
            }).toEqual({
              signalId: o.signalId,
              accountId: o.accountId,
              reason: expect.stringMatching(/^(signal_expired|bridge_offline)$/),
              orders: 0,
              couldExpire: true,
            });
          }
        }
        const filledCommands = new Set(all.filter((o) => o.outcome === 'filled').map((o) => commandIdOf(o.signalId, o.accountId)));
        expect([...orders.keys()].filter((c) => !filledCommands.has(c))).toEqual([]);
        expect([...orders.values()].every((l) => l.length === 1)).toBe(true);
        const outcomeTally = tally(all, (o) => (o.outcome === 'filled' ? 'filled' : `rejected ${o.reason}`));

        // Temporal kept everything across the restart: one completed signal workflow per signal.
        const view = await temporalClient({ address: temporal!.address, namespace: 'default' });
        try {
          const signals = await waitFor(
            'visibility to list every signal workflow as completed',
            async () => {
              const list = await listExecutions(view.client, `WorkflowType = "signalWorkflow"`);
              return list.length === signalIds.length && list.every((e) => e.status === 'COMPLETED') ? list : undefined;
            },
            30_000,
            250,
          );
          expect(new Set(signals.map((e) => e.workflowId))).toEqual(new Set(signalIds.map((id) => `signal/${id}`)));
        } finally {
          await view.close();
        }
        console.log(
          `[fault] Temporal outage: ${retried.size} retried with their key; all ${all.length} outcomes reported ${settledMs} ms after the retries: ` +
            `${JSON.stringify(outcomeTally)}; poll answers retried ${JSON.stringify(pollRetries.at(-1))}`,
        );
      } finally {
        done = true;
        await sender.catch(() => undefined);
      }
    },
    270_000,
  );

  // Regression: a start whose answer is lost used to keep its acceptance-order mark until the lost signal's staleness
  // deadline (30 s here), so a later signal of the same account ended `rejected` bridge_offline with its bridge online.
  // Now such a mark holds later commands only briefly (10 s), and a waiting long-poll re-checks held commands.
  test(
    'when Temporal freezes while a signal is being started (a pollable 503) and then crashes before acting on it, ' +
      'then a signal accepted for the same account once Temporal is back is filled promptly',
    async () => {
      const account = reg.accounts[0]!;
      const url = `${stack!.ingress.url}/webhook/custom/${account.id}`;
      const buy = { secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 };
      // Frozen (SIGSTOP), the server takes the start request into its socket and never answers: no key, so the
      // first Temporal call of the request is the signal's start itself, and its answer is lost.
      signalGroup(temporal!.pid, 'SIGSTOP');
      let lost: Awaited<ReturnType<typeof httpPost>>;
      try {
        lost = await httpPost(url, buy);
      } finally {
        // It dies before it acts on it (SIGKILL works on a stopped process), and comes back on the same database.
        signalGroup(temporal!.pid, 'SIGKILL');
      }
      await temporal!.stop();
      expect({ status: lost.status, kind: kindOf503(lost) }).toEqual({ status: 503, kind: 'partial' });
      await temporal!.start();

      // A new signal for the account, once the ingress takes signals again (a key makes the retries one signal).
      const next = await waitFor(
        'the ingress to accept signals again',
        async () => {
          const res = await httpPost(url, buy, { 'x-idempotency-key': `${reg.tag}-after-freeze` });
          return res.status === 202 ? res : undefined;
        },
        30_000,
        250,
      );
      const signalId = next.body.signalId as string;
      const outcome = await pollUntilReported(() => stack!.ingress.url, reg.token, [signalId], { deadlineMs: 15_000 });
      expect(outcome.get(signalId)?.accounts).toEqual([
        { accountId: account.id, outcome: 'filled', ticket: expect.any(String), reason: null, occurredAt: expect.any(String), ...MARKET_FILL },
      ]);
    },
    90_000,
  );
});
