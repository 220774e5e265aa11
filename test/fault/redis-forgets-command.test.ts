import { importRegistry } from '../../src/registry/import';
import { startRedis, waitFor, type RedisServer } from '../../support/infra';
import { get, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { ScriptedTerminal } from '../helpers/terminal';
import { startWorker, type RunningWorker } from '../../src/worker';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * Redis restarts empty (no persistence) after a bridge took a command; the operator re-imports the registry. The
 * command's record, its queue and its delivery mark are gone, but the order may be live at the broker: the outcome
 * must come from the bridge, never `rejected: bridge_offline`. The service runs on a Redis of its own here, so the
 * restart touches no other test.
 */
describe('when Redis forgets a command a bridge already took', () => {
  let redis: RedisServer;
  let stack: Stack;

  beforeAll(async () => {
    redis = await startRedis();
    stack = await startStack({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  async function restartEmpty(f: Fixture): Promise<void> {
    await redis.stop();
    await redis.start();
    await waitFor('the stack to reach the restarted Redis', async () => (await stack.redis.ping().catch(() => '')) === 'PONG', 10_000);
    await importRegistry(stack.registry, f.doc);
    // The ingress's own connections reconnect with a backoff of their own.
    await waitFor('the ingress to be ready again', async () => (await get(`${stack.ingress.adminUrl}/readyz`)).status === 200, 15_000, 100);
  }

  /** A market buy on a fresh account whose bridge has taken the command (and not reported it). */
  async function buyTakenByBridge(maxSignalAgeMs: number) {
    const f = await seedOwner(stack.registry, [{ risk: { maxSignalAgeMs } as never }]);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const [taken] = await terminal.nextCommands(1);
    return { f, terminal, res, taken };
  }

  test('when the expiry passes after the restart, then the command is handed out again and the late fill is reported filled with its ticket', async () => {
    const { f, terminal, res, taken } = await buyTakenByBridge(2500);

    await restartEmpty(f);
    // Past the expiry the workflow asks Redis to withdraw it, finds no record, and cannot know whether the bridge
    // took it: it queues the same commandId again, so the bridge (which executes a commandId once) can answer.
    const [again] = await terminal.nextCommands(1, 20_000);
    expect(again!.commandId).toBe(taken!.commandId);
    const pending = await get(`${stack.ingress.url}/v1/signals/${res.body.signalId}`, { authorization: `Bearer ${f.token}` });
    expect(pending.body).toMatchObject({ status: 'pending_or_unknown', accounts: [] });

    const answer = await terminal.report([{ commandId: taken!.commandId, status: 'filled', ticket: '777', price: 1.1, executedAt: new Date().toISOString() }]);
    expect(answer.results).toEqual([{ commandId: taken!.commandId, result: 'recorded' }]);
    const status = await reportedStatus(stack.ingress.url, f.token, res.body.signalId, { deadlineMs: 15_000 });
    expect(status.accounts[0]).toMatchObject({ accountId: f.accounts[0]!.id, outcome: 'filled', ticket: '777', reason: null });
  });

  test('when the bridge reports before the expiry, then its report reaches the workflow although Redis forgot the command', async () => {
    const { f, terminal, res, taken } = await buyTakenByBridge(60_000);

    await restartEmpty(f);
    const report = { commandId: taken!.commandId, status: 'filled', ticket: '778', price: 1.1, executedAt: new Date().toISOString() };
    expect((await terminal.report([report])).results).toEqual([{ commandId: taken!.commandId, result: 'recorded' }]);
    // A resend is deduplicated (by Redis, and by Temporal's update id).
    expect((await terminal.report([report])).results).toEqual([{ commandId: taken!.commandId, result: 'duplicate' }]);
    const status = await reportedStatus(stack.ingress.url, f.token, res.body.signalId, { deadlineMs: 15_000 });
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: '778' });
  });

  test("when a bridge reports a command of another account, then it is unknown and that account's outcome is untouched", async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [a, b] = f.accounts as [Fixture['accounts'][number], Fixture['accounts'][number]];
    const terminalB = new ScriptedTerminal(stack.ingress.url, b.bridgeToken);
    await terminalB.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${a.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const foreign = `signal/${res.body.signalId}/account/${a.id}`;
    const answer = await terminalB.report([{ commandId: foreign, status: 'filled', ticket: '999' }]);
    expect(answer.results).toEqual([{ commandId: foreign, result: 'unknown' }]);
    const status = await get(`${stack.ingress.url}/v1/signals/${res.body.signalId}`, { authorization: `Bearer ${f.token}` });
    expect(status.body.accounts).toEqual([]);
  });
});

/**
 * The audit's reproduction, many times at once: bridges take their buys, Redis loses every key (FLUSHALL) and the
 * registry is re-imported, the bridges say hello again and report their fills only after the commands' expiry. When a
 * workflow first runs after the loss, its adoption finds no record and queues the command anew, so Redis then holds it
 * queued and never taken: only the generation the number was taken in tells that Redis forgot a bridge took it. Each
 * fill must be recorded and reach the poll, never `rejected: bridge_offline`.
 */
describe('when Redis is flushed after bridges took their commands and before their workflows ran', () => {
  const RUNS = 20;
  let redis: RedisServer;
  let stack: Stack;
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    stack = await startStack({ env: { REDIS_URL: redis.url }, worker: false });
  });
  afterAll(async () => {
    await stack?.stop();
    await worker?.shutdown();
    await redis?.stop();
  });

  test(`when each of ${RUNS} bridges reports its fill after the expiry, then each is recorded and the poll shows it filled`, async () => {
    const maxSignalAgeMs = 15_000;
    const f = await seedOwner(
      stack.registry,
      Array.from({ length: RUNS }, () => ({ risk: { maxSignalAgeMs } as never })),
    );
    const runs = await Promise.all(
      f.accounts.map(async (account) => {
        const terminal = new ScriptedTerminal(stack.ingress.url, account.bridgeToken);
        await terminal.hello();
        const res = await post(`${stack.ingress.url}/webhook/custom/${account.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
        expect(res.status).toBe(202);
        const [taken] = await terminal.nextCommands(1);
        return { account, terminal, signalId: String(res.body.signalId), taken: taken!, expiresAtMs: Date.parse(taken!.expiresAt) };
      }),
    );

    await stack.redis.flushall();
    await importRegistry(stack.registry, f.doc);
    for (const run of runs) await run.terminal.hello();
    // The workflows run only now: each adoption finds nothing and queues its command again, untaken.
    worker = await startWorker(stack.config);
    await waitFor(
      'every workflow to have queued its command again after the flush',
      async () =>
        (await Promise.all(runs.map((r) => stack.redis.hget(bridgeKeys.commandRecord(r.account.id, r.taken.commandId), 'command')))).every((c) => c !== null),
      20_000,
    );
    expect(Math.max(...runs.map((r) => r.expiresAtMs))).toBeGreaterThan(Date.now());

    // Past every expiry (each workflow has looked in Redis by then), each bridge reports what it did before the loss.
    const lastExpiry = Math.max(...runs.map((r) => r.expiresAtMs));
    await waitFor('every command to have expired', async () => Date.now() > lastExpiry + 1000, maxSignalAgeMs + 5000, 100);
    const answers = await Promise.all(
      runs.map((r, i) =>
        r.terminal.report([{ commandId: r.taken.commandId, status: 'filled', ticket: `T-${i}`, price: 1.1, executedAt: new Date().toISOString() }]),
      ),
    );
    expect(answers.map((a) => a.results)).toEqual(runs.map((r) => [{ commandId: r.taken.commandId, result: 'recorded' }]));

    const outcomes = await Promise.all(runs.map((r) => reportedStatus(stack.ingress.url, f.token, r.signalId, { deadlineMs: 30_000 })));
    expect(outcomes.map((s) => s.accounts[0])).toEqual(
      runs.map((r, i) => expect.objectContaining({ accountId: r.account.id, outcome: 'filled', ticket: `T-${i}`, reason: null })),
    );
  });
});
