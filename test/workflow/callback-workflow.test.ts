import { ApplicationFailure } from '@temporalio/common';
import { signalWorkflow } from '../../workflows';
import { bridgeReportUpdate } from '../../workflows/messages';
import { accountWorkflowId, callbackWorkflowId, signalWorkflowId } from '../../src/domain/ids';
import type { SignalWorkflowInput } from '../../src/domain/workflow-input';
import type { DeliverCallbackRequest } from '../../activities/callbacks';
import { waitFor } from '../../support/infra';
import { BUY, newSignalId, queueDouble, target, useWorkflowKit } from './kit';

/**
 * Outcome callbacks in virtual time: the signal workflow starts one delivery per reported outcome and never waits for
 * it; a receiver that never answers is retried with backoff for 24 hours and then given up, the signal long done.
 */

const workflowKit = useWorkflowKit();

async function signalTo(accountId: string, callbackEndpoints?: string[]): Promise<SignalWorkflowInput> {
  const now = await workflowKit().env.currentTimeMs();
  const t = target(accountId, now, 600_000);
  return {
    signalId: newSignalId(),
    correlationId: 'req_test',
    acceptedAt: new Date(now).toISOString(),
    signal: BUY,
    targets: [t],
    ...(callbackEndpoints ? { callbackEndpoints: { [t.account.owner]: callbackEndpoints } } : {}),
  };
}

/** Runs the signal, fills acc-1 with T-1 through the bridge's report, and returns the signal's and the delivery's ends. */
async function fillWith(deliver: (req: DeliverCallbackRequest) => Promise<'delivered' | 'gone'>, endpoints: string[]) {
  const { activities } = queueDouble();
  const input = await signalTo('acc-1', endpoints);
  const { env } = workflowKit();
  return workflowKit().withWorker({ ...activities, deliverCallback: deliver }, async (taskQueue) => {
    const handle = await env.client.workflow.start(signalWorkflow, { taskQueue, workflowId: signalWorkflowId(input.signalId), args: [input] });
    const commandId = accountWorkflowId(input.signalId, 'acc-1');
    await waitForStart(commandId);
    await env.client.workflow
      .getHandle(commandId)
      .executeUpdate(bridgeReportUpdate, { args: [{ commandId, status: 'filled', ticket: 'T-1' }], updateId: commandId });
    const outcomes = await handle.result();
    const result = await env.client.workflow.getHandle(callbackWorkflowId(input.signalId, 'acc-1')).result();
    return { input, outcomes, result };
  });
}

