import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { BridgeReport } from '../domain/bridge-protocol';
import type { ReportDelivery, SignalExecutions } from '../signals/executions';
import type { AccountOutcome } from '../domain/outcome';
import type { SignalWorkflowInput } from '../domain/workflow-input';
import { sentFields } from '../domain/signal';
import { OUTCOME_MEMO_PREFIX, signalWorkflowId } from '../domain/ids';
import type { Regions } from './regions';
import { AmbiguousStartError, certainlyNotStarted, isTemporalBackpressure, launchFailure, unavailableOnBackpressure } from './failures';
import { AccountIdsKey, accountIdsValue, ActionKey, OwnerIdKey, ReceivedAtKey, SignalIdKey, SymbolKey } from './search-attributes';
import { ExpiringCache } from './expiring-cache';
import { LateReads } from './late-reads';
import { signalWorkflow } from '../../workflows/signal';
import { bridgeReportSignal, bridgeReportUpdate } from '../../workflows/messages';

/** How long a start that certainly was not sent (no connection) is tried again, and the pause between tries. */
const NOT_SENT_RETRY_MS = 500;
const NOT_SENT_RETRY_PAUSE_MS = 100;

export class TemporalExecutions implements SignalExecutions {
  /**
   * Outcomes of signals whose workflow has closed: they no longer change, so a poll of one needs no Temporal call.
   * Kept for a minute (an operator who resets a closed signal sees the new run after that), and bounded.
   */
  private readonly closed = new ExpiringCache<string, AccountOutcome[]>(60_000, 20_000);
  /** A poll waits for Temporal only briefly; a late answer serves the next poll of the signal (for 5 s). */
  private readonly lateReads = new LateReads<AccountOutcome[]>(5_000, 20_000);

  constructor(
    private readonly regions: Regions,
    private readonly taskQueue: string,
    /** How long to keep confirming a start whose answer was lost. */
    private readonly confirmMs = 1500,
    /** How long a report waits for the worker to take its Update before it goes in as a Signal. */
    private readonly reportUpdateWaitMs = 2000,
  ) {}

  /**
   * Starts once. When the answer is lost, the same start (same workflow id) is sent again until Temporal says it
   * started or that it already exists; only then, or on a certain refusal, does this return or throw plainly.
   */
  async launch(region: string, input: SignalWorkflowInput, deadline?: number): Promise<'created' | 'existed'> {
    try {
      return await this.launchOnce(region, input, deadline);
    } catch (err) {
      throw launchFailure(err);
    }
  }

