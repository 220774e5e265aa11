import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../support/infra';
import { Regions } from '../../src/temporal/regions';
import { TemporalExecutions } from '../../src/temporal/temporal-executions';
import { accountWorkflowId } from '../../src/domain/ids';
import { pollUntilReported, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { waitForAccountWorkflowToHoldCommand } from '../helpers/temporal';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * Reports of a bridge (issue 25, finding 2 and the test gaps): a bridge token cannot fill Redis with reports of
 * commands that never existed, a genuine report still lands (also after Redis lost its command), and Temporal takes a
 * resent report once (update id = commandId), also when Redis lost the first report's record before the resend. The
 * service runs on a Redis of its own here, so its key count is this test's alone.
 */
describe('bridge reports', () => {
  let redisServer: RedisServer;
  let stack: Stack;
  let redis: Redis;
  let regions: Regions;

  beforeAll(async () => {
    redisServer = await startRedis();
    stack = await startStack({ env: { REDIS_URL: redisServer.url } });
    redis = new Redis(redisServer.url);
    regions = new Regions(stack.config.temporal.regions, 5_000, stack.config.temporal.connectTimeoutMs);
  });
  afterAll(async () => {
    await regions?.close();
    redis?.disconnect();
    await stack?.stop();
    await redisServer?.stop();
  });

  const region = () => stack.config.temporal.regions[0]!.name;
  const resultOf = (commandId: string) => regions.call(region(), (client) => client.workflow.getHandle(commandId).result(), Date.now() + 30_000);
  const memory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

  /** A buy on the fixture's account, taken by its bridge (not reported yet). */
  async function buyTaken(f: Fixture) {
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const [command] = await terminal.nextCommands(1);
    // Taken from the dispatch at acceptance, maybe before its workflow runs: these tests hand reports to a workflow
    // that holds its command (or take Redis's record of it away once the workflow has adopted it).
    await waitForAccountWorkflowToHoldCommand(regions.client(region()), command!.commandId);
    return { terminal, signalId: res.body.signalId as string, commandId: command!.commandId };
  }

  test(
    'when a bridge token sends 10 loops × 5 calls × 100 reports for made-up commands of its account with 512-character messages, ' +
      'then Redis keeps no more than a few keys and little memory, every such report is unknown, and a genuine report still lands',
    async () => {
      const f = await seedOwner(stack.registry);
      const account = f.accounts[0]!;
      const keysBefore = await redis.dbsize();
      const memoryBefore = await memory();
      let keysMax = keysBefore;
      const answers: Record<string, number> = {};
      const results: Record<string, number> = {};
      const callMs: number[] = [];
      const loop = async () => {
        for (let call = 0; call < 5; call++) {
          const reports = Array.from({ length: 100 }, () => ({
            commandId: accountWorkflowId(`sig_${randomBytes(15).toString('hex')}`, account.id),
            status: 'rejected',
            retcode: 10006,
            message: 'x'.repeat(512),
          }));
          const sent = Date.now();
          const res = await post(`${stack.ingress.url}/bridge/v1/reports`, { reports }, { authorization: `Bearer ${account.bridgeToken}` });
          callMs.push(Date.now() - sent);
          answers[res.status] = (answers[res.status] ?? 0) + 1;
          for (const r of (res.body?.results ?? []) as { result: string }[]) results[r.result] = (results[r.result] ?? 0) + 1;
          keysMax = Math.max(keysMax, await redis.dbsize());
        }
      };
      const started = Date.now();
      await Promise.all(Array.from({ length: 10 }, loop));
      const attackMs = Date.now() - started;
      const keysAfter = await redis.dbsize();
      const memoryAfter = await memory();
      console.log(
        `[reports] made-up commands: 50 calls × 100 reports in ${attackMs} ms, answers ${JSON.stringify(answers)} in ${Math.min(...callMs)}-${Math.max(...callMs)} ms, results ${JSON.stringify(results)}; ` +
          `keys ${keysBefore} → at most ${keysMax} during → ${keysAfter} after; used_memory ${memoryBefore} → ${memoryAfter} bytes`,
      );
      // A call is answered 200 with every report unknown, or 503 when the account's bound of brief records was full.
      expect(Object.keys(answers).every((s) => s === '200' || s === '503')).toBe(true);
      // Every report answered is `unknown` (a loaded machine may answer every call 503 while the bound is full).
      expect(Object.keys(results).filter((r) => r !== 'unknown')).toEqual([]);
      // Before: one 7-day key per report (5,000 here). Now the brief records of one account are at most 100 at once,
      // plus the account's own keys (limiter, presence, bound).
      expect(keysMax - keysBefore).toBeLessThanOrEqual(110);
      expect(keysAfter - keysBefore).toBeLessThanOrEqual(10);
      expect(memoryAfter - memoryBefore).toBeLessThan(2 * 1024 * 1024);
      expect(await redis.keys(bridgeKeys.commandRecord(account.id, '*'))).toEqual([]);

      // The bridge's genuine report still lands.
      const { terminal, signalId, commandId } = await buyTaken(f);
      expect((await terminal.report([{ commandId, status: 'filled', ticket: '901', price: 1.1 }])).results).toEqual([{ commandId, result: 'recorded' }]);
      const status = await pollUntilReported(stack.ingress.url, signalId, f.token, 1, 15_000);
      expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: '901' });
    },
    120_000,
  );

  test('when Redis lost a command a bridge took, then its report is delivered to the workflow before it is answered, and kept only briefly', async () => {
    const f = await seedOwner(stack.registry);
    const { terminal, signalId, commandId } = await buyTaken(f);
    const key = bridgeKeys.commandRecord(f.accounts[0]!.id, commandId);
    await redis.del(key);
    expect((await terminal.report([{ commandId, status: 'filled', ticket: '902', price: 1.1 }])).results).toEqual([{ commandId, result: 'recorded' }]);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000);
    const status = await pollUntilReported(stack.ingress.url, signalId, f.token, 1, 15_000);
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: '902' });
  });

  /** The account workflow's update events for its command: how many reports Temporal took. */
  async function updatesTaken(commandId: string): Promise<{ accepted: number; signals: number }> {
    const history = await regions.call(region(), (client) => client.workflow.getHandle(commandId).fetchHistory());
    const events = history.events ?? [];
    return {
      accepted: events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length,
      signals: events.filter((e) => e.workflowExecutionSignaledEventAttributes).length,
    };
  }

  test('when the same report is handed to Temporal five times at once (update id = commandId), then the workflow takes it once', async () => {
    const f = await seedOwner(stack.registry);
    const { signalId, commandId } = await buyTaken(f);
    const executions = new TemporalExecutions(regions, stack.config.temporal.taskQueue, 1500, 5_000);
    const report = { commandId, status: 'filled' as const, ticket: '903', price: 1.1 };
    const deliveries = await Promise.all(Array.from({ length: 5 }, () => executions.deliverReport(region(), report)));
    expect(deliveries.every((d) => d === 'delivered' || d === 'closed')).toBe(true);
    expect(await resultOf(commandId)).toMatchObject({ outcome: 'filled', ticket: '903' });
    expect(await updatesTaken(commandId)).toEqual({ accepted: 1, signals: 0 });
    const status = await pollUntilReported(stack.ingress.url, signalId, f.token, 1, 15_000);
    expect(status.accounts).toEqual([expect.objectContaining({ outcome: 'filled', ticket: '903' })]);
  });

  test('when Redis lost the first report before the bridge resends it, then Temporal keeps the first: one update taken, the outcome the first report', async () => {
    const f = await seedOwner(stack.registry);
    const { terminal, signalId, commandId } = await buyTaken(f);
    expect((await terminal.report([{ commandId, status: 'filled', ticket: '904', price: 1.1 }])).results).toEqual([{ commandId, result: 'recorded' }]);
    expect(await resultOf(commandId)).toMatchObject({ outcome: 'filled', ticket: '904' });
    await redis.del(bridgeKeys.commandRecord(f.accounts[0]!.id, commandId));
    // A resend that differs (a bridge whose journal was rewritten) makes "the first one wins" visible. With Redis's
    // record gone, Temporal answers it: its update-id dedup gives back the first update's answer, so the bridge may
    // read `recorded` again; either is an acknowledgement, and the outcome is the first report's.
    const resent = await terminal.report([{ commandId, status: 'filled', ticket: '905', price: 1.2 }]);
    expect(resent.results).toEqual([{ commandId, result: expect.stringMatching(/^(recorded|duplicate)$/) }]);
    expect(await terminal.report([{ commandId, status: 'filled', ticket: '905', price: 1.2 }])).toEqual({ results: [{ commandId, result: 'duplicate' }] });
    expect(await updatesTaken(commandId)).toEqual({ accepted: 1, signals: 0 });
    expect(await resultOf(commandId)).toMatchObject({ outcome: 'filled', ticket: '904' });
    const poll = await pollUntilReported(stack.ingress.url, signalId, f.token, 1, 15_000);
    expect(poll.accounts).toEqual([expect.objectContaining({ outcome: 'filled', ticket: '904' })]);
  });
});
