import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RedisCommandQueue } from '../../src/bridge/queue';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import { waitFor } from '../../support/infra';
import { testEnv } from '../../support/env';
import { get, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { ScriptedTerminal } from '../helpers/terminal';
import { bridgeKeys } from '../../src/redis-keys';
import { buyCommand, commandQueue } from '../helpers/commands';

describe('the command queue holds later commands behind earlier pending ones (real Redis)', () => {
  let redis: Redis;
  let queue: RedisCommandQueue;
  let sequencer: RedisAccountSequencer;
  beforeAll(() => {
    redis = new Redis(testEnv().redisUrl);
    queue = commandQueue(redis);
    sequencer = new RedisAccountSequencer(redis);
  });
  afterAll(async () => {
    await queue.close();
    redis.disconnect();
  });
  const command = (accountId: string, seq: number, deadlineMs: number): BridgeCommand => ({
    commandId: `cmd-${accountId}-${seq}`,
    seq,
    signalId: `sig-${seq}`,
    accountId,
    action: 'buy',
    symbol: 'EURUSD',
    volume: seq / 100,
    acceptedAt: new Date().toISOString(),
    expiresAt: new Date(deadlineMs).toISOString(),
  });

  test('when command 2 is queued before command 1, then nothing is handed out until 1 is queued, then both in order', async () => {
    const acc = `order-${Date.now()}`;
    const deadline = Date.now() + 60_000;
    const [s1, s2] = [
      ...(await sequencer.next([{ accountId: acc, deadlineMs: deadline }])).map((n) => n.seq),
      ...(await sequencer.next([{ accountId: acc, deadlineMs: deadline }])).map((n) => n.seq),
    ];
    expect(s2).toBeGreaterThan(s1!);
    await queue.enqueue(command(acc, s2!, deadline));
    expect(await queue.take(acc, 10)).toEqual([]);
    await queue.enqueue(command(acc, s1!, deadline));
    expect((await queue.take(acc, 10)).map((c) => c.seq)).toEqual([s1, s2]);
  });

  test("when Redis forgets an account's counters, then new numbers and new long-polls still come after the old ones", async () => {
    const acc = `forget-${Date.now()}`;
    const deadline = Date.now() + 60_000;
    const generation = bridgeKeys.longPollGeneration(acc);
    const [before] = (await sequencer.next([{ accountId: acc, deadlineMs: deadline }])).map((n) => n.seq);
    await sequencer.release(acc, before!, deadline);
    // A few long-polls, so that this ingress remembers a generation above what a restarted counter would give.
    for (let i = 0; i < 3; i++) expect(await queue.takeOrWait(acc, 10, 20, new AbortController().signal)).toEqual({ commands: [], superseded: false });
    const remembered = await redis.get(generation);
    const older = queue.takeOrWait(acc, 10, 20_000, new AbortController().signal);
    await waitFor('the older long-poll to be numbered', async () => (await redis.get(generation)) !== remembered, 5_000, 10);

    await redis.del(bridgeKeys.sequence(acc), generation);
    const [after] = (await sequencer.next([{ accountId: acc, deadlineMs: deadline }])).map((n) => n.seq);
    expect(after).toBeGreaterThan(before!);
    await sequencer.release(acc, after!, deadline);
    const newer = queue.takeOrWait(acc, 10, 500, new AbortController().signal);
    expect(await older).toEqual({ commands: [], superseded: true });
    // The newer one waits out its own half second: it is not taken for an older poll.
    expect(await newer).toEqual({ commands: [], superseded: false });
  });

  test('when an earlier number is released (risk refusal) or its deadline passes, then later commands are not held', async () => {
    const acc = `release-${Date.now()}`;
    const far = Date.now() + 60_000;
    const past = Date.now() - 1;
    const [a] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
    const [b] = (await sequencer.next([{ accountId: acc, deadlineMs: past }])).map((n) => n.seq);
    const [c] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
    await queue.enqueue(command(acc, c!, far));
    expect(await queue.take(acc, 10)).toEqual([]);
    await sequencer.release(acc, a!, far);
    // b lapsed at its deadline, so only c remains.
    expect((await queue.take(acc, 10)).map((x) => x.seq)).toEqual([c]);
    expect(b).toBeGreaterThan(a!);
    expect(c).toBeGreaterThan(b!);
  });

  test('when a command is queued twice (an activity retry), then it is handed out once', async () => {
    const acc = `dup-${Date.now()}`;
    const far = Date.now() + 60_000;
    const [s] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
    await queue.enqueue(command(acc, s!, far));
    await queue.enqueue(command(acc, s!, far));
    expect(await queue.take(acc, 10)).toHaveLength(1);
    expect(await queue.take(acc, 10)).toHaveLength(0);
    // A new session (the bridge reconnected) gets the unreported command again.
    await queue.startSession(acc);
    expect(await queue.take(acc, 10)).toHaveLength(1);
  });

  test("when a number's start lease lapses (its ingress died before confirming) and a later command is handed out, then the late command is refused overtaken, on every retry; a resend still goes in", async () => {
    const acc = `overtaken-${Date.now()}`;
    const far = Date.now() + 60_000;
    const lease = Date.now() + 300;
    const [a] = (await sequencer.next([{ accountId: acc, deadlineMs: lease }])).map((n) => n.seq);
    const [b] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
    await queue.enqueue(command(acc, b!, far));
    expect(await queue.take(acc, 10)).toEqual([]);
    await waitFor('the lease to lapse', async () => Date.now() > lease, 5_000, 20);
    expect((await queue.take(acc, 10)).map((c) => c.seq)).toEqual([b]);
    expect(await queue.enqueue(command(acc, a!, far))).toBe('overtaken');
    expect(await queue.enqueue(command(acc, a!, far))).toBe('overtaken');
    expect(await queue.take(acc, 10)).toEqual([]);
    const resent = { ...command(acc, a!, far), commandId: `cmd-${acc}-${a}-resent` };
    expect(await queue.enqueue(resent, { resend: true })).toBe('queued');
    expect((await queue.take(acc, 10)).map((c) => c.commandId)).toEqual([resent.commandId]);
  });

  test("when a number's lease lapses but no later command was handed out yet, then its command is queued and goes first", async () => {
    const acc = `lapsed-first-${Date.now()}`;
    const far = Date.now() + 60_000;
    const [a] = (await sequencer.next([{ accountId: acc, deadlineMs: Date.now() - 1 }])).map((n) => n.seq);
    const [b] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
    expect(await queue.enqueue(command(acc, a!, far))).toBe('queued');
    expect(await queue.enqueue(command(acc, b!, far))).toBe('queued');
    expect((await queue.take(acc, 10)).map((c) => c.seq)).toEqual([a, b]);
  });

  test("when a started signal's lease is confirmed (moved to its deadline), then later commands wait behind it past the lease; an enqueued mark is never brought back", async () => {
    const acc = `confirmed-${Date.now()}`;
    const far = Date.now() + 60_000;
    const lease = Date.now() + 300;
    const [a] = (await sequencer.next([{ accountId: acc, deadlineMs: lease }])).map((n) => n.seq);
    const [b] = (await sequencer.next([{ accountId: acc, deadlineMs: far }])).map((n) => n.seq);
    await sequencer.retime([{ accountId: acc, seq: a!, fromMs: lease, toMs: far }]);
    await queue.enqueue(command(acc, b!, far));
    await waitFor('the lease to lapse', async () => Date.now() > lease + 50, 5_000, 20);
    expect(await queue.take(acc, 10)).toEqual([]);
    expect(await queue.enqueue(command(acc, a!, far))).toBe('queued');
    // A confirmation that arrives after the enqueue removed the mark does not hold b again.
    await sequencer.retime([{ accountId: acc, seq: a!, fromMs: lease, toMs: far }]);
    expect((await queue.take(acc, 10)).map((c) => c.seq)).toEqual([a, b]);
  });

  /**
   * Redis loses one account's data (every key of its slot, as a restart without persistence, FLUSHALL or a failover to
   * an empty replica do). A command numbered before the loss may be in a bridge's hands although Redis no longer says
   * so: no queue step may then answer that it was withdrawn or overtaken.
   */
  describe("after Redis lost an account's data", () => {
    const far = () => Date.now() + 60_000;
    const account = () => `gen-${randomBytes(4).toString('hex')}`;

    /** Numbers a buy on the account, as the ingress does at acceptance. */
    async function numbered(accountId: string) {
      const [n] = await sequencer.next([{ accountId, deadlineMs: far() }]);
      return { command: buyCommand(accountId, n!.seq, far(), `sig-${accountId}`), generation: n!.generation };
    }

    /** Every key of the account's slot goes, as when Redis loses its data. */
    async function loseAccountData(accountId: string): Promise<void> {
      const keys = await redis.keys(`*{${accountId}}*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
    }

    test('when nothing was lost, then a command queued and never taken is withdrawn', async () => {
      const acc = account();
      const { command, generation } = await numbered(acc);
      expect(await queue.adopt(command, generation)).toEqual({ state: 'queued' });
      expect(await queue.withdraw(acc, command.commandId, true, generation)).toBe('withdrawn');
    });

    test('when the data was lost after a bridge took the command and the workflow queued it again, then withdrawing it answers forgotten and it stays queued', async () => {
      const acc = account();
      const { command, generation } = await numbered(acc);
      await queue.enqueue(command, { generation });
      expect((await queue.take(acc, 10)).map((c) => c.commandId)).toEqual([command.commandId]);
      await loseAccountData(acc);

      expect(await queue.adopt(command, generation)).toEqual({ state: 'queued' });
      expect(await queue.withdraw(acc, command.commandId, true, generation)).toBe('forgotten');
      // Still on the queue: the bridge's next poll hands it out again, and the bridge answers with what it did.
      await queue.startSession(acc);
      expect((await queue.take(acc, 10)).map((c) => c.commandId)).toEqual([command.commandId]);
    });

    test('when a later signal of the account was handed out after the loss, then the earlier command is queued, not overtaken', async () => {
      const acc = account();
      const first = await numbered(acc);
      await queue.enqueue(first.command, { generation: first.generation });
      await queue.take(acc, 10);
      await loseAccountData(acc);
      const later = await numbered(acc);
      expect(later.generation).not.toBe(first.generation);
      await queue.enqueue(later.command, { generation: later.generation });
      expect((await queue.take(acc, 10)).map((c) => c.commandId)).toEqual([later.command.commandId]);

      expect(await queue.enqueue(first.command, { generation: first.generation })).toBe('queued');
      // Without the generation (a signal accepted before generations existed), order decides as it always did.
      const unknown = buyCommand(acc, first.command.seq, far(), `sig-old-${acc}`);
      expect(await queue.enqueue(unknown)).toBe('overtaken');
    });

    test('when the account changed owner after the loss, then its adoption is forgotten, and a resend past the expiry queues it again', async () => {
      const acc = account();
      const { command, generation } = await numbered(acc);
      await queue.enqueue(command, { generation });
      await queue.take(acc, 10);
      await loseAccountData(acc);
      await queue.enqueue(command, { generation });
      expect(await queue.withdrawUntaken(acc)).toEqual({ withdrawn: [command.commandId], handedOut: [] });

      expect(await queue.adopt(command, generation)).toEqual({ state: 'forgotten' });
      expect(await queue.withdraw(acc, command.commandId, true, generation)).toBe('forgotten');
      await queue.enqueue(command, { resend: true });
      expect((await queue.take(acc, 10)).map((c) => c.commandId)).toEqual([command.commandId]);
    });
  });
});

describe('execution engine over the bridge API', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  const poll = (signalId: string, token: string) => get(`${stack.ingress.url}/v1/signals/${signalId}`, { authorization: `Bearer ${token}` });

  test('when 50 signals for one account are fired at once, then the bridge receives them in acceptance order', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: (i + 1) / 100 })),
    );
    expect(answers.filter((a) => a.status !== 202).map((a) => ({ status: a.status, body: a.body }))).toEqual([]);
    const delivered = await terminal.nextCommands(50, 30_000);
    // Numbers only grow (never below Redis's clock, src/bridge/monotonic.ts), so acceptance order is ascending order.
    const seqs = delivered.map((c) => c.seq);
    expect(new Set(seqs).size).toBe(50);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // Each request's own volume arrived under its own signal.
    const volumeBySignal = new Map(answers.map((a, i) => [a.body.signalId, (i + 1) / 100]));
    for (const c of delivered) expect(c.volume).toBe(volumeBySignal.get(c.signalId));
  });

  test('when no bridge takes a market order before it expires, then it is withdrawn and rejected bridge_offline; a bridge that connects later never sees it', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { maxSignalAgeMs: 1500 } as never }]);
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const status = await reportedStatus(stack.ingress.url, f.token, res.body.signalId, { deadlineMs: 15_000 });
    expect(status.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'bridge_offline', ticket: null });
    const late = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await late.hello();
    expect(await late.commands(0)).toEqual([]);
  });

  test('when a bridge took the command but has not reported by the expiry, then the outcome stays pending until it reports', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { maxSignalAgeMs: 1000 } as never }]);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const [command] = await terminal.nextCommands(1);
    // Past the expiry the workflow has tried to withdraw it and found it delivered: it must still be pending.
    await waitFor('the command deadline to pass', async () => Date.now() > Date.parse(command!.expiresAt) + 1500, 10_000);
    expect((await poll(res.body.signalId, f.token)).body).toMatchObject({ status: 'pending_or_unknown', accounts: [] });
    await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: 'LATE-1' }]);
    const status = await reportedStatus(stack.ingress.url, f.token, res.body.signalId, { deadlineMs: 10_000 });
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: 'LATE-1' });
  });

  test('when the bridge reports a command expired, then the outcome is rejected signal_expired; a repeated report changes nothing', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const [command] = await terminal.nextCommands(1);
    expect((await terminal.report([{ commandId: command!.commandId, status: 'expired' }])).results).toEqual([
      { commandId: command!.commandId, result: 'recorded' },
    ]);
    expect((await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: 'X' }])).results).toEqual([
      { commandId: command!.commandId, result: 'duplicate' },
    ]);
    const status = await reportedStatus(stack.ingress.url, f.token, res.body.signalId, { deadlineMs: 10_000 });
    expect(status.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'signal_expired' });
  });

  test('when the owner risk rules refuse an order, then it is rejected with the reason code and never reaches the bridge', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { blockedSymbols: ['XAUUSD'] } as never }]);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const refused = await post(url, { secret: f.secret, action: 'buy', symbol: 'xauusd', volume: 0.1 });
    const allowed = await post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const status = await reportedStatus(stack.ingress.url, f.token, refused.body.signalId, { deadlineMs: 10_000 });
    expect(status.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'risk_symbol_blocked' });
    // The refused signal released its place: the next one is not held behind it.
    const [c] = await terminal.nextCommands(1);
    expect(c!.signalId).toBe(allowed.body.signalId);
  });

  test('when a report names a command of another account, then it is unknown and changes nothing', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const mine = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    const other = new ScriptedTerminal(stack.ingress.url, f.accounts[1]!.bridgeToken);
    await Promise.all([mine.hello(), other.hello()]);
    await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const [c] = await mine.nextCommands(1);
    expect((await other.report([{ commandId: c!.commandId, status: 'filled', ticket: 'EVIL' }])).results).toEqual([
      { commandId: c!.commandId, result: 'unknown' },
    ]);
  });

  test('when the account maps symbols and sizes by a multiplier, then the bridge gets the broker symbol and the sized volume rounded down', async () => {
    const f = await seedOwner(stack.registry, [
      { symbols: { aliases: { XAUUSD: 'GOLD' }, prefix: '', suffix: '.m' }, risk: { sizing: { mode: 'multiplier', factor: 1.5 } } as never },
    ]);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    await post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.33 });
    await post(url, { secret: f.secret, action: 'sell', symbol: 'xauusd', volume: 1 });
    const [eur, gold] = await terminal.nextCommands(2);
    expect(eur).toMatchObject({ symbol: 'EURUSD.m', volume: 0.49 });
    expect(gold).toMatchObject({ symbol: 'GOLD', volume: 1.5 });
  });

  test('when a bridge says hello with a newer version, then that version decides the 412 from then on', async () => {
    const f = await seedOwner(stack.registry, [{ bridgeVersion: '1.9.0' }]);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const stopLimit = { secret: f.secret, action: 'sell_stop_limit', symbol: 'EURUSD', volume: 0.1, price: 1.05, stopLimitPrice: 1.049 };
    expect((await post(url, stopLimit)).status).toBe(412);
    await new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken, 'mt5', '2.1.0').hello();
    expect((await post(url, stopLimit)).status).toBe(202);
    await new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken, 'mt5', '1.0.0').hello();
    expect((await post(url, stopLimit)).status).toBe(412);
  });

  test('when a bridge says hello for the wrong platform or with a bad token, then it is refused', async () => {
    const f = await seedOwner(stack.registry);
    await expect(new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken, 'ctrader').hello()).rejects.toThrow(/400/);
    await expect(new ScriptedTerminal(stack.ingress.url, 'brg_not_a_token_not_a_token_000').hello()).rejects.toThrow(/401/);
  });

  test("when the bridge reported its symbols in hello, then volumes are sized to that symbol's step and minimum", async () => {
    const f = await seedOwner(stack.registry, [{ symbols: { aliases: {}, prefix: '', suffix: '.m' } }]);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello([
      { name: 'US30.m', digits: 1, pipSize: 1, volumeStep: 0.1, volumeMin: 0.1, volumeMax: 50 },
      { name: 'XAUUSD', digits: 2, pipSize: 0.1, volumeStep: 0.01, volumeMin: 0.1, volumeMax: 50 },
    ]);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const index = await post(url, { secret: f.secret, action: 'buy', symbol: 'US30', volume: 0.25 });
    const gold = await post(url, { secret: f.secret, action: 'buy', symbol: 'XAUUSD', volume: 0.05 });
    // The broker's own name (US30.m) is found; for gold the trader's name is (the bridge listed XAUUSD unsuffixed).
    const [c] = await terminal.nextCommands(1);
    expect(c).toMatchObject({ signalId: index.body.signalId, symbol: 'US30.m', volume: 0.2 });
    const refused = await reportedStatus(stack.ingress.url, f.token, gold.body.signalId);
    expect(refused.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'risk_volume_below_minimum' });
  });
});
