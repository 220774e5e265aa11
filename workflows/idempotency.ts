import { sleep } from '@temporalio/workflow';

/**
 * Holds an idempotency key for the replay window (spec §5 rule 5). The ingress starts it with the 202 it answered in
 * the memo; while it runs, a second start with the same id fails and the ingress replays that 202. Its execution
 * timeout is the window and its start delay twice that, so no worker task ever runs it: every window ends **Timed
 * Out**, by design (docs/decisions.md, "Idempotency"). This body runs only if a window is started without that delay.
 */
export async function idempotencyWindowWorkflow(windowMs: number): Promise<void> {
  await sleep(Math.max(windowMs - 250, 1));
}
