import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { BridgeReport } from '../bridge/protocol';
import type { SignalExecutions } from '../signals/executions';
import type { AccountOutcome, SignalWorkflowInput } from '../signals/outcome';
import { OUTCOME_MEMO_PREFIX, signalWorkflowId } from './ids';
import type { Regions } from './regions';
import { AmbiguousStartError, certainlyNotStarted, isTemporalBackpressure } from './failures';
import { ActionKey, SignalIdKey, SymbolKey } from './search-attributes';

/** How long a start that certainly was not sent (no connection) is tried again, and the pause between tries. */
const NOT_SENT_RETRY_MS = 500;
const NOT_SENT_RETRY_PAUSE_MS = 100;

export class TemporalExecutions implements SignalExecutions {
  constructor(
    private readonly regions: Regions,
    private readonly taskQueue: string,
    /** How long to keep confirming a start whose answer was lost. */
    private readonly confirmMs = 1500,
  ) {}

  /**
   * Starts once. When the answer is lost, the same start (same workflow id) is sent again until Temporal says it
   * started or that it already exists; only then, or on a certain refusal, does this return or throw plainly.
   */
  async launch(region: string, input: SignalWorkflowInput, deadline?: number): Promise<'created' | 'existed'> {
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
        client.workflow.start('signalWorkflow', {
          taskQueue: this.taskQueue,
          workflowId: signalWorkflowId(input.signalId),
          args: [input],
          // A signalId runs once per region, even when a retry re-attempts a region that did start.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          memo: { correlationId: input.correlationId, origin: input.signal.meta?.origin ?? null },
          typedSearchAttributes: [
            { key: SignalIdKey, value: input.signalId },
            { key: ActionKey, value: input.signal.action },
            ...(input.signal.symbol ? [{ key: SymbolKey, value: input.signal.symbol }] : []),
          ],
        }),
      deadline,
    );
  }

  async started(region: string, signalId: string, deadline?: number): Promise<boolean> {
    try {
      await this.regions.call(region, (client) => client.workflow.getHandle(signalWorkflowId(signalId)).describe(), deadline);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  async outcomes(signalId: string): Promise<AccountOutcome[]> {
    const perRegion = await Promise.allSettled(
      this.regions.names().map(async (region) => {
        try {
          const description = await this.regions.call(region, (client) => client.workflow.getHandle(signalWorkflowId(signalId)).describe());
          return Object.entries(description.memo ?? {})
            .filter(([key]) => key.startsWith(OUTCOME_MEMO_PREFIX))
            .map(([, value]) => value as AccountOutcome);
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

  async deliverReport(region: string, report: BridgeReport): Promise<boolean> {
    try {
      await this.regions.call(region, (client) => client.workflow.getHandle(report.commandId).signal('bridgeReport', report));
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }
}
