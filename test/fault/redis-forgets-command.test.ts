import { importRegistry } from '../../src/registry/import';
import { startRedis, waitFor, type RedisServer } from '../../support/infra';
import { get, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { ScriptedTerminal } from '../helpers/terminal';

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
