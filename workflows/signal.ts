import { ParentClosePolicy, condition, defineQuery, executeChild, log, setHandler, upsertMemo } from '@temporalio/workflow';
import { isOpening } from '../src/domain/actions';
import type { AccountOutcome } from '../src/domain/outcome';
import type { SignalWorkflowInput } from '../src/domain/workflow-input';
import { accountWorkflowId, OUTCOME_MEMO_PREFIX } from '../src/domain/ids';
import { AccountIdKey, ActionKey, SignalIdKey, SymbolKey } from '../src/temporal/search-attributes';
import { accountWorkflow } from './account';

export const outcomesQuery = defineQuery<AccountOutcome[]>('outcomes');

/**
 * One accepted signal: one child per target account, all started at once. Outcomes go into the memo as they arrive
 * (one memo key per account, so history grows linearly), which lets the status poll read them with describe() and no
 * worker; however many children finish in one workflow task, the memo is written once in it.
 */
export async function signalWorkflow(input: SignalWorkflowInput): Promise<AccountOutcome[]> {
  const outcomes: AccountOutcome[] = [];
  setHandler(outcomesQuery, () => outcomes);
  const reported = isOpening(input.signal.action);
  const unrecorded: AccountOutcome[] = [];
  let running = input.targets.length;

  const children = input.targets.map(async (target) => {
    const accountId = target.account.id;
    try {
      const outcome = await executeChild(accountWorkflow, {
        workflowId: accountWorkflowId(input.signalId, accountId),
        // What the Temporal UI shows for the child in the parent's timeline, instead of just "accountWorkflow".
        staticSummary: `${input.signal.action}${input.signal.symbol ? ` ${input.signal.symbol}` : ''} on ${accountId} (${target.account.platform})`,
        args: [{ signalId: input.signalId, correlationId: input.correlationId, acceptedAt: input.acceptedAt, signal: input.signal, target }],
        // An operator who terminates the signal must not orphan an order in flight.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        memo: { correlationId: input.correlationId, origin: input.signal.meta?.origin ?? null },
        typedSearchAttributes: [
          { key: SignalIdKey, value: input.signalId },
          { key: AccountIdKey, value: accountId },
          { key: ActionKey, value: input.signal.action },
          ...(input.signal.symbol ? [{ key: SymbolKey, value: input.signal.symbol }] : []),
        ],
      });
      outcomes.push(outcome);
      if (reported) unrecorded.push(outcome);
    } catch (err) {
      // Not a business rejection (those are values): leave the account pending for an operator to repair.
      log.error('account workflow failed', { accountId, error: String(err) });
    } finally {
      running--;
    }
  });

  // Conditions are checked once every job of a workflow task has run: each pass records all that arrived in it.
  while (running > 0 || unrecorded.length > 0) {
    await condition(() => unrecorded.length > 0 || running === 0);
    if (unrecorded.length > 0) upsertMemo(Object.fromEntries(unrecorded.splice(0).map((o) => [OUTCOME_MEMO_PREFIX + o.accountId, o])));
  }
  await Promise.all(children);
  return outcomes;
}
