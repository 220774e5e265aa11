import { waitFor } from '../../support/infra';
import { get, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { workflowResult, temporalClient } from '../helpers/temporal';
import { ScriptedTerminal } from '../helpers/terminal';
import { hashCredential } from '../../src/registry/credentials';

describe('a signal from webhook to outcome (real Temporal, real Redis, bridge API over HTTP)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const poll = (signalId: string, token: string) => get(`${stack.ingress.url}/v1/signals/${signalId}`, { authorization: `Bearer ${token}` });
  const untilReported = (signalId: string, token: string, count: number) => reportedStatus(stack.ingress.url, token, signalId, { count });

  test('when a buy is accepted on the per-account URL and the bridge fills it, then the poll shows filled with the ticket', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();

    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, {
      secret: f.secret,
      action: 'buy',
      symbol: 'EURUSD',
      volume: 0.1,
      meta: { origin: 'test' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ success: true, signalId: expect.stringMatching(/^sig_/), correlationId: res.headers.get('x-request-id'), accountsResolved: 1 });

    const before = await poll(res.body.signalId, f.token);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ signalId: res.body.signalId, status: 'pending_or_unknown', reported: 0, accounts: [] });

    const [command] = await terminal.nextCommands(1);
    expect(command).toMatchObject({
      commandId: `signal/${res.body.signalId}/account/${f.accounts[0]!.id}`,
      action: 'buy',
      symbol: 'EURUSD',
      volume: 0.1,
      accountId: f.accounts[0]!.id,
      signalId: res.body.signalId,
    });
    expect(JSON.stringify(command)).not.toContain(f.secret);
    await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: '900001', price: 1.1 }]);

    const status = await untilReported(res.body.signalId, f.token, 1);
    expect(status).toEqual({
      signalId: res.body.signalId,
      status: 'reported',
      reported: 1,
      accounts: [{ accountId: f.accounts[0]!.id, outcome: 'filled', ticket: '900001', reason: null, occurredAt: expect.any(String), entry: 'position' }],
    });
  });

  test('when a broadcast reaches two accounts and the token is granted only one, then the poll shows only that one', async () => {
    const f = await seedOwner(stack.registry, [{}, { platform: 'ctrader', bridgeVersion: '1.2.0' }]);
    const narrowToken = 'tok_' + 'n'.repeat(40) + f.owner;
    await stack.registry.putToken({ hash: hashCredential(narrowToken), owner: f.owner, accounts: [f.accounts[1]!.id], suspendedUntil: null });
    const terminals = [
      new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken),
      new ScriptedTerminal(stack.ingress.url, f.accounts[1]!.bridgeToken, 'ctrader', '1.2.0'),
    ];
    await Promise.all(terminals.map((t) => t.hello()));

    const res = await post(`${stack.ingress.url}/webhook/custom`, { secret: f.secret, action: 'sell', symbol: 'GBPUSD', volume: 1 });
    expect(res.status).toBe(202);
    expect(res.body.accountsResolved).toBe(2);

    const [c0] = await terminals[0]!.nextCommands(1);
    const [c1] = await terminals[1]!.nextCommands(1);
    await terminals[0]!.report([{ commandId: c0!.commandId, status: 'filled', ticket: 'T-0' }]);
    await terminals[1]!.report([{ commandId: c1!.commandId, status: 'rejected', retcode: 'TRADING_BAD_VOLUME', message: 'Bad volume' }]);

    const all = await untilReported(res.body.signalId, f.token, 2);
    expect(all.accounts.map((a: { accountId: string }) => a.accountId).sort()).toEqual([f.accounts[0]!.id, f.accounts[1]!.id].sort());
    const narrow = await poll(res.body.signalId, narrowToken);
    expect(narrow.body).toEqual({
      signalId: res.body.signalId,
      status: 'reported',
      reported: 1,
      accounts: [
        { accountId: f.accounts[1]!.id, outcome: 'rejected', ticket: null, reason: 'broker:TRADING_BAD_VOLUME Bad volume', occurredAt: expect.any(String) },
      ],
    });
  });

  test('when the secret links no eligible account, then the broadcast answers 200 SignalNoTargets', async () => {
    const f = await seedOwner(stack.registry, [{ status: 'locked' }, { type: 'copy_master' }]);
    const res = await post(`${stack.ingress.url}/webhook/custom`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: false, accountsResolved: 0, correlationId: res.headers.get('x-request-id') });
    expect(res.body.signalId).toBeUndefined();
  });

  test('when the secret is wrong or missing, then 401; when the body is invalid, then 400 naming the field', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const wrong = await post(url, { secret: 'whsec_wrong_wrong_wrong_wrong', action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: expect.any(String), correlationId: wrong.headers.get('x-request-id') });
    const missing = await post(url, { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(missing.status).toBe(401);
    const invalid = await post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: '0.1' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatch(/volume/);
    expect(invalid.body.correlationId).toBeUndefined();
    expect(invalid.body.details).toEqual([{ path: 'volume', message: expect.any(String) }]);
  });

  test('when the poll has no token or a wrong one, then 401; an unknown signalId is pending_or_unknown', async () => {
    const f = await seedOwner(stack.registry);
    expect((await get(`${stack.ingress.url}/v1/signals/sig_0123456789abcdef0123456789abcdef`)).status).toBe(401);
    expect((await poll('sig_0123456789abcdef0123456789abcdef', 'tok_not_a_real_token_at_all_000')).status).toBe(401);
    const unknown = await poll('sig_0123456789abcdef0123456789abcdef', f.token);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ signalId: 'sig_0123456789abcdef0123456789abcdef', status: 'pending_or_unknown', reported: 0, accounts: [] });
  });

  test('when a signal ran, then Temporal holds signal/<id> and its child with the search attributes set', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'XAUUSD', volume: 0.5 });
    const [command] = await terminal.nextCommands(1);
    await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: '77' }]);
    await untilReported(res.body.signalId, f.token, 1);

    const { client, close } = await temporalClient();
    try {
      // The poll shows the bridge's report as soon as the ingress has it; the account workflow may record it later.
      await workflowResult(client, command!.commandId, 60_000);
      // The workflow is started after the 202, from the signal's record: wait for it, not for the answer.
      const parent = await waitFor(
        'the signal workflow to be started',
        () =>
          client.workflow
            .getHandle(`signal/${res.body.signalId}`)
            .describe()
            .catch(() => undefined),
        15_000,
        50,
      );
      expect(parent.type).toBe('signalWorkflow');
      const child = await client.workflow.getHandle(`signal/${res.body.signalId}/account/${f.accounts[0]!.id}`).describe();
      expect(child.type).toBe('accountWorkflow');
      expect(child.memo).toMatchObject({ correlationId: res.headers.get('x-request-id') });
      const attrs = child.searchAttributes as Record<string, unknown[]>;
      expect(attrs).toMatchObject({ SignalId: [res.body.signalId], AccountId: [f.accounts[0]!.id], Action: ['buy'], Symbol: ['XAUUSD'] });
      await waitFor(
        'Outcome search attribute',
        async () => {
          const d = await client.workflow.getHandle(`signal/${res.body.signalId}/account/${f.accounts[0]!.id}`).describe();
          return (d.searchAttributes as Record<string, unknown[]>).Outcome?.[0] === 'filled' || undefined;
        },
        10_000,
      );
      // The secret is nowhere in the execution's history.
      const history = await client.workflow.getHandle(`signal/${res.body.signalId}`).fetchHistory();
      expect(JSON.stringify(history)).not.toContain(f.secret);
    } finally {
      await close();
    }
  });

  test('when an account ran several signals, then an operator finds them all in Temporal by AccountId', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const ids = [];
    for (const action of ['buy', 'sell', 'buy']) ids.push((await post(url, { secret: f.secret, action, symbol: 'EURUSD', volume: 0.1 })).body.signalId);
    const { client, close } = await temporalClient();
    try {
      const found = await waitFor(
        'visibility to list the account workflows',
        async () => {
          const seen: string[] = [];
          for await (const w of client.workflow.list({ query: `AccountId = "${f.accounts[0]!.id}"` })) seen.push(w.workflowId);
          return seen.length === 3 ? seen : undefined;
        },
        15_000,
        200,
      );
      expect(found.sort()).toEqual(ids.map((id) => `signal/${id}/account/${f.accounts[0]!.id}`).sort());
    } finally {
      await close();
    }
  });

  test('when no worker runs, then the poll still answers from Temporal with the recorded outcomes', async () => {
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const [c] = await terminal.nextCommands(1);
    await terminal.report([{ commandId: c!.commandId, status: 'filled', ticket: 'NW-1' }]);
    await untilReported(res.body.signalId, f.token, 1);
    // The last test of the file: stop this stack's only worker, then poll.
    await stack.worker!.shutdown();
    const status = await get(`${stack.ingress.url}/v1/signals/${res.body.signalId}`, { authorization: `Bearer ${f.token}` });
    expect(status.body).toMatchObject({ status: 'reported', reported: 1, accounts: [{ outcome: 'filled', ticket: 'NW-1' }] });
  });
});
