import type { EquityMarks } from './equity-marks';
import type { QuoteTime } from './figures-age';
import { markStands, stopOutEventOf, watchStopOut, type StopOutArming, type StopOutMark, type TicketResult } from './stop-out';

/**
 * The stop-out as a bridge carries it out (docs/risk-sizing.md, "Stop-out"), over what the bridge knows of its own
 * broker: look, and when the rule trips, write the mark durably, then close every listed position and cancel every
 * listed order, then mark it done; after a restart in `closing`, finish the listed tickets still open and nothing
 * else. The caller runs `check` and `resume` through its one-command-at-a-time executor, never beside a command.
 */

export interface StopOutAccount {
  /** Equity now, the quotes behind it, and what is open (tickets as the bridge reports them). */
  read(): Promise<{ equity: number; currency: string; quotes: QuoteTime[]; positions: string[]; orders: string[] }>;
  /** What is still open (after a restart). */
  open(): Promise<{ positions: string[]; orders: string[] }>;
  /** Closes the whole position at market. */
  close(ticket: string): Promise<TicketResult<'closed'>>;
  cancel(ticket: string): Promise<TicketResult<'cancelled'>>;
}

export interface StopOutStorage {
  /** Writes the mark durably (temporary file, fsync, rename) with the equity marks. */
  save(mark: StopOutMark): void;
  /** Saves the equity marks after the watch raised the peak. */
  saveMarks(): void;
}

export class StopOutRunner {
  private staleSaid = false;

  constructor(
    private readonly account: StopOutAccount,
    private readonly storage: StopOutStorage,
    private readonly marks: EquityMarks,
    public mark: StopOutMark | undefined,
    private readonly diag: (line: Record<string, unknown>) => void,
    /** Fault injection for the restart tests: called once the mark is on disk, before anything is closed. */
    private readonly afterMark?: () => void,
  ) {}

  /** One look while armed; closes everything when the rule trips. */
  async check(arming: StopOutArming, nowMs: number): Promise<'tripped' | 'watching' | 'stale' | 'stopped_out'> {
    // A close whose answer was lost left the mark closing: finish it from what the broker holds now.
    if (this.mark?.state === 'closing') await this.resume();
    if (markStands(this.mark, arming.drawdownResetAt)) return 'stopped_out';
    const seen = await this.account.read();
    const peakBefore = this.marks.state().peak;
    const decision = watchStopOut({ arming, mark: this.mark, marks: this.marks, equity: seen.equity, quotes: seen.quotes, nowMs });
    if (decision.kind === 'stale') {
      if (!this.staleSaid) this.diag({ time: new Date(nowMs).toISOString(), event: 'stop_out_figures_stale', message: decision.message });
      this.staleSaid = true;
      return 'stale';
    }
    this.staleSaid = false;
    if (decision.kind === 'stopped_out') return 'stopped_out';
    if (decision.kind === 'holding') {
      if (this.marks.state().peak !== peakBefore) this.storage.saveMarks();
      return 'watching';
    }
    const mark: StopOutMark = {
      resetAt: arming.drawdownResetAt,
      trippedAt: new Date(nowMs).toISOString(),
      equity: seen.equity,
      peak: decision.peak,
      currency: seen.currency,
      maxDrawdownPercent: arming.maxDrawdownPercent,
      positions: seen.positions,
      orders: seen.orders,
      state: 'closing',
      closed: [],
      cancelled: [],
      acknowledged: false,
    };
    this.mark = mark;
    this.storage.save(mark);
    this.diag({
      time: mark.trippedAt,
      event: 'stop_out',
      equity: mark.equity,
      peak: mark.peak,
      drawdownPercent: decision.drawdownPercent,
      positions: mark.positions.length,
      orders: mark.orders.length,
    });
    this.afterMark?.();
    await this.finish(mark, new Set(mark.positions), new Set(mark.orders));
    return 'tripped';
  }

  /** After a restart (or a lost answer): a mark left `closing` has its listed tickets still open closed, nothing else. */
  async resume(): Promise<void> {
    const mark = this.mark;
    if (mark?.state !== 'closing') return;
    const open = await this.account.open();
    this.diag({ time: new Date().toISOString(), event: 'stop_out_resumed', trippedAt: mark.trippedAt });
    await this.finish(mark, new Set(open.positions), new Set(open.orders));
  }

  /** The event to send until the service acknowledges it. */
  pendingEvent(): ReturnType<typeof stopOutEventOf> | undefined {
    return this.mark?.state === 'done' && !this.mark.acknowledged ? stopOutEventOf(this.mark) : undefined;
  }

  acknowledge(eventId: string): void {
    if (!this.mark || stopOutEventOf(this.mark).eventId !== eventId) return;
    this.mark.acknowledged = true;
    this.storage.save(this.mark);
  }

  /** Closes and cancels the mark's tickets (those in `open`; a ticket already settled in the mark is not run again). */
  private async finish(mark: StopOutMark, open: Set<string>, pending: Set<string>): Promise<void> {
    const closedDone = new Set(mark.closed.map((t) => t.ticket));
    for (const ticket of mark.positions) {
      if (closedDone.has(ticket)) continue;
      mark.closed.push(open.has(ticket) ? await this.account.close(ticket) : { ticket, result: 'closed', message: 'no longer open' });
      this.storage.save(mark);
    }
    const cancelledDone = new Set(mark.cancelled.map((t) => t.ticket));
    for (const ticket of mark.orders) {
      if (cancelledDone.has(ticket)) continue;
      mark.cancelled.push(pending.has(ticket) ? await this.account.cancel(ticket) : { ticket, result: 'cancelled', message: 'no longer pending' });
      this.storage.save(mark);
    }
    mark.state = 'done';
    this.storage.save(mark);
  }
}
