import { accountWorkflow } from '../../workflows';
import { bridgeReportSignal, bridgeReportUpdate } from '../../workflows/messages';
import { accountWorkflowId } from '../../src/domain/ids';
import type { AccountWorkflowInput, SignalInstruction } from '../../src/domain/workflow-input';
import { riskSettingsSchema } from '../../src/domain/risk-settings';
import type { BridgeFeature } from '../../src/domain/account';
import { BUY, newSignalId, queueDouble, target, useWorkflowKit } from './kit';

/**
 * The account workflow's waits, in virtual time (test/workflow/kit.ts): what it decides when no bridge report comes
 * before the command's deadline, when one comes after it, and when the signal is stale before it starts.
 */

const workflowKit = useWorkflowKit();

/** The input of one market buy accepted now (Temporal's clock), its command valid `ttlMs`. */
async function buyInput(ttlMs: number, acceptedAgoMs = 0): Promise<{ input: AccountWorkflowInput; workflowId: string }> {
  const now = await workflowKit().env.currentTimeMs();
  const signalId = newSignalId();
  const acceptedAt = now - acceptedAgoMs;
  return {
    input: { signalId, correlationId: 'req_test', acceptedAt: new Date(acceptedAt).toISOString(), signal: BUY, target: target('acc-1', acceptedAt, ttlMs) },
    workflowId: accountWorkflowId(signalId, 'acc-1'),
  };
}

describe('accountWorkflow in virtual time', () => {
  test('when no bridge takes the command before its 10-minute deadline, then it is withdrawn and the outcome is bridge_offline, in well under a second of real time', async () => {
    const { activities, calls } = queueDouble({ withdraw: 'withdrawn' });
    const { input, workflowId } = await buyInput(600_000);
    const virtualStart = await workflowKit().env.currentTimeMs();
    const realStart = Date.now();
    const outcome = await workflowKit().withWorker(activities, (taskQueue) =>
      workflowKit().env.client.workflow.execute(accountWorkflow, { taskQueue, workflowId, args: [input] }),
    );
    expect(outcome).toMatchObject({ accountId: 'acc-1', outcome: 'rejected', ticket: null, reason: 'bridge_offline' });
    // The workflow waited out the deadline in Temporal's time, not the test's.
    const virtualMs = (await workflowKit().env.currentTimeMs()) - virtualStart;
    expect(virtualMs).toBeGreaterThanOrEqual(600_000);
    // Skipped, not waited: less real time passed than the 10 minutes the workflow waited (the test's timeout is 1).
    expect(Date.now() - realStart).toBeLessThan(virtualMs);
    expect(calls.dispatched).toEqual([{ commandId: workflowId, resend: false }]);
    expect(calls.withdrawn).toEqual([{ commandId: workflowId, queued: true }]);
    // Withdrawn from the queue, it holds none of the account's later commands: no number to release.
    expect(calls.released).toEqual([]);
  });

  test('when a bridge took the command and reports only after the deadline, then the outcome is its fill, never a rejection', async () => {
    const { activities, calls } = queueDouble({ withdraw: 'delivered' });
    const { input, workflowId } = await buyInput(30_000);
    const outcome = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      // Past the deadline: the workflow finds the command taken and waits for the bridge's word.
      await workflowKit().env.sleep('10 minutes');
      await handle.executeUpdate(bridgeReportUpdate, { args: [{ commandId: workflowId, status: 'filled', ticket: 'T-77', price: 1.1 }], updateId: workflowId });
      return handle.result();
    });
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-77', reason: null });
    expect(calls.withdrawn).toEqual([{ commandId: workflowId, queued: true }]);
    expect(calls.released).toEqual([]);
  });

  test('when the ingress recorded the report and died before handing it over, then at the deadline the workflow reads it from Redis: filled', async () => {
    const { input, workflowId } = await buyInput(30_000);
    const { activities, calls } = queueDouble({
      withdraw: 'reported',
      recorded: (id) => (id === workflowId ? { commandId: workflowId, status: 'filled', ticket: 'T-81', price: 1.1 } : null),
    });
    const outcome = await workflowKit().withWorker(activities, (taskQueue) =>
      workflowKit().env.client.workflow.execute(accountWorkflow, { taskQueue, workflowId, args: [input] }),
    );
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-81', reason: null });
    expect(calls.looked).toEqual([workflowId]);
  });

  test('when the bridge reports an hour after the deadline and that hand-over is lost, then the workflow finds the report in Redis within 10 minutes, with a bounded number of looks', async () => {
    const { input, workflowId } = await buyInput(30_000);
    let recordedAt: number | undefined;
    const { activities, calls } = queueDouble({
      withdraw: 'delivered',
      recorded: () => (recordedAt !== undefined ? { commandId: workflowId, status: 'filled', ticket: 'T-82', price: 1.1 } : null),
    });
    const { outcome, foundAfterMs } = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      await workflowKit().env.sleep('1 hour');
      recordedAt = await workflowKit().env.currentTimeMs();
      const result = await handle.result();
      return { outcome: result, foundAfterMs: (await workflowKit().env.currentTimeMs()) - recordedAt };
    });
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-82', reason: null });
    expect(foundAfterMs).toBeLessThanOrEqual(10 * 60_000);
    // 5 s doubling to 10 minutes: 7 looks in the first 11 minutes, then one per 10 minutes.
    expect(calls.looked.length).toBeGreaterThanOrEqual(7);
    expect(calls.looked.length).toBeLessThanOrEqual(14);
  });

  test('when Redis forgot the queued command by the deadline, then it is queued again (a resend) and the bridge word decides', async () => {
    const { activities, calls } = queueDouble({ withdraw: 'forgotten' });
    const { input, workflowId } = await buyInput(30_000);
    const outcome = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      await workflowKit().env.sleep('1 minute');
      await handle.executeUpdate(bridgeReportUpdate, { args: [{ commandId: workflowId, status: 'expired' }], updateId: workflowId });
      return handle.result();
    });
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'signal_expired' });
    expect(calls.dispatched).toEqual([
      { commandId: workflowId, resend: false },
      { commandId: workflowId, resend: true },
    ]);
  });

  test('when the signal is already older than its max age as the workflow starts, then signal_expired, nothing queued, its number released', async () => {
    const { activities, calls } = queueDouble();
    const { input, workflowId } = await buyInput(30_000, 120_000);
    const outcome = await workflowKit().withWorker(activities, (taskQueue) =>
      workflowKit().env.client.workflow.execute(accountWorkflow, { taskQueue, workflowId, args: [input] }),
    );
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'signal_expired' });
    expect(calls.dispatched).toEqual([]);
    expect(calls.released).toEqual([{ accountId: 'acc-1', seq: 1 }]);
  });

  test('when the report comes as a Signal (no worker answered the Update in time), then the same outcome; one from another command is ignored', async () => {
    const { activities } = queueDouble();
    const { input, workflowId } = await buyInput(60_000);
    const outcome = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      await handle.signal(bridgeReportSignal, { commandId: `${workflowId}-other`, status: 'filled', ticket: 'T-foreign' });
      await handle.signal(bridgeReportSignal, { commandId: workflowId, status: 'filled', ticket: 'T-1' });
      return handle.result();
    });
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-1' });
  });
});

