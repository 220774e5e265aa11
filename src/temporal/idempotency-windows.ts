import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { AcceptanceRecord, IdempotencyWindows } from '../signals/idempotency';
import { idempotencyWorkflowId } from '../domain/ids';
import type { Regions } from './regions';
import { unavailableOnBackpressure } from './failures';
import { idempotencyWindowWorkflow } from '../../workflows/idempotency';

/**
 * Idempotency windows as Temporal workflow ids (never a cache that can forget): the first start of idem/<digest>
 * wins; a concurrent or later start inside the window fails with AlreadyStarted, and the winner's memo is the answer.
 * They live in the home region (the first configured one).
 *
 * A window is a workflow that sleeps until the window, counted from its start, has passed and then completes: the id
 * is held for the window, the Temporal UI lists it Completed (a window that ended Timed Out would read as a failure
 * among the signals). It costs two small workflow tasks (the timer's start and its firing). Its execution timeout is
 * the window plus WINDOW_BACKSTOP_MS: only a window no worker ran within that ends Timed Out.
 */
const WINDOW_BACKSTOP_MS = 30_000;

export class TemporalIdempotencyWindows implements IdempotencyWindows {
  constructor(
    private readonly regions: Regions,
    private readonly homeRegion: string,
    private readonly taskQueue: string,
  ) {}

  async claim(
    digest: string,
    record: AcceptanceRecord,
    windowMs: number,
    deadline?: number,
  ): Promise<{ first: true } | { first: false; record: AcceptanceRecord }> {
    return unavailableOnBackpressure(() => this.claimOnce(digest, record, windowMs, deadline));
  }

  private async claimOnce(
    digest: string,
    record: AcceptanceRecord,
    windowMs: number,
    deadline?: number,
  ): Promise<{ first: true } | { first: false; record: AcceptanceRecord }> {
    const workflowId = idempotencyWorkflowId(digest);
    try {
      await this.regions.call(
        this.homeRegion,
        (client) =>
          client.workflow.start(idempotencyWindowWorkflow, {
            taskQueue: this.taskQueue,
            workflowId,
            args: [windowMs],
            workflowIdConflictPolicy: 'FAIL',
            workflowIdReusePolicy: 'ALLOW_DUPLICATE',
            workflowExecutionTimeout: windowMs + WINDOW_BACKSTOP_MS,
            memo: { acceptance: record },
            // The window's only state is its existence; the UI says what it is next to it.
            staticSummary: 'Idempotency window: holds an X-Idempotency-Key for the replay window, then completes',
          }),
        deadline,
      );
      return { first: true };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    const description = await this.regions.call(this.homeRegion, (client) => client.workflow.getHandle(workflowId).describe(), deadline);
    const winner = description.memo?.acceptance as AcceptanceRecord | undefined;
    if (!winner) throw new Error(`idempotency window ${workflowId} has no acceptance record`);
    return { first: false, record: winner };
  }

  async held(digest: string, deadline?: number): Promise<boolean> {
    return unavailableOnBackpressure(async () => {
      try {
        const description = await this.regions.call(this.homeRegion, (client) => client.workflow.getHandle(idempotencyWorkflowId(digest)).describe(), deadline);
        return description.status.name === 'RUNNING';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      }
    });
  }
}
