import type { CommandQueue, WithdrawResult } from '../src/bridge/queue';
import type { AccountSequencer } from '../src/bridge/ordering';
import type { BridgeCommand } from '../src/domain/bridge-protocol';
import type { AdmissionLedger } from '../src/signals/admission';

/** Activities touch the outside world for the workflows: here, the per-account bridge command queue. */
export function createActivities(deps: { queue: CommandQueue; sequencer: AccountSequencer; admission: AdmissionLedger }) {
  return {
    /** Idempotent by commandId, so a retried activity never queues a second order. */
    async dispatchCommand(command: BridgeCommand): Promise<void> {
      await deps.queue.enqueue(command);
      await deps.admission.settled(command.signalId, command.accountId);
    },
    /** No command will be queued for this signal: the account's later commands need not wait for it. */
    async releaseSequence(accountId: string, seq: number, expiresAt: string, signalId?: string): Promise<void> {
      await deps.sequencer.release(accountId, seq, Date.parse(expiresAt));
      if (signalId !== undefined) await deps.admission.settled(signalId, accountId);
    },
    /** Pulls back a command no bridge has taken; tells whether it was taken, reported, or forgotten by Redis. */
    async withdrawCommand(accountId: string, commandId: string, queued = false): Promise<WithdrawResult> {
      return deps.queue.withdraw(accountId, commandId, queued);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
