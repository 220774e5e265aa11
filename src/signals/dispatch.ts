import type { Logger } from 'pino';
import type { CommandQueue } from '../bridge/queue';
import { accountWorkflowId } from '../domain/ids';
import type { AccountTarget, SignalWorkflowInput } from '../domain/workflow-input';
import { commandFor } from '../risk/command';

/**
 * Dispatch at acceptance (docs/decisions.md): once a signal's workflow is durably started, the ingress puts each
 * account's command on the account's bridge queue itself, built by the same pure function the account workflow applies
 * to the same snapshot, so a bridge has it in milliseconds whatever Temporal's backlog. The account workflow, when it
 * runs, adopts the queued command and supervises it (report, expiry, withdraw, outcome).
 *
 * Exactly once: the commandId is the account workflow's id, the queue takes a commandId once (and the workflow's own
 * enqueue of it is then a no-op), and the bridge executes a commandId at most once. Acceptance order: each command
 * carries the sequence number taken before the start, and the queue hands an account's commands out in that order.
 */
export interface AcceptanceDispatch {
  queue: Pick<CommandQueue, 'enqueue'>;
  logger?: Logger;
  /** Test seams for crash points (test/fault/dispatch-at-acceptance.test.ts): a throw here is the ingress dying there. */
  faults?: { beforeDispatch?(signalId: string): void; beforeEnqueue?(signalId: string): void; afterDispatch?(signalId: string): void };
}

/**
 * Queues the commands of the targets started in one region. Never throws: a command not queued here is queued by its
 * workflow (the pending mark taken at numbering keeps later commands behind it meanwhile). Answers the accounts whose
 * commands are now queued.
 */
export async function dispatchStarted(
  dispatch: AcceptanceDispatch,
  input: SignalWorkflowInput,
  targets: readonly AccountTarget[],
  nowMs: number,
): Promise<string[]> {
  dispatch.faults?.beforeDispatch?.(input.signalId);
  const queued = await Promise.all(
    targets.map(async (target) => {
      const accountId = target.account.id;
      const plan = commandFor({ ...input, target }, accountWorkflowId(input.signalId, accountId), nowMs);
      // A refusal is the workflow's to record (with its number released); nothing goes to a bridge.
      if (!plan.ok) return undefined;
      try {
        dispatch.faults?.beforeEnqueue?.(input.signalId);
        return (await dispatch.queue.enqueue(plan.command, { generation: target.dataGeneration })) === 'queued' ? accountId : undefined;
      } catch (err) {
        dispatch.logger?.warn({ signalId: input.signalId, accountId, err: String(err) }, 'command not queued at acceptance: its workflow queues it');
        return undefined;
      }
    }),
  );
  dispatch.faults?.afterDispatch?.(input.signalId);
  return queued.filter((a): a is string => a !== undefined);
}
