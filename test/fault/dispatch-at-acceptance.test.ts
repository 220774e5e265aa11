import { Client, Connection } from '@temporalio/client';
import type { Redis } from 'ioredis';
import { importRegistry } from '../../src/registry/import';
import { startWorker, type RunningWorker } from '../../src/worker';
import type { MemoryLedger } from '../../src/paper/ledger';
import type { PaperTerminal } from '../../src/paper/terminal';
import { accountWorkflowId } from '../../src/domain/ids';
import { testEnv } from '../../support/env';
import { startRedis, waitFor, type RedisServer } from '../../support/infra';
import { get, pollUntilReported, post, seedOwner, startPaperTerminal, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { bridgeKeys } from '../../src/redis-keys';
import { workflowResult } from '../helpers/temporal';

/**
 * Accept in Redis, answer, then start: the ingress records the signal's start and queues its command itself, answers,
 * then starts the workflow, which supervises the command. Exactly one broker order per (signal, account) at each crash
 * point this adds: the ingress dies after the record and before the enqueue and the start, or after the enqueue and
 * before the 202 and the start (seams that throw
 * where the process would die: nothing after them runs, the caller gets no 202 and sends again with its key); the
 * worker is down while the bridge fills; Redis restarts with and without its data. Plus replays, a broadcast, the
 * expiry and the per-account order. Real Temporal and a Redis of each scenario's own; the paper bridge counts orders.
 */

const buy = { action: 'buy', symbol: 'EURUSD', volume: 0.1 };

/** The orders a paper bridge placed for a command: a market fill is one `open` line of its ledger. */
const ordersOf = (terminal: PaperTerminal, commandId: string) =>
  (terminal.ledger as MemoryLedger).entries.filter((e) => e.op === 'open' && e.commandId === commandId).length;

/** The queue's record of a command (src/bridge/queue.ts key layout): whether it is held, and whether it is still queued. */
async function queued(redis: Redis, accountId: string, commandId: string): Promise<{ held: boolean; inQueue: boolean }> {
  const [command, score] = await Promise.all([
    redis.hget(bridgeKeys.commandRecord(accountId, commandId), 'command'),
    redis.zscore(bridgeKeys.commandQueue(accountId), commandId),
  ]);
  return { held: command !== null, inQueue: score !== null };
}

/** What the crash seams do next: throw once for the signal that arms them, as if the ingress died right there. */
const crash = { before: false, after: false };
class IngressDied extends Error {}
const seams = {
  dispatchFaults: {
    beforeDispatch: () => {
      if (!crash.before) return;
      crash.before = false;
      throw new IngressDied('the ingress died after the record, before the enqueue and the start');
    },
    afterDispatch: () => {
      if (!crash.after) return;
      crash.after = false;
      throw new IngressDied('the ingress died after the enqueue, before the 202 and the start');
    },
  },
};

let connection: Connection;
let temporal: Client;
beforeAll(async () => {
  connection = await Connection.connect({ address: testEnv().temporalAddress });
  temporal = new Client({ connection, namespace: testEnv().temporalNamespace });
});
afterAll(async () => {
  await connection?.close();
});

describe('dispatch at acceptance, worker up (Redis of its own, durable)', () => {
  let redis: RedisServer;
  let stack: Stack;
  const terminals: PaperTerminal[] = [];

  beforeAll(async () => {
    redis = await startRedis({ durable: true });
    stack = await startStack({ env: { REDIS_URL: redis.url }, seams });
  });
  afterAll(async () => {
    for (const t of terminals) await t.stop();
    await stack?.stop();
    await redis?.stop();
  });

  async function accountWithBridge(spec: Parameters<typeof seedOwner>[1] = [{}]) {
    const f = await seedOwner(stack.registry, spec);
    const bridges = await Promise.all(f.accounts.map((a) => startPaperTerminal(stack, a)));
    terminals.push(...bridges.map((b) => b.terminal));
    return { f, bridges: bridges.map((b) => b.terminal) };
  }

  const send = (f: Fixture, key?: string, path = `/${f.accounts[0]!.id}`) =>
    post(`${stack.ingress.url}/webhook/custom${path}`, { secret: f.secret, ...buy }, key ? { 'x-idempotency-key': key } : {});

  for (const point of ['before', 'after'] as const) {
    const where = point === 'before' ? 'after the record and before the enqueue and the start' : 'after the enqueue and before the 202 and the start';
    test(`when the ingress dies ${where} and the caller sends again with its key, then one signal, one order, filled`, async () => {
      const { f, bridges } = await accountWithBridge();
      crash[point] = true;
      const first = await send(f, `crash-${point}`);
      expect(first.status).toBe(500);
      expect(crash[point]).toBe(false);
      const again = await send(f, `crash-${point}`);
      expect(again.status).toBe(202);
      const commandId = accountWorkflowId(again.body.signalId, f.accounts[0]!.id);
      const status = await pollUntilReported(stack.ingress.url, again.body.signalId, f.token, 1, 20_000);
      expect(status.accounts[0]).toMatchObject({ outcome: 'filled', reason: null });
      // The account workflow recorded it (not only the poll's early copy), and the broker saw one order.
      await workflowResult(temporal, commandId, 60_000);
      expect(ordersOf(bridges[0]!, commandId)).toBe(1);
      expect(bridges[0]!.stats.executed).toBe(1);
    });
  }

  test('when the ingress dies after the enqueue, before the 202 and the start, and nobody sends again, then a sweep starts it from its record: one order, filled and supervised', async () => {
    const { f, bridges } = await accountWithBridge();
    crash.after = true;
    const first = await send(f);
    expect(first.status).toBe(500);
    // The caller has no signalId; the bridge has the order, and the record in Redis holds its start until a sweep
    // (of any ingress: here the same process, as if another) makes it once its claim lapsed.
    await waitFor('the paper bridge to fill the order', async () => bridges[0]!.stats.executed === 1, 15_000);
    const commandId = (bridges[0]!.ledger as MemoryLedger).entries.find((e) => e.op === 'open')!.commandId!;
    const outcome = await workflowResult<{ outcome: string; reason: string | null }>(temporal, commandId, 30_000);
    expect(outcome).toMatchObject({ outcome: 'filled', reason: null });
    expect(ordersOf(bridges[0]!, commandId)).toBe(1);
    expect(bridges[0]!.stats.executed).toBe(1);
  });

  test('when the same key is sent three times, then one signalId, one command handed out, one order', async () => {
    const { f, bridges } = await accountWithBridge();
    const answers = [await send(f, 'same'), await send(f, 'same'), await send(f, 'same')];
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.signalId)).size).toBe(1);
    const commandId = accountWorkflowId(answers[0]!.body.signalId, f.accounts[0]!.id);
    await workflowResult(temporal, commandId, 60_000);
    expect(ordersOf(bridges[0]!, commandId)).toBe(1);
    expect(bridges[0]!.stats.executed).toBe(1);
  });

  test('when a broadcast reaches 3 accounts, then each account gets its own command and one order, all filled', async () => {
    const { f, bridges } = await accountWithBridge([{}, {}, {}]);
    const res = await send(f, undefined, '');
    expect(res.status).toBe(202);
    expect(res.body.accountsResolved).toBe(3);
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 3, 20_000);
    expect(status.accounts.map((a: { outcome: string }) => a.outcome)).toEqual(['filled', 'filled', 'filled']);
    f.accounts.forEach((a, i) => expect(ordersOf(bridges[i]!, accountWorkflowId(res.body.signalId, a.id))).toBe(1));
  });

  test('when no bridge takes a command queued at acceptance, then at its expiry it is withdrawn: bridge_offline, and a bridge that comes later never gets it', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { maxSignalAgeMs: 1500 } as never }]);
    const accountId = f.accounts[0]!.id;
    const res = await send(f);
    expect(res.status).toBe(202);
    const commandId = accountWorkflowId(res.body.signalId, accountId);
    // Queued by the ingress before it answered.
    expect(await queued(stack.redis, accountId, commandId)).toEqual({ held: true, inQueue: true });
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 20_000);
    expect(status.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'bridge_offline' });
    expect((await queued(stack.redis, accountId, commandId)).inQueue).toBe(false);
    const late = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await late.hello();
    expect(await late.commands(500)).toEqual([]);
  });

  test('when Redis restarts with its data before a bridge took the command, then the bridge gets it after the restart: one order, filled', async () => {
    const f = await seedOwner(stack.registry, [{}]);
    const accountId = f.accounts[0]!.id;
    const res = await send(f);
    expect(res.status).toBe(202);
    const commandId = accountWorkflowId(res.body.signalId, accountId);
    expect((await queued(stack.redis, accountId, commandId)).held).toBe(true);
    await redis.stop();
    await redis.start();
    await waitFor('the ingress to be ready again', async () => (await get(`${stack.ingress.adminUrl}/readyz`)).status === 200, 15_000, 100);
    const { terminal } = await startPaperTerminal(stack, f.accounts[0]!);
    terminals.push(terminal);
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 20_000);
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled' });
    expect(ordersOf(terminal, commandId)).toBe(1);
  });
});

