import { hashCredential } from '../../src/registry/credentials';
import { bridgeKeys, registryKeys } from '../../src/redis-keys';
import { SessionStore } from '../../src/bridge/session-store';
import { RedisLastSeen, ONLINE_WITHIN_MS } from '../../src/bridge/presence';
import { MAX_SESSION_ACCOUNTS } from '../../src/domain/bridge-session';
import { buyAndFill, pollUntilReported, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { SessionTerminal } from '../helpers/session-terminal';
import { waitFor } from '../../support/run';
import { commandsOf } from '../helpers/redis-monitor';

/**
 * The multi-account session (protocol 1.7) over HTTP against the real stack: many accounts' hellos, one long-poll and
 * batched reports on one session, each account admitted by its own bridge token and served as its own.
 */
describe('multi-account bridge session', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const buy = async (f: Fixture, accountId: string) => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    return res.body.signalId as string;
  };

  it('fills a signal on each of many accounts through one session', async () => {
    const f = await seedOwner(
      stack.registry,
      Array.from({ length: 25 }, () => ({})),
    );
    const bridge = new SessionTerminal(stack.ingress.url);
    const hello = await bridge.hello(f.accounts);
    expect(hello.status).toBe(200);
    expect(hello.body.capabilities).toContain('multi_account_session');
    expect(hello.body.accounts.map((a: { result: string }) => a.result)).toEqual(f.accounts.map(() => 'admitted'));

    const signals = await Promise.all(f.accounts.map((a) => buy(f, a.id)));
    const commands = await bridge.nextCommands(f.accounts.length);
    // Each command is its own account's, once.
    expect(new Set(commands.map((c) => c.accountId))).toEqual(new Set(f.accounts.map((a) => a.id)));
    const reported = await bridge.report(
      f.accounts.map((a) => ({
        accountId: a.id,
        reports: commands.filter((c) => c.accountId === a.id).map((c) => ({ commandId: c.commandId, status: 'filled' as const, ticket: `t-${a.id}` })),
      })),
    );
    expect(reported.status).toBe(200);
    expect(reported.body.accounts.every((a: { results: { result: string }[] }) => a.results[0]!.result === 'recorded')).toBe(true);
    for (const [i, signalId] of signals.entries()) {
      const status = await pollUntilReported(stack.ingress.url, signalId, f.token);
      expect(status.accounts[0]).toMatchObject({ accountId: f.accounts[i]!.id, outcome: 'filled', ticket: `t-${f.accounts[i]!.id}` });
    }
  });

  it('refuses a bad, another account’s or a revoked token for that account only', async () => {
    const f = await seedOwner(stack.registry, [{}, {}, {}, {}]);
    const other = await seedOwner(stack.registry);
    const [good, revoked, forged, foreign] = f.accounts;
    await stack.registry.revokeBridgeToken(revoked!.id, hashCredential(revoked!.bridgeToken));
    const bridge = new SessionTerminal(stack.ingress.url);
    const hello = await bridge.hello([
      good!,
      revoked!,
      { id: forged!.id, bridgeToken: 'brg_not-a-token' },
      // Another owner's valid token, named for this owner's account: it speaks for its own account only.
      { id: foreign!.id, bridgeToken: other.accounts[0]!.bridgeToken },
    ]);
    expect(hello.status).toBe(200);
    expect(hello.body.accounts.map((a: { result: string; status?: number }) => [a.result, a.status])).toEqual([
      ['admitted', undefined],
      ['refused', 401],
      ['refused', 401],
      ['refused', 401],
    ]);

    const [signal, refusedSignal] = [await buy(f, good!.id), await buy(f, foreign!.id)];
    const commands = await bridge.nextCommands(1);
    expect(commands.map((c) => c.accountId)).toEqual([good!.id]);
    // Reports for an account the session does not serve are refused, the served account's recorded.
    const res = await bridge.report([
      { accountId: good!.id, reports: [{ commandId: commands[0]!.commandId, status: 'filled', ticket: 'g-1' }] },
      { accountId: foreign!.id, reports: [{ commandId: `signal/${refusedSignal}/account/${foreign!.id}`, status: 'filled', ticket: 'x' }] },
    ]);
    expect(res.body.accounts.map((a: { result: string }) => a.result)).toEqual(['answered', 'refused']);
    expect((await pollUntilReported(stack.ingress.url, signal, f.token)).accounts[0]).toMatchObject({ outcome: 'filled', ticket: 'g-1' });
  });

  it('drops an account from the session once its token is revoked', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const bridge = new SessionTerminal(stack.ingress.url);
    await bridge.hello(f.accounts);
    await stack.registry.revokeBridgeToken(f.accounts[1]!.id, hashCredential(f.accounts[1]!.bridgeToken));
    const res = await bridge.poll(0);
    expect(res.status).toBe(200);
    expect(res.body.dropped).toEqual([f.accounts[1]!.id]);
  });

  it(`refuses a session of ${MAX_SESSION_ACCOUNTS + 1} accounts with a 400`, async () => {
    const accounts = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `nobody-${i}`, bridgeToken: `brg_nobody-${i}` }));
    const over = await new SessionTerminal(stack.ingress.url).hello(accounts(MAX_SESSION_ACCOUNTS + 1));
    expect(over.status).toBe(400);
    expect(over.text).toContain(`at most ${MAX_SESSION_ACCOUNTS} accounts`);
  });

  it('applies a batch mixing accounts to each account only', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [a, b] = f.accounts;
    const bridge = new SessionTerminal(stack.ingress.url);
    await bridge.hello(f.accounts);
    const [signalA, signalB] = [await buy(f, a!.id), await buy(f, b!.id)];
    const commands = await bridge.nextCommands(2);
    const commandOf = (id: string) => commands.find((c) => c.accountId === id)!;
    // B's command reported under A: unknown to A, nothing written for B.
    const mixed = await bridge.report([
      { accountId: a!.id, reports: [{ commandId: commandOf(b!.id).commandId, status: 'rejected', retcode: 1, message: 'forged' }] },
    ]);
    expect(mixed.body.accounts[0].results).toEqual([{ commandId: commandOf(b!.id).commandId, result: 'unknown' }]);
    const own = await bridge.report([
      { accountId: a!.id, reports: [{ commandId: commandOf(a!.id).commandId, status: 'filled', ticket: 'a-1' }] },
      { accountId: b!.id, reports: [{ commandId: commandOf(b!.id).commandId, status: 'filled', ticket: 'b-1' }] },
    ]);
    expect(own.body.accounts.map((x: { results: { result: string }[] }) => x.results[0]!.result)).toEqual(['recorded', 'recorded']);
    expect((await pollUntilReported(stack.ingress.url, signalB, f.token)).accounts[0]).toMatchObject({ outcome: 'filled', ticket: 'b-1' });
    expect((await pollUntilReported(stack.ingress.url, signalA, f.token)).accounts[0]).toMatchObject({ outcome: 'filled', ticket: 'a-1' });
  });

  it('keeps every account of a waiting session online', async () => {
    const f = await seedOwner(stack.registry, [{}, {}, {}]);
    const bridge = new SessionTerminal(stack.ingress.url);
    await bridge.hello(f.accounts);
    const helloAt = Date.now();
    const polling = bridge.poll(ONLINE_WITHIN_MS + 1_500);
    const seen = new RedisLastSeen(stack.redis);
    const accounts = f.accounts.map((a) => ({ id: a.id, owner: f.owner }));
    // Past ONLINE_WITHIN_MS after the hello, still seen within it: the open poll keeps them online.
    await waitFor(
      'every account seen while the session polls, past the online window after its hello',
      async () => {
        const times = await seen.lastSeen(accounts);
        const now = Date.now();
        return times.every((t) => t !== undefined && now - t.getTime() <= ONLINE_WITHIN_MS) && now - helloAt >= ONLINE_WITHIN_MS + 500;
      },
      ONLINE_WITHIN_MS + 1_400,
      200,
    );
    expect((await polling).status).toBe(200);
  });

  it('answers a waiting poll 401 once its session is gone (Redis lost it), before the wait ends', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const bridge = new SessionTerminal(stack.ingress.url);
    await bridge.hello(f.accounts);
    // Without a look at its session while it waits, the poll would answer 200 (no commands) when its wait ends.
    const polling = bridge.poll(10_000);
    await waitFor('the poll is waiting', async () => (await stack.redis.exists(bridgeKeys.longPollGeneration(f.accounts[0]!.id))) === 1, 5_000, 25);
    expect(await stack.redis.del(bridgeKeys.multiAccountSession(hashCredential(bridge.session!)))).toBe(1);
    const answer = await polling;
    expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 401, error: 'Missing or invalid session' });
  }, 20_000);

  it('reads, for a call naming one account of a session of 1,000, that account only', async () => {
    // The store on its own, as the session's reports and trades calls use it; the session's hash as a hello writes it.
    const ids = Array.from({ length: 1_000 }, (_, i) => `named-${i}`);
    const store = new SessionStore(stack.redis);
    const token = await store.create(new Map(ids.map((id) => [id, hashCredential(`brg_${id}`)])));
    await Promise.all(ids.slice(0, 2).map((id) => stack.redis.set(registryKeys.accountBridgeToken(id), hashCredential(`brg_${id}`))));
    const { result, commands } = await commandsOf(stack.redis, (conn) => new SessionStore(conn).accounts(token, ['named-0', 'named-999', 'not-admitted']));
    expect(result).toEqual({ served: ['named-0'], dropped: ['named-999'] });
    // MULTI, EXISTS, HMGET, PEXPIRE, EXEC, then the two admitted accounts' tokens: none of the other 998.
    expect(commands).toEqual(['multi', 'exists', 'hmget', 'pexpire', 'exec', 'get', 'get']);
    expect(await store.accounts('bss_unknown', ['named-0'])).toBeUndefined();
  });

  it('leaves a single-account bridge unchanged', async () => {
    const status = await buyAndFill(stack, 'single-1');
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: 'single-1' });
  });
});
