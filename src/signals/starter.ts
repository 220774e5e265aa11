import type { Logger } from 'pino';
import type { SignalWorkflowInput } from '../domain/workflow-input';
import type { SignalExecutions } from './executions';
import type { PendingStart, PendingStarts } from './pending-starts';

/**
 * Starts in flight at once from one ingress. The dev server's SQLite takes starts one after another (about 20 ms
 * each), a cluster's history shards in parallel: a few in flight keep either busy without a pile of open calls.
 */
const START_CONCURRENCY = 8;
/**
 * The ingress that accepted a signal starts it; another takes the record over once this much has passed. Short: an
 * account's later signals wait behind the commands of a start its ingress died before making (src/signals/launch.ts).
 */
export const START_CLAIM_MS = 5_000;
/** How often each ingress looks for records whose claim lapsed, and how many it takes per look. */
export const START_SWEEP_EVERY_MS = 1_000;
const SWEEP_LIMIT = 100;
/** Retries of a start that failed (Temporal away or overloaded): doubling up to the last, until it starts. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;
/** How long a start's call may take before it counts as failed and is tried again. */
const START_CALL_MS = 10_000;

interface Job extends PendingStart {
  attempt: number;
}

/**
 * Starts the workflows of accepted signals from their records (src/signals/pending-starts.ts), a bounded number at
 * once, and tries each again until Temporal holds it. The answer to the caller never waits for this. Each try renews
 * the record's claim, so another ingress does not start it at the same time; a start made twice is harmless (one
 * workflow id per signal and region, REJECT_DUPLICATE), and the record goes only once Temporal holds the workflow.
 */
export class SignalStarter {
  private readonly waiting: Job[] = [];
  private readonly queued = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly idle = new Set<() => void>();
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private running = 0;
  private closed = false;

  constructor(
    private readonly starts: PendingStarts,
    private readonly executions: Pick<SignalExecutions, 'launch'>,
    private readonly logger?: Logger,
    private readonly now: () => number = Date.now,
    /** Called with each start's outcome (metrics). */
    private readonly onStart?: (result: 'started' | 'retried') => void,
  ) {}

  /** Starts the signal in the region, in the background; its record holds it until Temporal does. */
  start(region: string, input: SignalWorkflowInput): void {
    const key = `${region}|${input.signalId}`;
    if (this.closed || this.queued.has(key)) return;
    this.queued.add(key);
    this.waiting.push({ region, input, attempt: 0 });
    this.pump();
  }

  /** Looks for lapsed records every few seconds (the starts a dead ingress, or an outage, left). */
  run(): void {
    if (this.sweeper || this.closed) return;
    this.sweeper = setInterval(() => void this.sweep(), START_SWEEP_EVERY_MS);
    this.sweeper.unref();
    void this.sweep();
  }

  /** One look: claims the lapsed records and starts them. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        for (const s of await this.starts.claimLapsed(this.now(), SWEEP_LIMIT, this.now() + START_CLAIM_MS)) this.start(s.region, s.input);
      } catch (err) {
        this.logger?.warn({ err: String(err) }, 'pending starts not read: the next look tries again');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  /** Starts queued or in flight in this ingress. */
  get backlog(): number {
    return this.queued.size;
  }

  /** Waits up to `ms` for the starts in hand to finish; what is left stays recorded for another ingress (or the next run). */
  async drain(ms: number): Promise<void> {
    if (this.queued.size === 0) return;
    await new Promise<void>((resolve) => {
      const idle = this.idle;
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        idle.delete(done);
        resolve();
      }
      idle.add(done);
    });
  }

  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.waiting.length = 0;
    this.queued.clear();
    for (const done of [...this.idle]) done();
  }

  private pump(): void {
    while (!this.closed && this.running < START_CONCURRENCY && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      void this.attempt(job).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async attempt(job: Job): Promise<void> {
    const key = `${job.region}|${job.input.signalId}`;
    try {
      await this.executions.launch(job.region, job.input, this.now() + START_CALL_MS);
      await this.starts.started(job.region, job.input.signalId);
      this.queued.delete(key);
      if (this.queued.size === 0) for (const done of [...this.idle]) done();
      this.onStart?.('started');
    } catch (err) {
      if (this.closed) return;
      this.onStart?.('retried');
      const wait = Math.min(RETRY_FIRST_MS * 2 ** job.attempt, RETRY_MAX_MS);
      // Every fifth try says so: an outage of minutes is a few lines in the log, not thousands.
      if (job.attempt % 5 === 0) {
        this.logger?.warn(
          { signalId: job.input.signalId, region: job.region, attempt: job.attempt + 1, err: String(err) },
          'signal not started yet; trying again',
        );
      }
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.waiting.push({ ...job, attempt: job.attempt + 1 });
        this.pump();
      }, wait);
      timer.unref();
      this.timers.add(timer);
      // The claim is renewed so that no other ingress takes the record while this one still tries.
      void this.starts.renew(job.region, job.input.signalId, this.now() + wait + START_CLAIM_MS).catch(() => undefined);
    }
  }
}
