import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { BridgeReport } from '../src/domain/bridge-protocol';
import type { AccountOutcome } from '../src/domain/outcome';

/**
 * The workflows' messages, defined once: the workflows set their handlers with these, and the ingress, the CLI and the
 * tests send them typed (`executeUpdate(bridgeReportUpdate, …)`), so a changed argument breaks the build, not a run.
 * A name here is what Temporal records in histories: renaming one breaks every history that used it.
 */

/**
 * The bridge's report, as a workflow Update whose update id is the commandId: Temporal deduplicates a resent report,
 * the ingress learns at once that the workflow took it, and an idle workflow takes it in one speculative task.
 */
export const bridgeReportUpdate = defineUpdate<'recorded' | 'duplicate', [BridgeReport]>('bridgeReportUpdate');
/** The same report as a Signal: durable without a worker, for when the Update cannot be answered in time. */
export const bridgeReportSignal = defineSignal<[BridgeReport]>('bridgeReport');
/**
 * Someone pulled the command back before a bridge took it (the account changed owner: src/bridge/owner-change.ts):
 * the workflow withdraws it itself and, if no bridge took it meanwhile, ends rejected with this reason at once.
 */
export type WithdrawReason = 'account_owner_changed';
export const withdrawCommandSignal = defineSignal<[WithdrawReason]>('withdrawCommand');
/** What a signal workflow tells a query: the outcomes recorded so far. */
export const outcomesQuery = defineQuery<AccountOutcome[]>('outcomes');

/**
 * An operator's word on an account whose workflow failed (terminated, timed out, a bug): what they found at the
 * broker. The poll then reports it; until then the account stays unreported, never `rejected`, since an order may be
 * live. `reason` is required for `rejected` and is recorded as `operator:<reason>`.
 */
export interface OperatorOutcome {
  accountId: string;
  outcome: 'filled' | 'rejected' | 'done';
  ticket?: string;
  reason?: string;
}
export const recordOperatorOutcomeSignal = defineSignal<[OperatorOutcome]>('recordOperatorOutcome');
