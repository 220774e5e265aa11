import { type Client, type Connection } from '@temporalio/client';
import { temporalClient } from '../helpers/temporal';
import { waitFor } from '../../support/infra';
import { get, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { idempotencyDigest } from '../../src/signals/idempotency';
import { hashCredential } from '../../src/registry/credentials';
import { signalKeys } from '../../src/redis-keys';
import { ACTION_TABLE, type ActionDescription } from '../../src/domain/actions';

// Long enough that a burst of 20 on a loaded test machine is all inside it: a request claimed after the window
// ended is rightly a new signal, which is the next test's case, not this one's.
const WINDOW_MS = 10_000;

describe('idempotency window in Redis (spec §5 rules 4-5)', () => {
  let stack: Stack;
  let connection: Connection;
  let client: Client;
  beforeAll(async () => {
    stack = await startStack({ tuning: { ingress: { idempotencyWindowMs: WINDOW_MS }, limits: { fairnessAccount: { max: 1000 } } } });
    ({ connection, client } = await temporalClient());
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
  });

  /**
   * How many actions were launched for the account: its signal workflows in Temporal (visibility lags its writes, so
   * at least `expected` are waited for). Not the account's acceptance counter: a replay racing the first request may
   * number the account too and release the number when its start finds the workflow there (test/fault/idempotency-burst).
   */
  const actionsLaunched = async (accountId: string, expected: number) =>
    waitFor(
      `${expected} signal workflow(s) of ${accountId} in Temporal's visibility`,
      async () => {
        let n = 0;
        for await (const _ of client.workflow.list({ query: `WorkflowType = "signalWorkflow" AND AccountIds = "${accountId}"` })) n++;
        return n >= expected ? n : undefined;
      },
      10_000,
      100,
    );
  const buy = (secret: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.2 });

  test('when the same key and body come again inside the window, then the same 202 is replayed and nothing new runs', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const first = await post(url, buy(f.secret), { 'x-idempotency-key': 'alert-1' });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(url, buy(f.secret), { 'x-idempotency-key': 'alert-1' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await actionsLaunched(f.accounts[0]!.id, 1)).toBe(1);
  });

  test('when the same key comes with a different body inside the window, then 400 says so', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    expect((await post(url, buy(f.secret), { 'x-idempotency-key': 'alert-2' })).status).toBe(202);
    const other = await post(url, { ...buy(f.secret), volume: 0.3 }, { 'x-idempotency-key': 'alert-2' });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatch(/already used with a different request/);
    expect(await actionsLaunched(f.accounts[0]!.id, 1)).toBe(1);
  });

  test('when 20 identical requests race with one key, then 20 identical 202s and one action at the bridge', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(url, buy(f.secret), { 'x-idempotency-key': 'burst' })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    expect([...new Set(answers.map((a) => JSON.stringify(a.body)))]).toHaveLength(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(await actionsLaunched(f.accounts[0]!.id, 1)).toBe(1);
    const commands = await terminal.nextCommands(1);
    expect(commands).toHaveLength(1);
  });

  test('when the window has passed, then the same key is a new action with a new signalId, and the old one still polls', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const first = await post(url, buy(f.secret), { 'x-idempotency-key': 'late' });
    const [c] = await terminal.nextCommands(1);
    await terminal.report([{ commandId: c!.commandId, status: 'filled', ticket: '1' }]);
    const later = await waitFor(
      'the replay window to end',
      async () => {
        const res = await post(url, buy(f.secret), { 'x-idempotency-key': 'late' });
        return res.headers.get('idempotent-replayed') === 'true' ? undefined : res;
      },
      WINDOW_MS + 10_000,
      200,
    );
    expect(later.status).toBe(202);
    expect(later.body.signalId).not.toBe(first.body.signalId);
    expect(await actionsLaunched(f.accounts[0]!.id, 2)).toBe(2);
    const old = await get(`${stack.ingress.url}/v1/signals/${first.body.signalId}`, { authorization: `Bearer ${f.token}` });
    expect(old.body).toMatchObject({ status: 'reported', accounts: [{ outcome: 'filled', ticket: '1' }] });
  });

  test(
    'when the window has passed, then its key is gone from Redis, after the window and not before, and Temporal holds no window of its own',
    async () => {
      const f = await seedOwner(stack.registry);
      const accountId = f.accounts[0]!.id;
      const sentAt = Date.now();
      expect((await post(`${stack.ingress.url}/webhook/custom/${accountId}`, buy(f.secret), { 'x-idempotency-key': 'window-ends' })).status).toBe(202);
      const key = signalKeys.idempotencyWindow(idempotencyDigest(hashCredential(f.secret), accountId, 'window-ends'));
      const ttl = await stack.redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(WINDOW_MS);
      await waitFor('the idempotency window to end', async () => (await stack.redis.exists(key)) === 0, WINDOW_MS + 15_000, 200);
      expect(Date.now() - sentAt).toBeGreaterThanOrEqual(WINDOW_MS - 50);
      let windows = 0;
      for await (const _ of client.workflow.list({ query: `WorkflowType = "idempotencyWindowWorkflow"` })) windows++;
      expect(windows).toBe(0);
    },
    WINDOW_MS + 30_000,
  );

  test('when the same key is used on another route, then it is another action (keys are scoped per route)', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const a = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, buy(f.secret), { 'x-idempotency-key': 'shared' });
    const b = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[1]!.id}`, buy(f.secret), { 'x-idempotency-key': 'shared' });
    const c = await post(`${stack.ingress.url}/webhook/custom`, buy(f.secret), { 'x-idempotency-key': 'shared' });
    expect(new Set([a.body.signalId, b.body.signalId, c.body.signalId]).size).toBe(3);
    expect(c.body.accountsResolved).toBe(2);
  });

  test('when the key is over 128 characters, then 400; at 128 it is accepted', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const long = await post(url, buy(f.secret), { 'x-idempotency-key': 'k'.repeat(129) });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatch(/X-Idempotency-Key/);
    expect((await post(url, buy(f.secret), { 'x-idempotency-key': 'k'.repeat(128) })).status).toBe(202);
  });

  const keyRequired = [
    ['breakeven', { action: 'breakeven', positionId: 'P1' }],
    ['modify_sl', { action: 'modify_sl', positionId: 'P1', sl: 1.05 }],
    ['modify_tp', { action: 'modify_tp', positionId: 'P1', tp: 1.2 }],
    ['a filtered close', { action: 'close', symbol: 'EURUSD' }],
  ] as const;

  test('the cases below are every action the table says needs a key (always, or a close without positionId)', () => {
    const always = Object.entries(ACTION_TABLE).filter(([, d]) => (d as ActionDescription).keyRequired === 'always');
    const unlessPositioned = Object.entries(ACTION_TABLE).filter(([, d]) => (d as ActionDescription).keyRequired === 'without positionId');
    expect([...always, ...unlessPositioned].map(([a]) => a).sort()).toEqual(keyRequired.map(([, s]) => s.action).sort());
  });

  // The per-account URL and the broadcast URL (the owner's linked accounts) refuse alike.
  test.each(keyRequired.flatMap(([name, signal]) => (['per-account', 'broadcast'] as const).map((route) => [name, route, signal] as const)))(
    'when %s comes on the %s URL without X-Idempotency-Key, then 400 naming it; with one, then 202',
    async (name, route, signal) => {
      const f = await seedOwner(stack.registry);
      const url = `${stack.ingress.url}/webhook/custom${route === 'per-account' ? `/${f.accounts[0]!.id}` : ''}`;
      const without = await post(url, { secret: f.secret, ...signal });
      expect({ status: without.status, body: without.body }).toEqual({
        status: 400,
        body: {
          error: `X-Idempotency-Key (or the idempotencyKey field) is required for ${name}`,
          details: [{ path: 'X-Idempotency-Key', message: `required for ${name}` }],
        },
      });
      const withKey = await post(url, { secret: f.secret, ...signal }, { 'x-idempotency-key': 'k1' });
      expect(withKey.status).toBe(202);
      expect(withKey.body.accountsResolved).toBe(1);
    },
  );

  test('when a close names its positionId, then no key is needed', async () => {
    const f = await seedOwner(stack.registry);
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'close', positionId: 'P1' });
    expect(res.status).toBe(202);
  });
});

describe('the idempotencyKey body field (for callers that cannot set headers)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('when the key comes in the body, then it works exactly like the header', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const body = { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.2, idempotencyKey: 'tv-EURUSD-1700000000' };
    const first = await post(url, body);
    const again = await post(url, body, { 'x-idempotency-key': 'tv-EURUSD-1700000000' });
    expect(first.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const breakeven = await post(url, { secret: f.secret, action: 'breakeven', positionId: 'P1', idempotencyKey: 'be-1' });
    expect(breakeven.status).toBe(202);
  });

  test('when the header and the body field differ, then 400', async () => {
    const f = await seedOwner(stack.registry);
    const res = await post(
      `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`,
      { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.2, idempotencyKey: 'a' },
      { 'x-idempotency-key': 'b' },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/differ/);
  });
});
