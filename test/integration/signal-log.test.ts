import { waitFor } from '../../support/infra';
import { testEnv } from '../../support/env';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { waitForAccountWorkflowToHoldCommand } from '../helpers/temporal';
import { Regions } from '../../src/temporal/regions';
import { TemporalAccountRuns } from '../../src/temporal/temporal-account-runs';
import { RedisReportedOutcomes } from '../../src/signals/reported-outcomes';
import { signalLog, SignalNotFound, type SignalLog, type SignalLogPage, type SignalLogRow } from '../../src/signals/log';
import { commandQueue } from '../helpers/commands';

/**
 * The owner's signal log against the real Temporal dev server (its visibility) and Redis, through the whole path: the
 * ingress accepts, the worker runs the workflows, scripted terminals take and report the commands. Two owners, A
 * (two accounts) and B (one). Visibility is eventually consistent: every read waits for its condition.
 */
/** A sized entry's report message, as the paper bridge writes it (src/risk/entry-risk.ts). */
const SIZED = 'sized 0.50 lots: 1% of equity 10000.00 USD = 100.00 USD at risk, 200.00 USD a lot at the stop';

describe('the owner signal log', () => {
  let stack: Stack;
  let regions: Regions;
  let log: SignalLog;
  let a: Fixture;
  let b: Fixture;
  /** A's signals in the order sent: a broadcast (filled on a0, rejected on a1), a close on a0 (done), a buy_limit on a1 taken and not reported. */
  const sent: Record<'a1' | 'a2' | 'a3' | 'b1', string> = { a1: '', a2: '', a3: '', b1: '' };

  const submit = async (f: Fixture, path: string, body: Record<string, unknown>) => {
    const res = await post(`${stack.ingress.url}/webhook/custom${path}`, { secret: f.secret, ...body });
    expect(res.status).toBe(202);
    return res.body.signalId as string;
  };
  const ids = (page: SignalLogPage) => page.signals.map((s) => s.signalId);
  /** Lists until the page's signal ids are `expected` (and `also` holds), or the deadline. */
  const listUntil = (owner: string, query: Record<string, unknown>, expected: string[], also: (p: SignalLogPage) => boolean = () => true) =>
    waitFor(
      `${owner}'s log ${JSON.stringify(query)} to list ${expected.join(', ')}`,
      async () => {
        const page = await log.list(owner, query);
        return JSON.stringify(ids(page)) === JSON.stringify(expected) && also(page) ? page : undefined;
      },
      20_000,
      200,
    );
  const settled = (row: SignalLogRow | undefined) => row !== undefined && row.accounts.every((x) => x.outcome !== 'pending');

  beforeAll(async () => {
    // Two execution regions (namespaces of the one dev server): the log reads both.
    const t = testEnv();
    stack = await startStack({
      env: {
        TEMPORAL_REGIONS: JSON.stringify([
          { name: 'default', address: t.temporalAddress, namespace: t.temporalNamespace },
          { name: 'b', address: t.temporalAddress, namespace: t.temporalNamespaceB },
        ]),
      },
    });
    regions = new Regions(stack.config.temporal.regions, 10_000);
    log = signalLog({
      // One clock here (ingress and Temporal on this machine): no margin, so every page ends its walk as early as it may.
      runs: new TemporalAccountRuns(regions, 0),
      registry: stack.registry,
      reported: new RedisReportedOutcomes(stack.redis, 3600),
      deliveries: commandQueue(stack.redis),
    });
    a = await seedOwner(stack.registry, [{}, {}]);
    b = await seedOwner(stack.registry, [{}]);
    const [a0, a1] = a.accounts.map((x) => new ScriptedTerminal(stack.ingress.url, x.bridgeToken));
    const b0 = new ScriptedTerminal(stack.ingress.url, b.accounts[0]!.bridgeToken);
    await Promise.all([a0!, a1!, b0].map((t) => t.hello()));

    sent.a1 = await submit(a, '', { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const [toA0] = await a0!.nextCommands(1);
    const [toA1] = await a1!.nextCommands(1);
    await a0!.report([{ commandId: toA0!.commandId, status: 'filled', ticket: 'T-A1', volume: 0.5, price: 1.0842, message: SIZED }]);
    await a1!.report([{ commandId: toA1!.commandId, status: 'rejected', retcode: 10019, message: 'No money' }]);

    sent.b1 = await submit(b, `/${b.accounts[0]!.id}`, { action: 'buy', symbol: 'EURUSD', volume: 0.2 });
    const [toB0] = await b0.nextCommands(1);
    await b0.report([{ commandId: toB0!.commandId, status: 'filled', ticket: 'T-B1' }]);

    sent.a2 = await submit(a, `/${a.accounts[0]!.id}`, { action: 'close', positionId: 'T-A1', idempotencyKey: 'a2' });
    const [close] = await a0!.nextCommands(1);
    await a0!.report([{ commandId: close!.commandId, status: 'done', ticket: 'T-A1' }]);

    // Taken by the bridge and never reported: pending, with its delivery time.
    sent.a3 = await submit(a, `/${a.accounts[1]!.id}`, { action: 'buy_limit', symbol: 'USDJPY', volume: 0.1, price: 100, idempotencyKey: 'a3' });
    await a1!.nextCommands(1);
  }, 120_000);

  afterAll(async () => {
    await regions?.close();
    await stack?.stop();
  });

  test("when A lists, then A's three signals come newest first, each with A's accounts and their outcomes", async () => {
    const page = await listUntil(a.owner, {}, [sent.a3, sent.a2, sent.a1], (p) => settled(p.signals[1]) && settled(p.signals[2]));
    const [a0, a1] = a.accounts.map((x) => x.id) as [string, string];
    expect(page.signals[2]).toEqual({
      signalId: sent.a1,
      receivedAt: expect.any(String),
      action: 'buy',
      symbol: 'EURUSD',
      accounts: [
        { accountId: a0, outcome: 'filled', ticket: 'T-A1', reason: null, reasonText: null, at: expect.any(String) },
        {
          accountId: a1,
          outcome: 'rejected',
          ticket: null,
          reason: 'broker:10019 No money',
          reasonText: 'the broker refused it: No money',
          at: expect.any(String),
        },
      ],
    });
    // A close is not reported by the poll (nor kept in the memo): its outcome is the account workflow's Outcome.
    expect(page.signals[1]).toMatchObject({ action: 'close', symbol: null });
    expect(page.signals[1]!.accounts).toEqual([{ accountId: a0, outcome: 'done', ticket: null, reason: null, reasonText: null, at: expect.any(String) }]);
    expect(page.signals[0]).toMatchObject({
      action: 'buy_limit',
      symbol: 'USDJPY',
      accounts: [{ accountId: a1, outcome: 'pending', ticket: null, reason: null, reasonText: null, at: null }],
    });
    const times = page.signals.map((s) => Date.parse(s.receivedAt));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    expect(page.nextPageToken).toBeUndefined();
  });

  test('when A filters by action, symbol, account, outcome and time, then only the matching signals and accounts', async () => {
    const [a0, a1] = a.accounts.map((x) => x.id) as [string, string];
    await listUntil(a.owner, { action: 'close' }, [sent.a2]);
    await listUntil(a.owner, { symbol: 'USDJPY' }, [sent.a3]);
    const byAccount = await listUntil(a.owner, { accountId: a1 }, [sent.a3, sent.a1]);
    expect(byAccount.signals.flatMap((s) => s.accounts.map((x) => x.accountId))).toEqual([a1, a1]);
    const rejected = await listUntil(a.owner, { outcome: 'rejected' }, [sent.a1]);
    expect(rejected.signals[0]!.accounts).toEqual([expect.objectContaining({ accountId: a1, outcome: 'rejected' })]);
    await listUntil(a.owner, { outcome: 'filled', accountId: a0 }, [sent.a1]);
    await listUntil(a.owner, { outcome: 'pending' }, [sent.a3]);
    const all = await listUntil(a.owner, {}, [sent.a3, sent.a2, sent.a1]);
    const middle = all.signals[1]!.receivedAt;
    await listUntil(a.owner, { from: middle }, [sent.a3, sent.a2]);
    await listUntil(a.owner, { to: middle }, [sent.a1]);
    await listUntil(a.owner, { from: middle, to: all.signals[0]!.receivedAt }, [sent.a2]);
  });

  test('when A pages one signal at a time, then every signal comes once, in order, and the token of the last page ends it', async () => {
    await listUntil(a.owner, {}, [sent.a3, sent.a2, sent.a1]);
    const seen: string[] = [];
    let token: string | undefined;
    for (let pages = 0; pages < 5; pages++) {
      const page = await log.list(a.owner, { pageSize: 1, ...(token ? { pageToken: token } : {}) });
      expect(page.signals.length).toBeLessThanOrEqual(1);
      seen.push(...ids(page));
      token = page.nextPageToken;
      if (token === undefined) break;
    }
    expect(token).toBeUndefined();
    expect(seen).toEqual([sent.a3, sent.a2, sent.a1]);
  });

  test('when older signals close after newer ones, then they still come in received order, on one page and across pages', async () => {
    // Received r, a, s in that order; closed s, r, a: visibility lists closed workflows by CloseTime (a, r, s), and a
    // walk that stopped on StartTime instead of CloseTime would stop at r and miss s.
    const c = await seedOwner(stack.registry, [{}]);
    const terminal = new ScriptedTerminal(stack.ingress.url, c.accounts[0]!.bridgeToken);
    await terminal.hello();
    const account = `/${c.accounts[0]!.id}`;
    const held = async (key: string) => {
      const signalId = await submit(c, account, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1, idempotencyKey: key });
      const [command] = await terminal.nextCommands(1);
      return { signalId, commandId: command!.commandId };
    };
    const r = await held('r');
    const a = await held('a');
    const s = await submit(c, account, { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const [toS] = await terminal.nextCommands(1);
    await terminal.report([{ commandId: toS!.commandId, status: 'filled', ticket: 'T-S' }]);
    await listUntil(c.owner, { outcome: 'filled' }, [s]);
    await terminal.report([{ commandId: r.commandId, status: 'filled', ticket: 'T-R' }]);
    await listUntil(c.owner, { outcome: 'filled' }, [s, r.signalId]);
    await terminal.report([{ commandId: a.commandId, status: 'filled', ticket: 'T-A' }]);
    const expected = [s, a.signalId, r.signalId];
    await listUntil(c.owner, {}, expected, (p) => p.signals.every(settled));
    for (const pageSize of [1, 2]) {
      const seen: string[] = [];
      let token: string | undefined;
      for (let pages = 0; pages < 5; pages++) {
        const page = await log.list(c.owner, { pageSize, ...(token ? { pageToken: token } : {}) });
        seen.push(...ids(page));
        token = page.nextPageToken;
        if (token === undefined) break;
      }
      expect(seen).toEqual(expected);
    }
  });

  test('when a broadcast runs in two regions, then it is one row with both accounts, and one timeline', async () => {
    const d = await seedOwner(stack.registry, [{}, { region: 'b' }]);
    const [d0, d1] = d.accounts.map((x) => x.id) as [string, string];
    const terminals = d.accounts.map((x) => new ScriptedTerminal(stack.ingress.url, x.bridgeToken));
    await Promise.all(terminals.map((t) => t.hello()));
    const signalId = await submit(d, '', { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    for (const [i, terminal] of terminals.entries()) {
      const [command] = await terminal.nextCommands(1);
      await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: `T-D${i}` }]);
    }
    const page = await listUntil(d.owner, {}, [signalId], (p) => p.signals.every(settled) && p.signals[0]!.accounts.length === 2);
    expect(page.signals[0]!.accounts).toEqual([
      { accountId: d0, outcome: 'filled', ticket: 'T-D0', reason: null, reasonText: null, at: expect.any(String) },
      { accountId: d1, outcome: 'filled', ticket: 'T-D1', reason: null, reasonText: null, at: expect.any(String) },
    ]);
    const detail = await log.detail(d.owner, signalId);
    expect(detail.accounts.map((x) => [x.accountId, x.outcome.outcome, x.delivered !== null])).toEqual([
      [d0, 'filled', true],
      [d1, 'filled', true],
    ]);
  });

  test('when an account workflow is ended by hand while its command is out, then the account stays pending, never rejected', async () => {
    const e = await seedOwner(stack.registry, [{}]);
    const terminal = new ScriptedTerminal(stack.ingress.url, e.accounts[0]!.bridgeToken);
    await terminal.hello();
    const signalId = await submit(e, `/${e.accounts[0]!.id}`, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1, idempotencyKey: 'e' });
    const [command] = await terminal.nextCommands(1);
    // The bridge may hold the command (dispatched at acceptance) before its account workflow runs.
    await waitForAccountWorkflowToHoldCommand(regions.client('default'), command!.commandId);
    await regions.client('default').workflow.getHandle(command!.commandId).terminate('operator test');
    await waitFor(
      'the terminated account workflow to be listed closed',
      async () => (await log.list(e.owner, { outcome: 'pending' })).signals.length === 1 && (await log.detail(e.owner, signalId)),
      20_000,
      200,
    );
    const page = await listUntil(e.owner, {}, [signalId]);
    expect(page.signals[0]!.accounts).toEqual([{ accountId: e.accounts[0]!.id, outcome: 'pending', ticket: null, reason: null, reasonText: null, at: null }]);
  });

  test("when A asks for B's signal or B's account, or B for A's, then not found; each lists only their own", async () => {
    await listUntil(b.owner, {}, [sent.b1], (p) => settled(p.signals[0]));
    await expect(log.detail(a.owner, sent.b1)).rejects.toThrow(SignalNotFound);
    await expect(log.detail(b.owner, sent.a1)).rejects.toThrow(SignalNotFound);
    await expect(log.list(a.owner, { accountId: b.accounts[0]!.id })).rejects.toThrow(SignalNotFound);
    await expect(log.list(a.owner, { accountId: 'acc-nobody-has' })).rejects.toThrow(SignalNotFound);
    await expect(log.detail(a.owner, 'sig_000000000000000000000000')).rejects.toThrow(SignalNotFound);
    await expect(log.detail(a.owner, "sig_' OR 'x")).rejects.toThrow(SignalNotFound);
    const everything = await log.list(a.owner, { pageSize: 100 });
    expect(ids(everything)).not.toContain(sent.b1);
  });

  test("when A reads a signal, then each of A's accounts has its timeline: accepted, delivered to the bridge, filled or rejected", async () => {
    const [a0, a1] = a.accounts.map((x) => x.id) as [string, string];
    const page = await listUntil(a.owner, {}, [sent.a3, sent.a2, sent.a1], (p) => settled(p.signals[2]));
    const detail = await log.detail(a.owner, sent.a1);
    expect(detail).toMatchObject({ signalId: sent.a1, action: 'buy', symbol: 'EURUSD', receivedAt: page.signals[2]!.receivedAt });
    // What the signal asked, as sent: its order fields, never the secret.
    expect(detail.sent).toEqual({ symbol: 'EURUSD', volume: 0.1 });
    expect(detail.accounts.map((x) => x.accountId)).toEqual([a0, a1]);
    const [filled, rejected] = detail.accounts;
    expect(filled!.outcome).toEqual({ outcome: 'filled', ticket: 'T-A1', reason: null, reasonText: null, at: expect.any(String) });
    expect(rejected!.outcome).toEqual({
      outcome: 'rejected',
      ticket: null,
      reason: 'broker:10019 No money',
      reasonText: 'the broker refused it: No money',
      at: expect.any(String),
    });
    // The lots the bridge placed (not the signal's 0.1: sized by risk there) and the figures it used.
    expect(filled!.execution).toEqual({ volume: 0.5, price: 1.0842, message: SIZED });
    expect(rejected!.execution).toEqual({ volume: null, price: null, message: 'No money' });
    for (const account of detail.accounts) {
      expect(account.accepted.at).toBe(detail.receivedAt);
      expect(account.delivered).not.toBeNull();
      // In order: accepted, then handed to the bridge, then its outcome (the bridge's executedAt or the report's time).
      expect(Date.parse(account.delivered!.at)).toBeGreaterThanOrEqual(Date.parse(account.accepted.at));
      expect(Date.parse(account.outcome.at!)).toBeGreaterThanOrEqual(Date.parse(account.delivered!.at));
    }

    // The parent carries them too, for operators: `OwnerId = "…"` in the Temporal UI finds the signal itself.
    const parent = await regions.client('default').workflow.getHandle(`signal/${sent.a1}`).describe();
    expect(parent.searchAttributes).toMatchObject({ OwnerId: [a.owner], ReceivedAt: [new Date(detail.receivedAt)] });

    const pending = await log.detail(a.owner, sent.a3);
    expect(pending.accounts).toEqual([
      {
        accountId: a1,
        accepted: { at: pending.receivedAt },
        delivered: { at: expect.any(String) },
        outcome: expect.objectContaining({ outcome: 'pending' }),
        execution: null,
      },
    ]);
  });
});
