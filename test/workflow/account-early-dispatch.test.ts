import { accountWorkflow } from '../../workflows';
import { bridgeReportUpdate } from '../../workflows/messages';
import { accountWorkflowId } from '../../src/domain/ids';
import type { AccountWorkflowInput } from '../../src/domain/workflow-input';
import { BUY, newSignalId, queueDouble, target, useWorkflowKit } from './kit';

/**
 * The account workflow of a signal dispatched at acceptance (the ingress may have queued its command already), in
 * virtual time: it adopts the command rather than queueing it, and it never ends `rejected` for a command a bridge may
 * hold, even when it runs after the command's expiry (a worker that was down).
 */

const workflowKit = useWorkflowKit();

async function earlyBuy(ttlMs: number, acceptedAgoMs = 0, signal = BUY): Promise<{ input: AccountWorkflowInput; workflowId: string }> {
  const now = await workflowKit().env.currentTimeMs();
  const signalId = newSignalId();
  const acceptedAt = now - acceptedAgoMs;
  return {
    input: {
      signalId,
      correlationId: 'req_test',
      acceptedAt: new Date(acceptedAt).toISOString(),
      signal,
      target: { ...target('acc-1', acceptedAt, ttlMs), dispatchedAtAcceptance: true },
    },
    workflowId: accountWorkflowId(signalId, 'acc-1'),
  };
}

const run = (activities: ReturnType<typeof queueDouble>['activities'], input: AccountWorkflowInput, workflowId: string) =>
  workflowKit().withWorker(activities, (taskQueue) => workflowKit().env.client.workflow.execute(accountWorkflow, { taskQueue, workflowId, args: [input] }));

describe('accountWorkflow, dispatched at acceptance', () => {
  test('when the ingress queued the command, then the workflow adopts it (no second enqueue) and the bridge report decides', async () => {
    const { activities, calls } = queueDouble();
    const { input, workflowId } = await earlyBuy(30_000);
    const outcome = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      await handle.executeUpdate(bridgeReportUpdate, { args: [{ commandId: workflowId, status: 'filled', ticket: 'T-1', price: 1.1 }], updateId: workflowId });
      return handle.result();
    });
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-1', reason: null });
    expect(calls.adopted).toEqual([workflowId]);
    expect(calls.dispatched).toEqual([]);
    expect(calls.withdrawn).toEqual([]);
  });

  test('when the bridge reported before the workflow existed (worker down), then the report found at adoption is the outcome, at once', async () => {
    const { activities, calls } = queueDouble({ adopt: { state: 'reported', report: { commandId: 'x', status: 'filled', ticket: 'T-2', price: 1.1 } } });
    const { input, workflowId } = await earlyBuy(30_000);
    const outcome = await run(activities, input, workflowId);
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-2', reason: null });
    expect(calls.withdrawn).toEqual([]);
  });

  test('when an owner change withdrew the command before the workflow ran, then it ends account_owner_changed without waiting for the expiry', async () => {
    const { activities, calls } = queueDouble({ adopt: { state: 'withdrawn' }, withdraw: 'withdrawn' });
    const { input, workflowId } = await earlyBuy(600_000);
    const virtualStart = await workflowKit().env.currentTimeMs();
    const outcome = await run(activities, input, workflowId);
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'account_owner_changed' });
    expect((await workflowKit().env.currentTimeMs()) - virtualStart).toBeLessThan(600_000);
    expect(calls.withdrawn).toEqual([{ commandId: workflowId, queued: true }]);
  });

  test('when the workflow first runs past the expiry and the command queued at acceptance is still untaken, then it is withdrawn: bridge_offline, its number released', async () => {
    const { activities, calls } = queueDouble({ withdraw: 'withdrawn' });
    const { input, workflowId } = await earlyBuy(30_000, 120_000);
    const outcome = await run(activities, input, workflowId);
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'bridge_offline' });
    expect(calls.adopted).toEqual([]);
    expect(calls.dispatched).toEqual([]);
    expect(calls.withdrawn).toEqual([{ commandId: workflowId, queued: true }]);
    expect(calls.released).toEqual([{ accountId: 'acc-1', seq: 1 }]);
  });

  test('when the workflow first runs past the expiry and a bridge took the command while fresh, then the outcome is the bridge fill, never signal_expired', async () => {
    const { activities, calls } = queueDouble({ withdraw: 'delivered' });
    const { input, workflowId } = await earlyBuy(30_000, 120_000);
    const outcome = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      await workflowKit().env.sleep('1 minute');
      await handle.executeUpdate(bridgeReportUpdate, { args: [{ commandId: workflowId, status: 'filled', ticket: 'T-3', price: 1.1 }], updateId: workflowId });
      return handle.result();
    });
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-3', reason: null });
    expect(calls.dispatched).toEqual([]);
  });

  test('when the workflow first runs past the expiry and Redis holds no record (it forgot, or the ingress died first), then the expired command is resent and the bridge word decides', async () => {
    const { activities, calls } = queueDouble({ withdraw: 'forgotten' });
    const { input, workflowId } = await earlyBuy(30_000, 120_000);
    const outcome = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      await workflowKit().env.sleep('10 seconds');
      await handle.executeUpdate(bridgeReportUpdate, { args: [{ commandId: workflowId, status: 'expired' }], updateId: workflowId });
      return handle.result();
    });
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'signal_expired' });
    expect(calls.dispatched).toEqual([{ commandId: workflowId, resend: true }]);
  });

  test('when the rules refuse the signal (not by expiry), then nothing is queued or resent: a tombstone, its number released, the refusal', async () => {
    const { activities, calls } = queueDouble({ withdraw: 'withdrawn' });
    const { input, workflowId } = await earlyBuy(30_000, 0, { action: 'buy', symbol: 'EURUSD', volume: 0 });
    const outcome = await run(activities, input, workflowId);
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'risk_volume_below_minimum' });
    expect(calls.adopted).toEqual([]);
    expect(calls.dispatched).toEqual([]);
    expect(calls.withdrawn).toEqual([{ commandId: workflowId, queued: false }]);
    expect(calls.released).toEqual([{ accountId: 'acc-1', seq: 1 }]);
  });

  test('when the rules refuse the signal and yet a bridge holds the commandId, then the bridge word decides, never the refusal', async () => {
    const { input, workflowId } = await earlyBuy(30_000, 0, { action: 'buy', symbol: 'EURUSD', volume: 0 });
    const { activities, calls } = queueDouble({
      withdraw: 'reported',
      recorded: (id) => (id === workflowId ? { commandId: workflowId, status: 'filled', ticket: 'T-4', price: 1.1 } : null),
    });
    const outcome = await run(activities, input, workflowId);
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-4' });
    expect(calls.released).toEqual([]);
  });
});
