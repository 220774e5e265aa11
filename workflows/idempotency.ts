import { sleep } from '@temporalio/workflow';

/**
 * Holds an idempotency key for the replay window (spec §5 rule 5). The ingress starts it with the 202 it answered in
 * the memo; while it runs, a second start with the same id fails and the ingress replays that 202. Its execution
 * timeout is the window itself, so the key frees on time even when no worker runs.
 */
export async function idempotencyWindowWorkflow(windowMs: number): Promise<void> {
  // Finish just before the server's timeout, so a normal window ends Completed rather than TimedOut.
  await sleep(Math.max(windowMs - 250, 1));
}
