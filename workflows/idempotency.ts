import { sleep, workflowInfo } from '@temporalio/workflow';

/**
 * Holds an idempotency key for the replay window (spec §5 rule 5). The ingress starts it with the 202 it answered in
 * the memo; while it runs, a second start with the same id fails and the ingress replays that 202. It sleeps until
 * the window, counted from its start, has passed and then completes: the Temporal UI lists it Completed, not as a
 * failure. The execution timeout the ingress sets is only a backstop for a window
 * no worker ran.
 */
export async function idempotencyWindowWorkflow(windowMs: number): Promise<void> {
  const left = workflowInfo().runStartTime.getTime() + windowMs - Date.now();
  if (left > 0) await sleep(left);
}
