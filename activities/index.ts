import type { CommandQueue } from '../src/bridge/queue';
import type { AccountSequencer } from '../src/bridge/ordering';
import type { BridgeCommand } from '../src/bridge/protocol';

/** Activities touch the outside world for the workflows: here, the per-account bridge command queue. */
export function createActivities(deps: { queue: CommandQueue; sequencer: AccountSequencer }) {
  return {
    /** Idempotent by commandId, so a retried activity never queues a second order. */
    async dispatchCommand(command: BridgeCommand): Promise<void> {
      await deps.queue.enqueue(command);
    },
    /** No command will be queued for this signal: the account's later commands need not wait for it. */
    async releaseSequence(accountId: string, seq: number, expiresAt: string): Promise<void> {
      await deps.sequencer.release(accountId, seq, Date.parse(expiresAt));
    },
    /** Pulls back a command no bridge has taken; tells whether it was taken or already reported. */
    async withdrawCommand(accountId: string, commandId: string): Promise<'withdrawn' | 'delivered' | 'reported'> {
      return deps.queue.withdraw(accountId, commandId);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
