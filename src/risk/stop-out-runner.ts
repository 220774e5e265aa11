import type { EquityMarks } from './equity-marks';
import type { QuoteTime } from './figures-age';
import { markStands, stopOutEventOf, watchStopOut, type StopOutArming, type StopOutEventBody, type StopOutMark, type TicketResult } from './stop-out';

/**
 * The stop-out as a bridge carries it out (docs/risk-sizing.md, "Stop-out"), over what the bridge knows of its own
 * broker: look, and when the rule trips, write the mark durably, then close every listed position and cancel every
 * listed order, then mark it done; after a restart in `closing`, finish the listed tickets still open and nothing
 * else. The caller runs `check` and `resume` through its one-command-at-a-time executor, never beside a command.
 */

/** One close or cancel as the broker answered it; `transient`: refused for a reason that may pass in a moment. */
export type Attempt<R extends string> = TicketResult<R> & { transient?: boolean };

/** A transient refusal is tried again this many times in all, with a pause growing by this much before each. */
export const STOP_OUT_ATTEMPTS = 3;
export const STOP_OUT_BACKOFF_MS = 250;

/**
 * What became of an order no longer pending, from the broker's order history: `unknown` when the history does not
 * have it (`detail` says what the bridge saw). A pending order that vanished may have filled, so it is reported
 * `cancelled` only when the history says cancelled or expired (as the MT5 bridge does).
 */
export type OrderFate = { state: 'cancelled' } | { state: 'expired' } | { state: 'filled'; position?: string } | { state: 'unknown'; detail: string };

export interface StopOutAccount {
  /** Equity now, the quotes behind it, and what is open (tickets as the bridge reports them). */
  read(): Promise<{ equity: number; currency: string; quotes: QuoteTime[]; positions: string[]; orders: string[] }>;
  /** What is still open (after a restart). */
  open(): Promise<{ positions: string[]; orders: string[] }>;
  /** Closes the whole position at market. */
  close(ticket: string): Promise<Attempt<'closed'>>;
  cancel(ticket: string): Promise<Attempt<'cancelled'>>;
  /** What became of a listed order that is no longer pending. A bridge without it has every such order `failed`. */
  orderFate?(ticket: string): Promise<OrderFate>;
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
    /** The pause between attempts of a transiently refused ticket (a test's clock may stand in). */
    private readonly pause: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
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
    const unsent = this.pendingEvents();
    if (unsent.length > 0) mark.unsent = unsent;
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

  /** The events to send until the service acknowledges them: earlier stop-outs' first, then this one once done. */
  pendingEvents(): StopOutEventBody[] {
    const mark = this.mark;
    if (!mark) return [];
    return [...(mark.unsent ?? []), ...(mark.state === 'done' && !mark.acknowledged ? [stopOutEventOf(mark)] : [])];
  }

  acknowledge(eventId: string): void {
    const mark = this.mark;
    if (!mark) return;
    const unsent = mark.unsent?.filter((e) => e.eventId !== eventId);
    const current = mark.state === 'done' && !mark.acknowledged && stopOutEventOf(mark).eventId === eventId;
    if (!current && unsent?.length === mark.unsent?.length) return;
    if (current) mark.acknowledged = true;
    if (unsent && unsent.length > 0) mark.unsent = unsent;
    else delete mark.unsent;
    this.storage.save(mark);
  }

  /**
   * Cancels and closes the mark's tickets (those in `open`; a ticket already settled in the mark is not run again).
   * Pending orders first: one that fills while the positions close would open a position the stop-out never listed.
   */
  private async finish(mark: StopOutMark, open: Set<string>, pending: Set<string>): Promise<void> {
    await this.settleAll(
      mark,
      mark.orders,
      mark.cancelled,
      pending,
      'cancelled',
      (t) => this.account.cancel(t),
      (o) => o.orders,
    );
    await this.settleAll(
      mark,
      mark.positions,
      mark.closed,
      open,
      'closed',
      (t) => this.account.close(t),
      (o) => o.positions,
    );
    mark.state = 'done';
    this.storage.save(mark);
  }

  /** The listed tickets without a result yet, one by one, each result saved in the mark before the next. */
  private async settleAll<R extends 'closed' | 'cancelled'>(
    mark: StopOutMark,
    listed: string[],
    results: TicketResult<R>[],
    stillOpen: Set<string>,
    done: R,
    send: (ticket: string) => Promise<Attempt<R>>,
    openOf: (open: { positions: string[]; orders: string[] }) => string[],
  ): Promise<void> {
    const settled = new Set(results.map((t) => t.ticket));
    for (const ticket of listed) {
      if (settled.has(ticket)) continue;
      results.push(stillOpen.has(ticket) ? await this.settle(ticket, done, () => send(ticket), openOf) : await this.gone(ticket, done));
      this.storage.save(mark);
    }
  }

  /**
   * A listed ticket no longer open. A position closed on its own (its SL, the broker) counts as closed. An order counts
   * as cancelled only when the broker's history says cancelled or expired: one that filled is `failed`, and its
   * position, not listed, is left alone (the MT5 bridge's rule: docs/risk-sizing.md, "Stop-out").
   */
  private async gone<R extends 'closed' | 'cancelled'>(ticket: string, done: R, refusal?: string): Promise<TicketResult<R>> {
    if (done === 'closed') return { ticket, result: done, message: refusal === undefined ? 'no longer open' : `no longer open (${refusal})` };
    const fate: OrderFate = this.account.orderFate
      ? await this.account.orderFate(ticket)
      : { state: 'unknown', detail: 'this bridge cannot read its order history' };
    if (fate.state === 'cancelled' || fate.state === 'expired')
      return { ticket, result: done, message: `not pending any more when the stop-out reached it (${fate.state})` };
    const what = fate.state === 'filled' ? `filled${fate.position !== undefined ? `, position ${fate.position}` : ''}` : fate.detail;
    return { ticket, result: 'failed', message: `not pending any more and not cancelled (${what})${refusal === undefined ? '' : `; ${refusal}`}` };
  }

  /**
   * One ticket, tried again after a transient refusal (requote, no prices, timeout: nothing was executed) up to
   * STOP_OUT_ATTEMPTS in all, looking first whether it is still open: a ticket gone meanwhile is not sent again.
   */
  private async settle<R extends 'closed' | 'cancelled'>(
    ticket: string,
    done: R,
    send: () => Promise<Attempt<R>>,
    listed: (open: { positions: string[]; orders: string[] }) => string[],
  ): Promise<TicketResult<R>> {
    for (let attempt = 1; ; attempt++) {
      const { transient, ...result } = await send();
      if (result.result !== 'failed') return result;
      // A ticket gone meanwhile is refused "not found": what became of it decides (a position closed on its own is
      // closed all the same; an order is cancelled only if the broker's history says so, never when it filled).
      if (transient !== true && !listed(await this.account.open()).includes(ticket)) return this.gone(ticket, done, result.message ?? 'refused');
      if (transient !== true) return result;
      if (attempt >= STOP_OUT_ATTEMPTS) return { ...result, message: `${result.message ?? 'refused'} (after ${attempt} attempts)` };
      this.diag({ time: new Date().toISOString(), event: 'stop_out_retry', ticket, attempt, message: result.message });
      await this.pause(STOP_OUT_BACKOFF_MS * attempt);
      if (!listed(await this.account.open()).includes(ticket)) return this.gone(ticket, done);
    }
  }
}