async function waitForStart(workflowId: string): Promise<void> {
  const handle = workflowKit().env.client.workflow.getHandle(workflowId);
  for (let i = 0; i < 200; i++) {
    if (
      await handle.describe().then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`${workflowId} never started`);
}

describe('callbackWorkflow in virtual time', () => {
  test('when the owner has two endpoints, then the fill is delivered to each, once, with the webhook-id of the (signal, account)', async () => {
    const calls: DeliverCallbackRequest[] = [];
    const { input, result } = await fillWith(
      async (req) => {
        calls.push(req);
        return 'delivered';
      },
      ['ep_aaaaaaaaaaaaaaaa', 'ep_bbbbbbbbbbbbbbbb'],
    );
    expect(result).toEqual({ ep_aaaaaaaaaaaaaaaa: 'delivered', ep_bbbbbbbbbbbbbbbb: 'delivered' });
    expect(calls.map((c) => c.endpointId).sort()).toEqual(['ep_aaaaaaaaaaaaaaaa', 'ep_bbbbbbbbbbbbbbbb']);
    const messageId = callbackWorkflowId(input.signalId, 'acc-1');
    for (const c of calls) {
      expect(c).toMatchObject({ owner: 'alice', messageId });
      expect(JSON.parse(c.body)).toMatchObject({
        type: 'signal.outcome',
        data: { signalId: input.signalId, accountId: 'acc-1', outcome: 'filled', ticket: 'T-1' },
      });
    }
  });

  test('when the receiver never answers 2xx, then the signal completes at once while the delivery retries on its bounded backoff (1 s × 3, at most hourly, for 24 h)', async () => {
    let attempts = 0;
    const { activities } = queueDouble();
    const input = await signalTo('acc-1', ['ep_aaaaaaaaaaaaaaaa']);
    const { env } = workflowKit();
    await workflowKit().withWorker(
      {
        ...activities,
        deliverCallback: async () => {
          attempts++;
          throw ApplicationFailure.retryable('HTTP 500', 'callback_failed');
        },
      },
      async (taskQueue) => {
        const handle = await env.client.workflow.start(signalWorkflow, { taskQueue, workflowId: signalWorkflowId(input.signalId), args: [input] });
        const commandId = accountWorkflowId(input.signalId, 'acc-1');
        await waitForStart(commandId);
        await env.client.workflow
          .getHandle(commandId)
          .executeUpdate(bridgeReportUpdate, { args: [{ commandId, status: 'filled', ticket: 'T-1' }], updateId: commandId });
        // The signal's outcome does not wait for the receiver.
        expect(await handle.result()).toEqual([expect.objectContaining({ accountId: 'acc-1', outcome: 'filled', ticket: 'T-1' })]);
        const delivery = env.client.workflow.getHandle(callbackWorkflowId(input.signalId, 'acc-1'));
        expect((await delivery.describe()).status.name).toBe('RUNNING');
        // Its first task may not have run yet: wait for the activity it schedules.
        const scheduled = await waitFor(
          'the delivery to schedule its activity',
          async () =>
            ((await delivery.fetchHistory()).events ?? []).find((e) => e.activityTaskScheduledEventAttributes)?.activityTaskScheduledEventAttributes ??
            undefined,
          10_000,
        );
        const seconds = (d: { seconds?: unknown } | null | undefined) => Number(d?.seconds ?? 0);
        expect(scheduled.activityType?.name).toBe('deliverCallback');
        expect(seconds(scheduled.scheduleToCloseTimeout)).toBe(24 * 3600);
        expect(seconds(scheduled.retryPolicy?.initialInterval)).toBe(1);
        expect(scheduled.retryPolicy?.backoffCoefficient).toBe(3);
        expect(seconds(scheduled.retryPolicy?.maximumInterval)).toBe(3600);
        expect(scheduled.retryPolicy?.nonRetryableErrorTypes).toEqual(['callback_refused', 'callbacks_not_configured']);
        await delivery.terminate('test over');
      },
    );
    expect(attempts).toBeGreaterThanOrEqual(1);
  });

  test('when the URL is refused at delivery, then it is not retried', async () => {
    let attempts = 0;
    const { result } = await fillWith(async () => {
      attempts++;
      throw ApplicationFailure.nonRetryable('refused: private or reserved address (10.0.0.1)', 'callback_refused');
    }, ['ep_aaaaaaaaaaaaaaaa']);
    expect(result).toEqual({ ep_aaaaaaaaaaaaaaaa: 'failed' });
    expect(attempts).toBe(1);
  });

  test('when the owner has no endpoint, then no delivery is started', async () => {
    const { activities } = queueDouble();
    const input = await signalTo('acc-1');
    const { env } = workflowKit();
    await workflowKit().withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start(signalWorkflow, { taskQueue, workflowId: signalWorkflowId(input.signalId), args: [input] });
      const commandId = accountWorkflowId(input.signalId, 'acc-1');
      await waitForStart(commandId);
      await env.client.workflow
        .getHandle(commandId)
        .executeUpdate(bridgeReportUpdate, { args: [{ commandId, status: 'filled', ticket: 'T-1' }], updateId: commandId });
      await handle.result();
      const events = (await handle.fetchHistory()).events ?? [];
      expect(
        events
          .filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)
          .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId),
      ).toEqual([commandId]);
    });
  });
});
