/**
 * The bare topology (bench scenario 9): our signal's workflow shape with no application code in it. A parent starts
 * one child and waits for its result; the child hands its "command" out through one local activity (our dispatch is a
 * local activity too), waits for one Update (the bridge's report), and completes. Bundled by the bench's own worker
 * (bench/bare/floor.ts); never registered on the service's task queue.
 */
import { condition, defineUpdate, executeChild, proxyLocalActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { ActionKey, SignalIdKey, SymbolKey } from '../../src/temporal/search-attributes';
import type { BareActivities } from './activities';

export const reportUpdate = defineUpdate<null, [string]>('report');

const { handOut } = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '10s' });

export interface BareParentInput {
  accountId: string;
  /** Set the search attributes with an upsert in the first task instead of at the start (the variant measured). */
  upsert?: { signalId: string; action: string; symbol: string };
}

export async function bareParent(input: BareParentInput): Promise<string> {
  if (input.upsert) {
    upsertSearchAttributes([
      { key: SignalIdKey, value: input.upsert.signalId },
      { key: ActionKey, value: input.upsert.action },
      { key: SymbolKey, value: input.upsert.symbol },
    ]);
  }
  return executeChild(bareChild, { workflowId: `${workflowInfo().workflowId}/${input.accountId}`, args: [] });
}

export async function bareChild(): Promise<string> {
  let report: string | undefined;
  setHandler(reportUpdate, (r: string) => {
    report = r;
    return null;
  });
  await handOut(workflowInfo().workflowId);
  await condition(() => report !== undefined);
  return report!;
}
