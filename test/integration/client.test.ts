import { SignalsClient, StatusError } from '../../src/client';
import { seedOwner, startStack, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/** The typed client against the real service (ingress + worker, real Temporal and Redis), a scripted terminal filling. */
describe('SignalsClient against the real stack', () => {
  let stack: Stack;
  let client: SignalsClient;
  beforeAll(async () => {
    stack = await startStack();
    client = new SignalsClient({ baseUrl: stack.ingress.url });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('when a buy is submitted and the terminal fills it, then waitForOutcome returns filled with the ticket', async () => {
    const f = await seedOwner(stack.registry);
    const account = f.accounts[0]!;
    const terminal = new ScriptedTerminal(stack.ingress.url, account.bridgeToken);
    await terminal.hello();

    const result = await client.submit(
      { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, meta: { origin: 'client-test' } },
      { accountId: account.id },
    );
    if (result.kind !== 'accepted') throw new Error(`expected accepted, got ${JSON.stringify(result)}`);
    expect(result).toMatchObject({ signalId: expect.stringMatching(/^sig_/), accountsResolved: 1, replayed: false, attempts: 1 });

    const pending = await client.status(result.signalId, { token: f.token });
    expect(pending).toEqual({ signalId: result.signalId, status: 'pending_or_unknown', reported: 0, accounts: [] });

    const [command] = await terminal.nextCommands(1);
    expect(command).toMatchObject({ signalId: result.signalId, action: 'buy', symbol: 'EURUSD', volume: 0.1, accountId: account.id });
    await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: '900042', price: 1.1 }]);

    const waited = await client.waitForOutcome(result.signalId, { token: f.token, expectAccounts: result.accountsResolved, deadlineMs: 15_000 });
    expect(waited.complete).toBe(true);
    expect(waited.status).toEqual({
      signalId: result.signalId,
      status: 'reported',
      reported: 1,
      accounts: [{ accountId: account.id, outcome: 'filled', ticket: '900042', reason: null, occurredAt: expect.any(String), entry: 'position' }],
    });
  });

  test('when the same key is submitted again inside the window, then the service replays the first answer', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const signal = { secret: f.secret, action: 'sell' as const, symbol: 'GBPUSD', volume: 0.2 };
    const first = await client.submit(signal);
    if (first.kind !== 'accepted') throw new Error(`expected accepted, got ${JSON.stringify(first)}`);
    expect(first.accountsResolved).toBe(2);
    const again = await client.submit(signal, { idempotencyKey: first.idempotencyKey });
    expect(again).toMatchObject({ kind: 'accepted', signalId: first.signalId, replayed: true, idempotencyKey: first.idempotencyKey });
    // A new key is a new action.
    const fresh = await client.submit(signal);
    expect(fresh).toMatchObject({ kind: 'accepted', replayed: false });
    expect(fresh.kind === 'accepted' && fresh.signalId).not.toBe(first.signalId);
  });

  test('when the service refuses, then refused with its status, message and correlationId; nothing retried', async () => {
    const f = await seedOwner(stack.registry);
    const wrong = await client.submit(
      { secret: 'whsec_wrong_wrong_wrong_wrong', action: 'buy', symbol: 'EURUSD', volume: 0.1 },
      { accountId: f.accounts[0]!.id },
    );
    expect(wrong).toMatchObject({ kind: 'refused', status: 401, local: false, attempts: 1, correlationId: expect.any(String) });

    const local = await client.submit({ secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 101 });
    expect(local).toMatchObject({ kind: 'refused', status: 400, local: true, attempts: 0, details: [{ path: 'volume', message: expect.any(String) }] });
  });

  test('when no linked account is eligible, then no_targets', async () => {
    const f = await seedOwner(stack.registry, [{ status: 'locked' }]);
    expect(await client.submit({ secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 })).toMatchObject({
      kind: 'no_targets',
      correlationId: expect.any(String),
    });
  });

  test('when the API token is wrong, then status throws StatusError(unauthorized)', async () => {
    const err = await client.status('sig_0123456789abcdef0123456789abcdef', { token: 'tok_not_a_real_token_at_all_000' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(err).toMatchObject({ kind: 'unauthorized', retryable: false, info: { httpStatus: 401 } });
  });
});

describe('SignalsClient against the real fairness throttle', () => {
  let stack: Stack;
  beforeAll(async () => {
    // One signal per account per second: the second submit of a burst gets 429 until the window ends.
    stack = await startStack({ worker: false, tuning: { limits: { fairnessAccount: { max: 1, windowMs: 1000 } } } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('when a submit hits the 429, then the client backs off and retries with the same key until accepted', async () => {
    const f = await seedOwner(stack.registry);
    const waits: number[] = [];
    const sent: { status: number; key: string | undefined }[] = [];
    const client = new SignalsClient({
      baseUrl: stack.ingress.url,
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        sent.push({ status: res.status, key: (init?.headers as Record<string, string>)['x-idempotency-key'] });
        return res;
      },
      sleep: (ms) => {
        waits.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    const signal = { secret: f.secret, action: 'buy' as const, symbol: 'EURUSD', volume: 0.1 };
    expect(await client.submit(signal, { accountId: f.accounts[0]!.id })).toMatchObject({ kind: 'accepted', attempts: 1 });
    const second = await client.submit(signal, { accountId: f.accounts[0]!.id });
    expect(second).toMatchObject({ kind: 'accepted', replayed: false });
    const attempts = sent.slice(1);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.map((a) => a.status)).toEqual([...attempts.slice(0, -1).map(() => 429), 202]);
    expect(new Set(attempts.map((a) => a.key)).size).toBe(1);
    expect(attempts[0]!.key).toBe(second.kind === 'accepted' ? second.idempotencyKey : undefined);
    expect(waits).toHaveLength(attempts.length - 1);
  });
});
