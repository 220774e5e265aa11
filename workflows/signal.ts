import { ParentClosePolicy, defineQuery, executeChild, log, setHandler, upsertMemo } from '@temporalio/workflow';
import { isOpening } from '../src/signals/actions';
import type { AccountOutcome, SignalWorkflowInput } from '../src/signals/outcome';
import { accountWorkflowId, OUTCOME_MEMO_PREFIX } from '../src/temporal/ids';
import { AccountIdKey, ActionKey, SignalIdKey, SymbolKey } from '../src/temporal/search-attributes';
import { accountWorkflow } from './account';

export const outcomesQuery = defineQuery<AccountOutcome[]>('outcomes');

/**
 * One accepted signal: one child per target account. Each outcome goes into the memo as it arrives (one memo key
 * per account, so history grows linearly), which lets the status poll read it with describe() and no worker.
 */
export async function signalWorkflow(input: SignalWorkflowInput): Promise<AccountOutcome[]> {
  const outcomes: AccountOutcome[] = [];
  setHandler(outcomesQuery, () => outcomes);
  const reported = isOpening(input.signal.action);

  await Promise.all(
    input.targets.map(async (target) => {
      const accountId = target.account.id;
      try {
        const outcome = await executeChild(accountWorkflow, {
          workflowId: accountWorkflowId(input.signalId, accountId),
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
        if (reported) upsertMemo({ [OUTCOME_MEMO_PREFIX + accountId]: outcome });
      } catch (err) {
        // Not a business rejection (those are values): leave the account pending for an operator to repair.
        log.error('account workflow failed', { accountId, error: String(err) });
      }
    }),
  );
  return outcomes;
}
