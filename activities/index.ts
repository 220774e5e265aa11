import type { AdoptResult, CommandQueue, EnqueueResult, WithdrawResult } from '../src/bridge/queue';
import type { AccountSequencer } from '../src/bridge/ordering';
import type { BridgeCommand, BridgeReport } from '../src/domain/bridge-protocol';
import type { AttemptDeps } from '../src/callbacks/attempt';
import { createCallbackActivities } from './callbacks';
import type { RedisTradeCallbackCap } from '../src/callbacks/trade-coalescing';

/** Activities touch the outside world for the workflows: here, the per-account bridge command queue. */
export function createActivities(deps: {
  queue: CommandQueue;
  sequencer: AccountSequencer;
  callbacks?: AttemptDeps;
  tradeCallbacks?: Pick<RedisTradeCallbackCap, 'coalesced'>;
}) {
  return {
    ...createCallbackActivities(deps.callbacks, deps.tradeCallbacks),
    /**
     * Idempotent by commandId, so a retried activity never queues a second order. `overtaken`: not queued, a later
     * command of the account ran first (src/bridge/ordering.ts). A resend queues it whatever the order.
     */
    async dispatchCommand(command: BridgeCommand, options?: { resend?: boolean; generation?: string }): Promise<EnqueueResult> {
      return deps.queue.enqueue(command, options);
    },
    /**
     * The dispatch of a command the ingress may have queued at acceptance: queued now if it is not there, otherwise
     * what became of it meanwhile (taken, reported, withdrawn, overtaken). Idempotent like dispatchCommand.
     */
    async adoptCommand(command: BridgeCommand, generation?: string): Promise<AdoptResult> {
      return deps.queue.adopt(command, generation);
    },
    /**
     * No command will be queued for this signal: the account's later commands need not wait for it. The signal's id,
     * which recorded histories still pass, is no longer read.
     */
    async releaseSequence(accountId: string, seq: number, expiresAt: string, _signalId?: string): Promise<void> {
      await deps.sequencer.release(accountId, seq, Date.parse(expiresAt));
    },
    /**
     * The report the ingress recorded for a command, if any: an ingress answers a bridge once its report is in Redis
     * and hands it to the workflow after, so a report whose hand-over was lost (the ingress died) is found here.
     */
    async recordedReport(accountId: string, commandId: string): Promise<BridgeReport | null> {
      return (await deps.queue.recordedReport(accountId, commandId)) ?? null;
    },
    /** Pulls back a command no bridge has taken; tells whether it was taken, reported, or forgotten by Redis. */
    async withdrawCommand(accountId: string, commandId: string, queued = false, generation?: string): Promise<WithdrawResult> {
      return deps.queue.withdraw(accountId, commandId, queued, generation);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
