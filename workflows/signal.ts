import {
  ChildWorkflowFailure,
  ParentClosePolicy,
  condition,
  executeChild,
  log,
  setHandler,
  startChild,
  upsertMemo,
  WorkflowIdReusePolicy,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { isOpening } from '../src/domain/actions';
import type { AccountOutcome } from '../src/domain/outcome';
import type { AccountTarget, SignalWorkflowInput } from '../src/domain/workflow-input';
import { accountWorkflowId, ATTENTION_MEMO_PREFIX, callbackWorkflowId, OUTCOME_MEMO_PREFIX } from '../src/domain/ids';
import { exitOutcomeEvent, outcomeEvent } from '../src/domain/callback';
import { ACCOUNT_WORKFLOW_FAILED } from '../src/domain/reason-codes';
import { AccountIdKey, ActionKey, OwnerIdKey, ReasonKey, ReceivedAtKey, SignalIdKey, SymbolKey } from '../src/temporal/search-attributes';
import { accountWorkflow } from './account';
import { outcomesQuery, recordOperatorOutcomeSignal } from './messages';
import { callbackWorkflow } from './callback';

/** How long a signal with a failed account waits for an operator before it completes with that account unreported. */
const ATTENTION_WAIT = '7 days';

/**
 * One accepted signal: one child per target account, all started at once. Outcomes go into the memo as they arrive
 * (one memo key per account, so history grows linearly), which lets the status poll read them with describe() and no
 * worker; however many children finish in one workflow task, the memo is written once in it.
 */
export async function signalWorkflow(input: SignalWorkflowInput): Promise<AccountOutcome[]> {
  const run = new SignalRun(input);
  const children = input.targets.map((target) => run.runAccount(target));
  await run.recordUntilEveryAccountEnded();
  await Promise.all(children);
  await run.awaitOperator();
  // Only their starts: a delivery's child must exist before this workflow closes; its delivery is its own business.
  await run.deliveriesStarted();
  return run.outcomes;
}

/** The signal workflow's state (outcomes, those not yet in the memo, accounts awaiting an operator) and its steps. */
class SignalRun {
  readonly outcomes: AccountOutcome[] = [];
  /** Entries' outcomes not yet in the memo (an exit's are not shown by the poll). */
  private readonly unrecorded: AccountOutcome[] = [];
  private readonly reported: boolean;
  private running: number;
  /** Accounts whose workflow failed: an operator must say what happened at the broker (recordOperatorOutcome). */
  private readonly attention = new Set<string>();
  private readonly targetOf: Map<string, AccountTarget>;
  private readonly deliveries: Promise<void>[] = [];

  constructor(private readonly input: SignalWorkflowInput) {
    setHandler(outcomesQuery, () => this.outcomes);
    this.reported = isOpening(input.signal.action);
    this.running = input.targets.length;
    this.targetOf = new Map(input.targets.map((t) => [t.account.id, t]));
    setHandler(recordOperatorOutcomeSignal, (o) => {
      if (!this.attention.has(o.accountId) || (o.outcome === 'rejected' && !o.reason) || (o.outcome === 'filled' && !o.ticket)) return;
      this.attention.delete(o.accountId);
      // The memo's attention mark goes before the outcome's callback starts: the commands in the order they always had.
      upsertMemo({ [ATTENTION_MEMO_PREFIX + o.accountId]: null });
      this.ended({
        accountId: o.accountId,
        outcome: o.outcome,
        ticket: o.ticket ?? null,
        reason: o.outcome === 'rejected' ? `operator:${o.reason!.slice(0, 200)}` : null,
        occurredAt: new Date(Date.now()).toISOString(),
      });
    });
  }

  /** One account's child workflow, to its outcome; one that fails waits for an operator. */
  async runAccount(target: AccountTarget): Promise<void> {
    const { input } = this;
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
          // The owner's signal log reads these (src/signals/log.ts). Only the start command's attributes change, not
          // the command sequence: an in-flight history replays, its children simply lack them.
          { key: OwnerIdKey, value: target.account.owner },
          { key: ReceivedAtKey, value: new Date(input.acceptedAt) },
        ],
      });
      this.ended(outcome);
    } catch (err) {
      // Not a business rejection (those are values): the account stays unreported (an order may be live) and the
      // signal waits for an operator, who finds it with `Reason = "account_workflow_failed"` in the Temporal UI.
      // What ended it (terminated, timed out, the error), rather than the wrapper's "Child Workflow execution failed".
      const why = String(err instanceof ChildWorkflowFailure && err.cause ? err.cause : err);
      log.error('account workflow failed', { accountId, error: why });
      this.attention.add(accountId);
      upsertMemo({ [ATTENTION_MEMO_PREFIX + accountId]: { error: why.slice(0, 500), at: new Date(Date.now()).toISOString() } });
      upsertSearchAttributes([{ key: ReasonKey, value: ACCOUNT_WORKFLOW_FAILED }]);
    } finally {
      this.running--;
    }
  }

  /** Conditions are checked once every job of a workflow task has run: each pass records all that arrived in it. */
  async recordUntilEveryAccountEnded(): Promise<void> {
    while (this.running > 0 || this.unrecorded.length > 0) {
      await condition(() => this.unrecorded.length > 0 || this.running === 0);
      this.recordInMemo();
    }
  }

  /** A failed account: wait for the operator's word on it (each recorded as it comes), at most ATTENTION_WAIT. */
  async awaitOperator(): Promise<void> {
    while (this.attention.size > 0) {
      if (!(await condition(() => this.attention.size === 0 || this.unrecorded.length > 0, ATTENTION_WAIT))) break;
      this.recordInMemo();
    }
  }

  async deliveriesStarted(): Promise<void> {
    if (this.deliveries.length > 0) await Promise.all(this.deliveries);
  }

  private ended(outcome: AccountOutcome): void {
    this.outcomes.push(outcome);
    if (this.reported) this.unrecorded.push(outcome);
    this.pushOutcome(outcome);
  }

  /** One memo write for every outcome that arrived since the last. */
  private recordInMemo(): void {
    if (this.unrecorded.length > 0) upsertMemo(Object.fromEntries(this.unrecorded.splice(0).map((o) => [OUTCOME_MEMO_PREFIX + o.accountId, o])));
  }

  /**
   * Pushes an outcome to the owner's callbacks (docs/callbacks.md): an entry's as `signal.outcome`, an exit's as
   * `signal.exit_outcome`. A child of its own that this workflow only starts, never waits for, and that outlives it.
   * Only owners snapshotted with endpoints have any: an owner without callbacks costs no command and no event here.
   * Exits accepted before exit callbacks existed carry no endpoints (the accept path snapshotted them for entries
   * only), so their histories replay with no new command.
   */
  private pushOutcome(outcome: AccountOutcome): void {
    const { input } = this;
    const target = this.targetOf.get(outcome.accountId);
    const owner = target?.account.owner;
    // A signal accepted by the first version of callbacks carries them per target (see AccountTarget).
    const endpointIds = (owner === undefined ? undefined : input.callbackEndpoints?.[owner]) ?? target?.callbackEndpoints;
    const event = this.reported
      ? outcomeEvent(input.signalId, input.correlationId, outcome)
      : exitOutcomeEvent(input.signalId, input.correlationId, input.signal.action, outcome);
    if (owner === undefined || !endpointIds?.length || !event) return;
    const workflowId = callbackWorkflowId(input.signalId, outcome.accountId);
    const started = startChild(callbackWorkflow, {
      workflowId,
      args: [{ owner, endpointIds, messageId: workflowId, event }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      // Also after the first delivery closed (until the namespace's retention forgets it): one message per outcome.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      staticSummary: `${outcome.outcome} on ${outcome.accountId} to ${endpointIds.length} callback endpoint(s)`,
    });
    // Already started (an operator's word after a retry, a reset): the first delivery stands.
    this.deliveries.push(
      started.then(
        () => undefined,
        (err: unknown) => log.warn('callback delivery not started', { workflowId, error: String(err) }),
      ),
    );
  }
}