describe('accountWorkflow: trade management in the command (protocol 1.6)', () => {
  const FEATURES: BridgeFeature[] = ['trailing_stop', 'breakeven_trigger', 'take_profit_levels', 'close_opposite', 'max_spread'];

  /** A buy accepted now on an account with these management defaults whose bridge announced `features`. */
  async function managedInput(signal: SignalInstruction, management: unknown, features: BridgeFeature[]) {
    const { input, workflowId } = await buyInput(60_000);
    const account = { ...input.target.account, risk: riskSettingsSchema.parse({ ...input.target.account.risk, management }), bridgeFeatures: features };
    return { input: { ...input, signal, target: { ...input.target, account } }, workflowId };
  }

  test("when a buy trails and the owner's defaults add breakeven and a looser spread cap, then the command carries them resolved", async () => {
    const { activities, calls } = queueDouble();
    const signal: SignalInstruction = { ...BUY, trailDistancePips: 12, maxSpreadPips: 2, closeOpposite: false, meta: { origin: 'tv' } };
    const { input, workflowId } = await managedInput(signal, { breakevenTriggerPips: 10, breakevenOffsetPips: 1, maxSpreadPips: 3 }, FEATURES);
    const outcome = await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await workflowKit().env.client.workflow.start(accountWorkflow, { taskQueue, workflowId, args: [input] });
      await handle.executeUpdate(bridgeReportUpdate, { args: [{ commandId: workflowId, status: 'filled', ticket: 'T-9', price: 1.1 }], updateId: workflowId });
      return handle.result();
    });
    expect(outcome).toMatchObject({ outcome: 'filled', ticket: 'T-9' });
    expect(calls.commands).toHaveLength(1);
    const { commandId: _c, seq: _s, signalId: _i, acceptedAt: _a, expiresAt: _e, ...command } = calls.commands[0]!;
    // closeOpposite false and meta never travel; every default is filled in.
    expect(command).toEqual({
      action: 'buy',
      symbol: 'EURUSD',
      volume: 0.01,
      accountId: 'acc-1',
      trailDistancePips: 12,
      trailTriggerPips: 0,
      trailStepPips: 1,
      breakevenTriggerPips: 10,
      breakevenOffsetPips: 1,
      maxSpreadPips: 2,
    });
  });

  test("when the owner's defaults trail and the bridge did not announce trailing_stop, then management_unsupported, nothing queued, its number released", async () => {
    const { activities, calls } = queueDouble();
    const { input, workflowId } = await managedInput(BUY, { trailDistancePips: 20 }, ['max_spread']);
    const outcome = await workflowKit().withWorker(activities, (taskQueue) =>
      workflowKit().env.client.workflow.execute(accountWorkflow, { taskQueue, workflowId, args: [input] }),
    );
    expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'management_unsupported' });
    expect(calls.dispatched).toEqual([]);
    expect(calls.released).toEqual([{ accountId: 'acc-1', seq: 1 }]);
  });
});
