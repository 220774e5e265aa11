import { WorkflowNotFoundError } from '@temporalio/client';
import type { Regions } from './regions';
import { withdrawCommandSignal, type WithdrawReason } from '../../workflows/messages';

/**
 * Tells an account workflow that its command was withdrawn, with the reason its signal ends on (the workflow's
 * `withdrawCommand` signal: it withdraws the command itself and ends `rejected` only if no bridge took it). The
 * workflow runs in the region its signal was accepted in: the account's region first, then the others. A workflow
 * already closed, or not found anywhere, has nothing to be told.
 */
export function tellWithdrawn(regions: Regions, firstRegion: string, reason: WithdrawReason): (commandId: string) => Promise<void> {
  const order = [firstRegion, ...regions.names().filter((r) => r !== firstRegion)].filter((r) => regions.has(r));
  return async (commandId) => {
    for (const region of order) {
      try {
        await regions.call(region, (client) => client.workflow.getHandle(commandId).signal(withdrawCommandSignal, reason));
        return;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }
  };
}
