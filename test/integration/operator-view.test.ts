import { type Client, type Connection } from '@temporalio/client';
import { temporalClient, waitForAccountWorkflowToHoldCommand } from '../helpers/temporal';
import { waitFor } from '../../support/infra';
import { post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { ScriptedTerminal } from '../helpers/terminal';

/** What an operator finds in the Temporal UI (its list queries and timelines), against the real Temporal. */
describe('the operator view of a broadcast signal', () => {
  let stack: Stack;
  let connection: Connection;
  let client: Client;
  beforeAll(async () => {
    stack = await startStack();
    ({ connection, client } = await temporalClient());
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
  });

  const list = async (query: string) => {
    const out: { workflowId: string; status: string }[] = [];
    for await (const w of client.workflow.list({ query })) out.push({ workflowId: w.workflowId, status: w.status.name });
    return out.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
  };

  test('when one account fills and one is rejected, then both children are Completed, findable by Outcome, Reason and the parent by AccountIds, each with a summary', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [a, b] = f.accounts.map((x) => x.id) as [string, string];
    const terminals = f.accounts.map((x) => new ScriptedTerminal(stack.ingress.url, x.bridgeToken));
    await Promise.all(terminals.map((t) => t.hello()));
    const res = await post(`${stack.ingress.url}/webhook/custom`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const signalId = res.body.signalId as string;
    const [toA] = await terminals[0]!.nextCommands(1);
    const [toB] = await terminals[1]!.nextCommands(1);
    // Dispatched at acceptance, the commands may reach the bridges before their workflows run: a report that is there
    // when the workflow adopts its command ends it at once, with no labelled wait to look at (asserted below).
    await waitForAccountWorkflowToHoldCommand(client, toA!.commandId);
    await terminals[0]!.report([{ commandId: toA!.commandId, status: 'filled', ticket: '501' }]);
    await terminals[1]!.report([{ commandId: toB!.commandId, status: 'rejected', retcode: 10019, message: 'No money' }]);
    await reportedStatus(stack.ingress.url, f.token, signalId, { count: 2 });

    const child = (acc: string) => `signal/${signalId}/account/${acc}`;
    const rejected = await waitFor(
      'the rejected child to be listed by Reason',
      async () => {
        const found = await list(`SignalId = "${signalId}" AND Outcome = "rejected" AND Reason = "broker:10019"`);
        return found.length === 1 ? found : undefined;
      },
      15_000,
      200,
    );
    expect(rejected).toEqual([{ workflowId: child(b), status: 'COMPLETED' }]);
    const filled = await waitFor(
      'the filled child',
      async () => {
        const found = await list(`SignalId = "${signalId}" AND Outcome = "filled"`);
        return found.length === 1 ? found : undefined;
      },
      15_000,
      200,
    );
    expect(filled).toEqual([{ workflowId: child(a), status: 'COMPLETED' }]);

    // "Every signal that touched account b" is one query on the parents.
    const parents = await waitFor(
      'the parent listed by AccountIds',
      async () => {
        const found = await list(`WorkflowType = "signalWorkflow" AND AccountIds = "${b}"`);
        return found.length > 0 ? found : undefined;
      },
      15_000,
      200,
    );
    expect(parents).toEqual([{ workflowId: `signal/${signalId}`, status: expect.any(String) }]);

    // The children carry a summary with the account, and the report wait is a labelled timer.
    const described = await client.workflow.getHandle(child(b)).describe();
    expect(await described.staticSummary()).toBe(`buy EURUSD on ${b} (mt5)`);
    const history = await client.workflow.getHandle(child(a)).fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    const summary = timer?.userMetadata?.summary?.data;
    expect(summary ? Buffer.from(summary).toString('utf8') : null).toMatch(new RegExp(`${a}'s bridge report for ${signalId}, until `));
  });

  test("when a broadcast skips linked accounts, then the signal's memo says which and why", async () => {
    const f = await seedOwner(stack.registry, [{}, { status: 'locked' }, { entitled: false }, { type: 'copy_master' }]);
    const [active, locked, unentitled, master] = f.accounts.map((x) => x.id) as [string, string, string, string];
    const res = await post(`${stack.ingress.url}/webhook/custom`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    expect(res.body.accountsResolved).toBe(1);
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
    expect(parent.memo?.skipped).toEqual([
      { accountId: locked, reason: 'locked' },
      { accountId: unentitled, reason: 'not_entitled' },
      { accountId: master, reason: 'copy_master' },
    ]);
    expect((parent.searchAttributes as Record<string, unknown[]>).AccountIds).toEqual([active]);
  });
});
