/**
 * A deliberately changed accountWorkflow, for test/replay/replay.test.ts to show that replay catches a change that
 * breaks determinism. Never registered by a worker. The real one dispatches the bridge command as its first local
 * activity; this one releases the account's sequence instead, as a new refusal rule placed before the dispatch
 * without `patched()` would.
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { AccountOutcome } from '../../src/domain/outcome';
import type { AccountWorkflowInput } from '../../src/domain/workflow-input';

const { releaseSequence } = proxyLocalActivities<Activities>({ startToCloseTimeout: '5s' });

export async function accountWorkflow(input: AccountWorkflowInput): Promise<AccountOutcome> {
  const { target, signalId } = input;
  await releaseSequence(target.account.id, target.seq, target.expiresAt, signalId);
  return { accountId: target.account.id, outcome: 'rejected', ticket: null, reason: 'risk_changed_rule', occurredAt: new Date(Date.now()).toISOString() };
}
