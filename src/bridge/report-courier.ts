import type { Logger } from 'pino';
import type { BridgeReport } from '../domain/bridge-protocol';
import type { ReportDelivery, SignalExecutions } from '../signals/executions';

export interface CourierSettings {
  /** Deliveries in flight at once, across every reports call of this ingress. */
  concurrency: number;
  /** Background deliveries waiting for a slot; past it a delivery is left to the workflow's own look (below). */
  maxQueued: number;
  /** How long a background delivery that failed (Temporal unreachable or overloaded) is tried again. */
  retryForMs: number;
}

export const COURIER_DEFAULTS: CourierSettings = { concurrency: 16, maxQueued: 10_000, retryForMs: 60_000 };

interface Job {
  region: string;
  report: BridgeReport;
  /** Background jobs only: retried until then. */
  retryUntil?: number;
  attempt: number;
  settle?: { resolve(d: ReportDelivery): void; reject(err: unknown): void };
}

/**
 * Hands bridges' reports to their account workflows, a bounded number at once, so that a reports call answers as soon
 * as Redis holds its reports and never waits on Temporal (issue 25, finding 3: one report after another, each waiting
 * up to 2 s for its Update, made a call take 8 to 16 s under load).
 *
 * A background delivery is an optimisation, not the guarantee: a report is answered once recorded in Redis, and a
 * workflow that has not been handed its report reads it there itself (workflows/account.ts, `recordedReport`), so a
 * delivery lost to a dead ingress, a full queue or a long Temporal outage costs time, never the outcome.
 * Deliveries are idempotent (update id = commandId): one queued twice is harmless, and a queued one is not queued again.
 */
export class ReportCourier {
  /** A bridge waits on these (in the order they came), ahead of the background ones. */
  private readonly urgent: Job[] = [];
  private readonly waiting: Job[] = [];
  private readonly queued = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly idle = new Set<() => void>();
  private running = 0;
  private closed = false;

  constructor(
    private readonly executions: Pick<SignalExecutions, 'deliverReport'>,
    private readonly settings: CourierSettings = COURIER_DEFAULTS,
    private readonly logger?: Logger,
  ) {}

  /** Delivers now (ahead of the background ones) and answers with Temporal's word; one attempt, its failure thrown. */
  deliver(region: string, report: BridgeReport): Promise<ReportDelivery> {
    return new Promise((resolve, reject) => {
      this.urgent.push({ region, report, attempt: 0, settle: { resolve, reject } });
      this.pump();
    });
  }

  /** Delivers in the background; false when it was not taken (the queue is full, or the ingress is stopping). */
  post(region: string, report: BridgeReport): boolean {
    if (this.queued.has(report.commandId)) return true;
    if (this.closed || this.queued.size >= this.settings.maxQueued) {
      this.logger?.warn({ commandId: report.commandId }, 'report delivery not queued: the workflow will read it from Redis');
      return false;
    }
    this.queued.add(report.commandId);
    this.waiting.push({ region, report, attempt: 0, retryUntil: Date.now() + this.settings.retryForMs });
    this.pump();
    return true;
  }

  /** Background deliveries queued or in flight (for tests and operators). */
  get backlog(): number {
    return this.queued.size;
  }

  /** Resolves once no background delivery is queued or in flight, or after `ms`, whichever comes first. */
  async drain(ms: number): Promise<void> {
    if (this.queued.size === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      const idle = this.idle;
      function done() {
        clearTimeout(timer);
        idle.delete(done);
        resolve();
      }
      idle.add(done);
    });
  }

  /** Stops taking and retrying background deliveries; the workflows read what is left from Redis. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const job of [...this.urgent.splice(0), ...this.waiting.splice(0)]) job.settle?.reject(new Error('the ingress is stopping'));
    this.queued.clear();
    for (const done of [...this.idle]) done();
  }

  private finished(commandId: string): void {
    this.queued.delete(commandId);
    if (this.queued.size === 0) for (const done of [...this.idle]) done();
  }

  private pump(): void {
    while (this.running < this.settings.concurrency && this.urgent.length + this.waiting.length > 0) {
      const job = (this.urgent.shift() ?? this.waiting.shift())!;
      this.running++;
      void this.run(job).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async run(job: Job): Promise<void> {
    try {
      const delivery = await this.executions.deliverReport(job.region, job.report);
      if (job.settle) job.settle.resolve(delivery);
      else this.finished(job.report.commandId);
    } catch (err) {
      if (job.settle) {
        job.settle.reject(err);
        return;
      }
      if (this.closed || Date.now() >= job.retryUntil!) {
        this.finished(job.report.commandId);
        this.logger?.warn({ commandId: job.report.commandId, err: String(err) }, 'report delivery given up: the workflow will read it from Redis');
        return;
      }
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          this.waiting.push({ ...job, attempt: job.attempt + 1 });
          this.pump();
        },
        Math.min(250 * 2 ** job.attempt, 5_000),
      );
      timer.unref();
      this.timers.add(timer);
    }
  }
}
