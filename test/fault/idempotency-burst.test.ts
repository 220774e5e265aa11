import path from 'node:path';
import { idempotencyDigest } from '../../src/signals/idempotency';
import { hashCredential } from '../../src/registry/credentials';
import { testEnv } from '../../support/env';
import { waitFor } from '../../support/infra';
import { ensureBuilt, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import {
  commandIdOf,
  httpPost,
  importRegistry,
  listExecutions,
  makeRegistry,
  ordersByCommand,
  pollUntilReported,
  redisClient,
  scenarioDir,
  temporalClient,
  waitForOrders,
  writeRegistryFile,
  type TemporalView,
} from './kit';
import { MARKET_FILL } from '../helpers/poll-items';
import { bridgeKeys, signalKeys } from '../../src/redis-keys';
import { SPEC_LIMITS } from '../../src/domain/limits';

/**
 * Fault injection at the edge: a caller (a TradingView alert retried by a flaky network, a script in a loop) sends the
 * same request with the same idempotency key 20 times at once, then once more after the replay window. The window is
 * the spec's 45 s (no longer a setting; the service runs as processes here, so no test tuning either): the test waits
 * it out. Exactly two actions must result.
 */

const WINDOW_MS: number = SPEC_LIMITS.replayWindowMs;
const CONCURRENT = 20;
/** How long the ledger is watched for the two orders: a wait for the condition, not a bound on speed. */
const ORDERS_WAIT_MS = 35_000;

// The account's own default staleness guard (30 s for market entries) applies, as in production.
const reg = makeRegistry('idem', 1, { platform: 'mt5', maxSignalAgeMs: 30_000 });
const account = reg.accounts[0]!;

describe('the same idempotency key, 20 times at once and once after the window', () => {
  let stack: ProcessStack | undefined;
  let temporal: TemporalView | undefined;
  let ledgerFile: string;

  beforeAll(async () => {
    ensureBuilt();
    const dir = scenarioDir(reg.tag);
    ledgerFile = path.join(dir, 'ledger.jsonl');
    const registryFile = writeRegistryFile(dir, 'registry.json', reg);
    await importRegistry(registryFile, serviceEnv());
    stack = await startProcessStack({ registryFile, ledgerFile });
    temporal = await temporalClient();
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await temporal?.close();
  });

  test(
    `when ${CONCURRENT} identical requests with one key arrive at once, and the key is sent again after the ${WINDOW_MS} ms window, ` +
      'then the 20 answers are identical and there are two actions in all: two signalIds, two orders in the ledger, both filled',
    async () => {
      const url = `${stack!.ingress.url}/webhook/custom/${account.id}`;
      const key = `${reg.tag}-same-key`;
      const body = { secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.05 };
      const describeAll = () =>
        stack!
          .all()
          .map((p) => p.describe())
          .join('\n');

      const burstAt = Date.now();
      const burst = await Promise.all(Array.from({ length: CONCURRENT }, () => httpPost(url, body, { 'x-idempotency-key': key })));
      expect(burst.map((r) => r.status)).toEqual(Array(CONCURRENT).fill(202));
      const first = burst[0]!.body;
      expect(first).toEqual({ success: true, signalId: expect.stringMatching(/^sig_/), correlationId: expect.any(String), accountsResolved: 1 });
      for (const r of burst) expect(r.body).toEqual(first);
      // Exactly one of them did the work; the others are replays of its answer.
      expect(burst.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(CONCURRENT - 1);

      // The window is a Redis key; it ends by itself after WINDOW_MS (no sleep: wait for it to be gone).
      const windowKey = signalKeys.idempotencyWindow(idempotencyDigest(hashCredential(reg.secret), account.id, key));
      const windows = redisClient(testEnv().redisUrl);
      try {
        await waitFor(`idempotency window ${windowKey} to end`, async () => (await windows.exists(windowKey)) === 0, WINDOW_MS + 15_000, 100);
      } finally {
        windows.disconnect();
      }
      const againAt = Date.now();
      const again = await httpPost(url, body, { 'x-idempotency-key': key });
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(again.body).toEqual({ success: true, signalId: expect.stringMatching(/^sig_/), correlationId: expect.any(String), accountsResolved: 1 });
      expect(again.body.signalId).not.toBe(first.signalId);

      const commands = [commandIdOf(first.signalId, account.id), commandIdOf(again.body.signalId, account.id)];
      const orders = await waitForOrders(ledgerFile, commands, ORDERS_WAIT_MS, describeAll);
      const executedAfterMs = [Date.parse(orders.get(commands[0]!)![0]!.time) - burstAt, Date.parse(orders.get(commands[1]!)![0]!.time) - againAt];
      console.log(
        `[fault] idempotency: ${CONCURRENT} concurrent → 1 signal; after the window → 1 more; order placed ${executedAfterMs.join(' / ')} ms after the requests`,
      );

      const outcomes = await pollUntilReported(() => stack!.ingress.url, reg.token, [first.signalId, again.body.signalId], {
        deadlineMs: 30_000,
        describe: describeAll,
      });
      for (const [i, signalId] of [first.signalId, again.body.signalId].entries()) {
        const ticket = orders.get(commands[i]!)![0]!.ticket;
        expect(outcomes.get(signalId)?.accounts).toEqual([
          { accountId: account.id, outcome: 'filled', ticket, reason: null, occurredAt: expect.any(String), ...MARKET_FILL },
        ]);
      }
      // Two actions in all: two orders for this account in the ledger, two signal workflows in Temporal.
      const all = ordersByCommand(ledgerFile);
      expect([...all.keys()].sort()).toEqual([...commands].sort());
      expect([...all.values()].map((l) => l.length)).toEqual([1, 1]);
      const signals = await waitFor(
        'Temporal visibility to list both signal workflows as completed',
        async () => {
          const list = await listExecutions(temporal!.client, `TaskQueue = "${stack!.env.TEMPORAL_TASK_QUEUE}" AND WorkflowType = "signalWorkflow"`);
          return list.length === 2 && list.every((e) => e.status === 'COMPLETED') ? list : undefined;
        },
        15_000,
        250,
      );
      expect(signals.map((s) => s.workflowId).sort()).toEqual([`signal/${first.signalId}`, `signal/${again.body.signalId}`].sort());
      // No acceptance number is left pending. Concurrent replays may each number the account and race to start the same
      // workflow id (only one runs: the two signal workflows above); a loser's number is released at once, so numbers
      // may have gaps (test/integration/idempotency.test.ts counts actions as workflows too, never by the counter), but
      // nothing may hold the account's later commands back until a deadline.
      const redis = redisClient(testEnv().redisUrl);
      try {
        await waitFor('released numbers to clear', async () => (await redis.zcard(bridgeKeys.pendingMarks(account.id))) === 0, 5_000);
      } finally {
        redis.disconnect();
      }
      // Nothing held them back behind numbers no command will ever carry: both were filled (above) under the
      // account's 30 s staleness guard, which rejects a command held past it, and no number is left pending.
    },
    // The 45 s window is waited out, on top of the burst's and the replay's execution and polls.
    WINDOW_MS + 150_000,
  );
});
