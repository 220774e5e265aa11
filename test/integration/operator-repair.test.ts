import { type Client, type Connection } from '@temporalio/client';
import { temporalClient } from '../helpers/temporal';
import { ReasonKey } from '../../src/temporal/search-attributes';
import { recordOperatorOutcomeSignal } from '../../workflows/messages';
import { waitFor } from '../../support/infra';
import { get, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';

/**
 * An account workflow that fails (an operator terminates it, a bug) may have left an order live at the broker, so its
 * signal never reports the account `rejected` on its own: the account stays unreported, the signal workflow stays
 * open with `Reason = "account_workflow_failed"` (what the operator filters the Temporal UI by) and an `attention:`
 * memo entry, and waits for the operator's word (the recordOperatorOutcome signal: what they found at the broker).
 */
describe('an account workflow that fails waits for an operator', () => {
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

  test("when an operator terminates an account workflow, then the poll keeps the account unreported, the signal is marked for attention, and the operator's outcome is what the poll then reports", async () => {
    const f = await seedOwner(stack.registry);
    const accountId = f.accounts[0]!.id;
    // No bridge: the command waits, and the account workflow with it.
    const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(res.status).toBe(202);
    const signalId = res.body.signalId as string;
    const child = client.workflow.getHandle(`signal/${signalId}/account/${accountId}`);
    await waitFor('the account workflow to run', async () => (await child.describe().catch(() => undefined))?.status.name === 'RUNNING', 15_000);
    await child.terminate('operator test: stuck account');

    const parent = client.workflow.getHandle(`signal/${signalId}`);
    const marked = await waitFor(
      'the signal to be marked for attention',
      async () => {
        const d = await parent.describe();
        return d.typedSearchAttributes.get(ReasonKey) === 'account_workflow_failed' ? d : undefined;
      },
      15_000,
    );
    expect(marked.status.name).toBe('RUNNING');
    expect(marked.memo?.[`attention:${accountId}`]).toMatchObject({ error: expect.stringMatching(/terminated/i) });
    const poll = await get(`${stack.ingress.url}/v1/signals/${signalId}`, { authorization: `Bearer ${f.token}` });
    expect(poll.body).toMatchObject({ reported: 0, accounts: [] });

    // A word that says nothing usable (rejected without a reason, another account) changes nothing.
    await parent.signal(recordOperatorOutcomeSignal, { accountId, outcome: 'rejected' });
    await parent.signal(recordOperatorOutcomeSignal, { accountId: 'acc-someone-else', outcome: 'rejected', reason: 'x' });
    expect((await get(`${stack.ingress.url}/v1/signals/${signalId}`, { authorization: `Bearer ${f.token}` })).body).toMatchObject({ reported: 0 });

    await parent.signal(recordOperatorOutcomeSignal, { accountId, outcome: 'rejected', reason: 'checked the broker: nothing was placed' });
    const status = await reportedStatus(stack.ingress.url, f.token, signalId, { deadlineMs: 15_000 });
    expect(status.accounts).toEqual([
      { accountId, outcome: 'rejected', ticket: null, reason: 'operator:checked the broker: nothing was placed', occurredAt: expect.any(String) },
    ]);
    await waitFor('the signal workflow to complete', async () => (await parent.describe()).status.name === 'COMPLETED', 15_000);
    expect((await parent.result()) as unknown[]).toHaveLength(1);
  });
});
