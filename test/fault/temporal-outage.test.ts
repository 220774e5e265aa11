import { testEnv } from '../../support/env';
import { waitFor, type TemporalServer } from '../../support/infra';
import type { ProcessStack } from '../../support/processes';
import {
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
 * The acceptance is Redis's alone, and the workflow's start waits in Redis for Temporal. The submission's Temporal
 * deadline stays short here (TEMPORAL_START_TIMEOUT_MS) for the poll, which reads Temporal.
 */
/** Each lane of the sender waits this long between requests: 5 a second, inside the owner's broadcast throttle. */
const SEND_PAUSE_MS = 400;
const TEMPORAL_DEADLINES = { TEMPORAL_START_TIMEOUT_MS: '500' };
const BEFORE = 10;
const DURING = 12;
const AFTER = 10;

/**
 * The accounts keep the service's own staleness guard (market entries expire 30 s after acceptance) and the stack the
 * production door, as in production. The bound on `rejected` (signal_expired / bridge_offline), with the bridge online
 * throughout: none for a signal accepted once Temporal was back, and none for one accepted before the outage unless
 * Temporal came back less than RECOVERY_MS before its 30 s ran out (the worker reconnects with a backoff and then
 * drains the backlog). An outage of a few seconds: none.
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
    'when Temporal is down, then every webhook answer is 202 before it is back, each signal filled by its bridges and shown filled by the poll during the outage; ' +
      'when it is back, then the worker has reconnected by itself, every signal reaches its outcome on both accounts, each fill exactly one order in the ledger, ' +
      'and every signal workflow is started from its record and completes',
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
        // Paced: 202s come back at once, and a closed loop would meet the owner's broadcast throttle (429).
        pauseAfter: () => SEND_PAUSE_MS,
        onDone: (s) => live.push(s),
      });
      const count = (pred: (s: Sent<null>) => boolean) => live.filter(pred).length;

      try {
        await waitFor(`${BEFORE} signals accepted before the outage`, async () => count((s) => s.status === 202) >= BEFORE, 30_000);
        phase.stopBegin = Date.now();
        await temporal!.stop();
        phase.stopEnd = Date.now();
        await waitFor(`${DURING} answers during the outage`, async () => count((s) => s.sentAt >= phase.stopEnd) >= DURING, 60_000);
        // The poll during the outage: it answers from what the bridges reported, so every signal accepted while
        // Temporal is away shows its fills before Temporal is back.
        const acceptedDuring = live.filter((s) => s.sentAt >= phase.stopEnd && s.status === 202).map((s) => s.body.signalId as string);
        // A signal nobody reported: with Temporal unreadable and nothing kept, the poll has nothing true to show.
        const pollDuring = await httpGet(`${url}/v1/signals/sig_${'e'.repeat(32)}`, { authorization: `Bearer ${reg.token}` });
        const pollDoneAt = Date.now();
        const shownDuring = await pollUntilReported(() => url, reg.token, acceptedDuring, { count: 2, deadlineMs: 30_000, concurrency: 4 });
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
            `poll during the outage ${pollDuring.status}; first 202 ${firstBack - phase.startEnd} ms after Temporal was back; answers in order ${timeline}`,
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
        // While it is down: accepted without waiting for Temporal. `outage` holds only answers that arrived before the
        // restart was begun, and at least DURING - 2 of them did: a request that waited for Temporal would not be there.
        for (const s of outage) expect({ i: s.index, status: s.status }).toEqual({ i: s.index, status: 202 });
        // The poll cannot read Temporal. A signal with no kept report gets the spec's 500 (docs/poll.md: never
        // "pending" on a guess), answered before the restart was begun; each signal accepted during the outage
        // showed both its fills from the bridges' kept reports before Temporal was back.
        expect({ status: pollDuring.status, body: pollDuring.body }).toEqual({
          status: 500,
          body: { error: 'Internal error reading outcomes; safe to retry' },
        });
        expect(pollDoneAt).toBeLessThan(phase.startBegin);
        expect(shownDuring.size).toBe(acceptedDuring.length);
        for (const { accounts } of shownDuring.values()) expect(accounts.map((a) => a.outcome)).toEqual(['filled', 'filled']);

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
  // The start is made after the answer now, from the signal's record in Redis: a start lost to a frozen and crashed
  // Temporal is made again once it is back, and nothing holds the account's later signals.
  test(
    'when Temporal freezes while a signal is being started and then crashes before acting on it, ' +
      'then that signal was answered 202 and filled, it is started again and supervised once Temporal is back, ' +
      'and a signal accepted for the same account then is filled promptly',
    async () => {
      const account = reg.accounts[0]!;
      const url = `${stack!.ingress.url}/webhook/custom/${account.id}`;
      const buy = { secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 };
      // Frozen (SIGSTOP), the server takes the start request into its socket and never answers.
      signalGroup(temporal!.pid, 'SIGSTOP');
      let lost: Awaited<ReturnType<typeof httpPost>>;
      try {
        lost = await httpPost(url, buy);
        expect(lost.status).toBe(202);
        const filled = await pollUntilReported(() => stack!.ingress.url, reg.token, [lost.body.signalId as string], { deadlineMs: 15_000 });
        expect(filled.get(lost.body.signalId as string)?.accounts.map((a) => a.outcome)).toEqual(['filled']);
      } finally {
        // It dies before it acts on it (SIGKILL works on a stopped process), and comes back on the same database.
        signalGroup(temporal!.pid, 'SIGKILL');
      }
      await temporal!.stop();
      await temporal!.start();

      // The lost start is made again from its record, and the signal's workflow records the fill.
      const view = await temporalClient({ address: temporal!.address, namespace: 'default' });
      try {
        const handle = view.client.workflow.getHandle(`signal/${lost.body.signalId as string}`);
        const closed = await waitFor(
          'the lost start to be made again and its workflow to complete',
          async () => {
            const d = await handle.describe().catch(() => undefined);
            return d && d.status.name !== 'RUNNING' ? d.status.name : undefined;
          },
          45_000,
          250,
        );
        expect(closed).toBe('COMPLETED');
        expect(await handle.result()).toEqual([expect.objectContaining({ accountId: account.id, outcome: 'filled' })]);
      } finally {
        await view.close();
      }

      // A new signal for the same account: accepted and filled promptly.
      const next = await httpPost(url, buy, { 'x-idempotency-key': `${reg.tag}-after-freeze` });
      expect(next.status).toBe(202);
      const signalId = next.body.signalId as string;
      const outcome = await pollUntilReported(() => stack!.ingress.url, reg.token, [signalId], { deadlineMs: 15_000 });
      expect(outcome.get(signalId)?.accounts).toEqual([
        { accountId: account.id, outcome: 'filled', ticket: expect.any(String), reason: null, occurredAt: expect.any(String), ...MARKET_FILL },
      ]);
    },
    90_000,
  );
});