describe('dispatch at acceptance, worker down (Redis of its own, throwaway)', () => {
  let redis: RedisServer;
  let stack: Stack;
  let worker: RunningWorker | undefined;
  const terminals: PaperTerminal[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    stack = await startStack({ env: { REDIS_URL: redis.url }, seams, worker: false });
  });
  afterEach(async () => {
    await worker?.shutdown();
    worker = undefined;
  });
  afterAll(async () => {
    for (const t of terminals) await t.stop();
    await stack?.stop();
    await redis?.stop();
  });

  const send = (f: Fixture) => post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, ...buy });

  /** A buy accepted and filled by a paper bridge while no worker runs: only the dispatch at acceptance can do that. */
  async function filledWithNoWorker() {
    const f = await seedOwner(stack.registry, [{}]);
    const accountId = f.accounts[0]!.id;
    const { terminal } = await startPaperTerminal(stack, f.accounts[0]!);
    terminals.push(terminal);
    const res = await send(f);
    expect(res.status).toBe(202);
    const commandId = accountWorkflowId(res.body.signalId, accountId);
    await waitFor('the paper bridge to fill it with no worker running', async () => ordersOf(terminal, commandId) === 1, 15_000);
    return { f, accountId, terminal, res, commandId };
  }

  test('when no worker runs, then the bridge fills the signal from the dispatch at acceptance; the worker, back, records that very fill', async () => {
    const { accountId, terminal, res, commandId } = await filledWithNoWorker();
    worker = await startWorker(stack.config);
    // The signal's workflow (and so its account's) starts only now: its outcomes are what the account workflow recorded.
    const [outcome] = await temporal.workflow.getHandle(`signal/${res.body.signalId}`).result();
    const ticket = (terminal.ledger as MemoryLedger).entries.find((e) => e.op === 'open' && e.commandId === commandId)!.ticket;
    expect(outcome).toMatchObject({ accountId, outcome: 'filled', ticket, reason: null });
    expect(ordersOf(terminal, commandId)).toBe(1);
    expect(terminal.stats.executed).toBe(1);
  });

  test("when a signal's ingress died before its enqueue, then the account's later signal waits behind it and both go out in acceptance order", async () => {
    const f = await seedOwner(stack.registry, [{}]);
    const accountId = f.accounts[0]!.id;
    const bridge = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await bridge.hello();
    crash.before = true;
    const first = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: f.secret, ...buy }, { 'x-idempotency-key': 'order-1' });
    expect(first.status).toBe(500);
    const second = await send(f);
    expect(second.status).toBe(202);
    // The second is queued, but held: the first's number is still pending (its start lease).
    expect((await queued(stack.redis, accountId, accountWorkflowId(second.body.signalId, accountId))).held).toBe(true);
    expect(await bridge.commands(500)).toEqual([]);
    const firstAgain = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: f.secret, ...buy }, { 'x-idempotency-key': 'order-1' });
    expect(firstAgain.status).toBe(202);
    worker = await startWorker(stack.config);
    const commands = await bridge.nextCommands(2, 15_000);
    expect(commands.map((c) => c.signalId)).toEqual([firstAgain.body.signalId, second.body.signalId]);
    expect(commands[0]!.seq).toBeLessThan(commands[1]!.seq);
  });

  test('when Redis restarts without its data after the bridge filled the command and before the worker ran, then the workflow queues it again, the bridge answers with its fill: one order', async () => {
    const { f, accountId, terminal, res, commandId } = await filledWithNoWorker();
    await redis.stop();
    await redis.start();
    await waitFor('the stack to reach the restarted Redis', async () => (await stack.redis.ping().catch(() => '')) === 'PONG', 10_000);
    await importRegistry(stack.registry, f.doc);
    await waitFor('the ingress to be ready again', async () => (await get(`${stack.ingress.adminUrl}/readyz`)).status === 200, 15_000, 100);
    expect((await queued(stack.redis, accountId, commandId)).held).toBe(false);
    worker = await startWorker(stack.config);
    const [outcome] = await temporal.workflow.getHandle(`signal/${res.body.signalId}`).result();
    const ticket = (terminal.ledger as MemoryLedger).entries.find((e) => e.op === 'open' && e.commandId === commandId)!.ticket;
    expect(outcome).toMatchObject({ accountId, outcome: 'filled', ticket });
    expect(ordersOf(terminal, commandId)).toBe(1);
  });
});
