import type { CommandQueue } from '../src/bridge/queue';
import type { BridgeCommand } from '../src/bridge/protocol';

/** Activities touch the outside world for the workflows: here, the per-account bridge command queue. */
export function createActivities(deps: { queue: CommandQueue }) {
  return {
    /** Idempotent by commandId, so a retried activity never queues a second order. */
    async dispatchCommand(command: BridgeCommand): Promise<void> {
      await deps.queue.enqueue(command);
    },
    /** Pulls back a command no bridge has taken; tells whether it was taken or already reported. */
    async withdrawCommand(accountId: string, commandId: string): Promise<'withdrawn' | 'delivered' | 'reported'> {
      return deps.queue.withdraw(accountId, commandId);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
