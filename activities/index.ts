import type { AdoptResult, CommandQueue, EnqueueResult, WithdrawResult } from '../src/bridge/queue';
import type { AccountSequencer } from '../src/bridge/ordering';
import type { BridgeCommand, BridgeReport } from '../src/domain/bridge-protocol';
import type { AdmissionLedger } from '../src/signals/admission';
import type { AttemptDeps } from '../src/callbacks/attempt';
import { createCallbackActivities } from './callbacks';
import type { RedisTradeCallbackCap } from '../src/callbacks/trade-coalescing';
import { signalOfCommand } from '../src/domain/ids';

/** Activities touch the outside world for the workflows: here, the per-account bridge command queue. */
export function createActivities(deps: {
  queue: CommandQueue;
  sequencer: AccountSequencer;
  admission: AdmissionLedger;
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
      const result = await deps.queue.enqueue(command, options);
      await deps.admission.settled(command.signalId, command.accountId);
      return result;
    },
    /**
     * The dispatch of a command the ingress may have queued at acceptance: queued now if it is not there, otherwise
     * what became of it meanwhile (taken, reported, withdrawn, overtaken). Idempotent like dispatchCommand.
     */
    async adoptCommand(command: BridgeCommand, generation?: string): Promise<AdoptResult> {
      const result = await deps.queue.adopt(command, generation);
      await deps.admission.settled(command.signalId, command.accountId);
      return result;
    },
    /** No command will be queued for this signal: the account's later commands need not wait for it. */
    async releaseSequence(accountId: string, seq: number, expiresAt: string, signalId?: string): Promise<void> {
      await deps.sequencer.release(accountId, seq, Date.parse(expiresAt));
      if (signalId !== undefined) await deps.admission.settled(signalId, accountId);
    },
    /**
     * The report the ingress recorded for a command, if any: an ingress answers a bridge once its report is in Redis
     * and hands it to the workflow after, so a report whose hand-over was lost (the ingress died) is found here.
     */
    async recordedReport(accountId: string, commandId: string): Promise<BridgeReport | null> {
      return (await deps.queue.recordedReport(accountId, commandId)) ?? null;
    },
    /**
     * Pulls back a command no bridge has taken; tells whether it was taken, reported, or forgotten by Redis. Whatever
     * the answer, the command's fate is known, so admission no longer counts it pending: a workflow whose adoption ran
     * out of time (Redis away) comes here instead, and its pair would otherwise hold the door shut until the ledger's
     * horizon.
     */
    async withdrawCommand(accountId: string, commandId: string, queued = false, generation?: string): Promise<WithdrawResult> {
      const result = await deps.queue.withdraw(accountId, commandId, queued, generation);
      const signalId = signalOfCommand(commandId);
      if (signalId !== undefined) await deps.admission.settled(signalId, accountId);
      return result;
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