  private async launchOnce(region: string, input: SignalWorkflowInput, deadline?: number): Promise<'created' | 'existed'> {
    const confirmUntil = Math.max(deadline ?? 0, Date.now()) + this.confirmMs;
    let attemptDeadline = deadline;
    const firstTry = Date.now();
    for (;;) {
      try {
        await this.start(region, input, attemptDeadline);
        return 'created';
      } catch (err) {
        // On a confirming attempt, the workflow that exists is the one our lost first attempt started.
        if (err instanceof WorkflowExecutionAlreadyStartedError) return attemptDeadline === deadline ? 'existed' : 'created';
        if (certainlyNotStarted(err) && attemptDeadline === deadline) {
          // Nothing started. Temporal may be restarting: try again briefly, then say "not accepted" (well before a
          // caller such as TradingView gives up at 3 s), never the ambiguous answer.
          if (!isTemporalBackpressure(err) || Date.now() + NOT_SENT_RETRY_PAUSE_MS >= Math.min(firstTry + NOT_SENT_RETRY_MS, deadline ?? 0)) throw err;
          await new Promise((resolve) => setTimeout(resolve, NOT_SENT_RETRY_PAUSE_MS));
          continue;
        }
        if (Date.now() >= confirmUntil) throw new AmbiguousStartError(`the start of ${input.signalId} in ${region} may have happened`, { cause: err });
        attemptDeadline = confirmUntil;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100, confirmUntil - Date.now())));
      }
    }
  }

  private async start(region: string, input: SignalWorkflowInput, deadline?: number): Promise<void> {
    await this.regions.call(
      region,
      (client) =>
        client.workflow.start(signalWorkflow, {
          taskQueue: this.taskQueue,
          workflowId: signalWorkflowId(input.signalId),
          args: [input],
          // A signalId runs once per region, even when a retry re-attempts a region that did start.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          // Skipped accounts too: the UI then answers "what happened to acc-x on this signal" without the logs.
          // `sent`: what the signal asked (its order fields, never the secret), which the owner's signal page shows.
          memo: {
            correlationId: input.correlationId,
            origin: input.signal.meta?.origin ?? null,
            sent: sentFields(input.signal),
            ...(input.skipped ? { skipped: input.skipped } : {}),
          },
          typedSearchAttributes: [
            { key: SignalIdKey, value: input.signalId },
            // Every account the signal runs on in this region: one query finds every signal that touched an account.
            { key: AccountIdsKey, value: accountIdsValue(input.targets.map((t) => t.account.id)) },
            { key: ActionKey, value: input.signal.action },
            ...(input.signal.symbol ? [{ key: SymbolKey, value: input.signal.symbol }] : []),
            ...ownerOf(input),
            { key: ReceivedAtKey, value: new Date(input.acceptedAt) },
          ],
        }),
      deadline,
    );
  }

  async started(region: string, signalId: string, deadline?: number): Promise<boolean> {
    return (await this.signalState(region, signalId, deadline)) !== 'missing';
  }

  /** Whether the signal's workflow runs in that region, has closed, or was never started; throws when Temporal cannot say. */
  async signalState(region: string, signalId: string, deadline?: number): Promise<'running' | 'closed' | 'missing'> {
    return unavailableOnBackpressure(async () => {
      try {
        const d = await this.regions.call(region, (client) => client.workflow.getHandle(signalWorkflowId(signalId)).describe(), deadline);
        return d.status.name === 'RUNNING' ? 'running' : 'closed';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return 'missing';
        throw err;
      }
    });
  }

  async outcomes(signalId: string, waitMs?: number): Promise<AccountOutcome[] | undefined> {
    return this.lateReads.read(signalId, () => this.readOutcomes(signalId), waitMs);
  }

  private async readOutcomes(signalId: string): Promise<AccountOutcome[]> {
    const perRegion = await Promise.allSettled(
      this.regions.names().map(async (region) => {
        const key = `${region}/${signalId}`;
        const known = this.closed.get(key);
        if (known) return known;
        try {
          const description = await this.regions.call(region, (client) => client.workflow.getHandle(signalWorkflowId(signalId)).describe());
          const outcomes = Object.entries(description.memo ?? {})
            .filter(([key]) => key.startsWith(OUTCOME_MEMO_PREFIX))
            .map(([, value]) => value as AccountOutcome);
          if (description.status.name !== 'RUNNING') this.closed.set(key, outcomes);
          return outcomes;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return [];
          throw err;
        }
      }),
    );
    // A region that is down hides only its own accounts (they read as pending); all regions down is an error.
    const answered = perRegion.filter((r): r is PromiseFulfilledResult<AccountOutcome[]> => r.status === 'fulfilled');
    if (answered.length === 0 && perRegion.length > 0) throw (perRegion[0] as PromiseRejectedResult).reason;
    return answered.flatMap((r) => r.value);
  }

  /**
   * The report as a workflow Update (update id = commandId: Temporal drops a resent one), answered by the worker in
   * one speculative task. An Update needs a running worker, so when none answers in time the same report goes in as a
   * Signal, which Temporal keeps durably until the worker comes back.
   */
  async deliverReport(region: string, report: BridgeReport): Promise<ReportDelivery> {
    try {
      await this.regions.call(
        region,
        (client) => client.workflow.getHandle(report.commandId).executeUpdate(bridgeReportUpdate, { args: [report], updateId: report.commandId }),
        Date.now() + this.reportUpdateWaitMs,
      );
      return 'delivered';
    } catch (err) {
      const settled = settledDelivery(err);
      if (settled) return settled;
    }
    try {
      await this.regions.call(region, (client) => client.workflow.getHandle(report.commandId).signal(bridgeReportSignal, report));
      return 'delivered';
    } catch (err) {
      const settled = settledDelivery(err);
      if (settled) return settled;
      throw err;
    }
  }
}

/** A final answer hidden in an Update or Signal failure; undefined when the call should be tried another way. */
function settledDelivery(err: unknown): ReportDelivery | undefined {
  if (err instanceof WorkflowNotFoundError) return /already completed/i.test(err.message) ? 'closed' : 'unknown';
  // The validator refused it: a commandId that is not this workflow's (cannot happen for ids we issue).
  if (err instanceof WorkflowUpdateFailedError) return 'unknown';
  return undefined;
}

/**
 * The parent's OwnerId: the one owner of its targets (resolveTargets takes only the secret owner's accounts). Were
 * there ever several, the parent names none rather than one of them; each account workflow names its own.
 */
function ownerOf(input: SignalWorkflowInput): { key: typeof OwnerIdKey; value: string }[] {
  const owners = new Set(input.targets.map((t) => t.account.owner));
  return owners.size === 1 ? [{ key: OwnerIdKey, value: [...owners][0]! }] : [];
}
