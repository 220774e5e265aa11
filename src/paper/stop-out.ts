import type { BridgeClient } from '../bridge/client';
import type { Serial } from '../bridge/serial';
import type { AccountFigures } from '../domain/bridge-protocol';
import type { EquityMarks } from '../risk/equity-marks';
import type { StopOutMark } from '../risk/stop-out';
import { StopOutRunner, type StopOutAccount } from '../risk/stop-out-runner';
import type { PaperBroker } from './broker';
import type { Ledger } from './ledger';
import { equityQuotes } from './risk';

/**
 * The paper bridge's stop-out (docs/risk-sizing.md, "Stop-out"): while the service's answers arm it, a look at the
 * account every second and after each batch of commands, through the terminal's executor; the mark in the state
 * file; closes and cancels on the paper broker, whose operations go to the ledger; the event sent until acknowledged.
 */

export interface PaperStopOutOptions {
  accountId: string;
  broker: PaperBroker;
  ledger: Ledger;
  marks: EquityMarks;
  saved: StopOutMark | undefined;
  /** Saves the terminal's state file (durably when the mark changed). */
  save: (durable: boolean) => void;
  serial: Serial;
  clock: () => number;
  diag: (line: Record<string, unknown>) => void;
  /** How often the watch looks while armed; default 1 000 ms. */
  everyMs?: number;
  afterMark?: () => void;
}

export class PaperStopOut {
  readonly runner: StopOutRunner;
  private timer: NodeJS.Timeout | undefined;
  private client: BridgeClient | undefined;
  private figures: () => AccountFigures = () => {
    throw new Error('not started');
  };
  private looking = false;
  private sending = false;
  private sendError: string | undefined;

  constructor(private readonly opts: PaperStopOutOptions) {
    const { broker, ledger, accountId } = opts;
    const tickets = () => ({ positions: broker.positions().map((p) => p.ticket), orders: broker.orders().map((o) => o.ticket) });
    const account: StopOutAccount = {
      read: () => {
        const { equity, currency } = broker.account();
        const quotes = equityQuotes(broker).map((symbol) => ({ symbol, quotedAtMs: broker.quotedAt(symbol) }));
        return Promise.resolve({ equity, currency, quotes, ...tickets() });
      },
      open: () => Promise.resolve(tickets()),
      close: (ticket) => {
        const run = broker.execute({ action: 'close', positionId: ticket });
        ledger.append(accountId, run.ops);
        const ok = run.result.status === 'done';
        return Promise.resolve({ ticket, result: ok ? 'closed' : 'failed', ...(ok ? {} : { message: String(run.result.message ?? run.result.retcode) }) });
      },
      cancel: (ticket) => {
        const run = broker.execute({ action: 'cancel_pending', orderId: ticket });
        ledger.append(accountId, run.ops);
        const ok = run.result.status === 'done';
        return Promise.resolve({ ticket, result: ok ? 'cancelled' : 'failed', ...(ok ? {} : { message: String(run.result.message ?? run.result.retcode) }) });
      },
    };
    const storage = { save: () => opts.save(true), saveMarks: () => opts.save(false) };
    const diag = (line: Record<string, unknown>) => opts.diag({ ...line, accountId });
    this.runner = new StopOutRunner(account, storage, opts.marks, opts.saved, diag, opts.afterMark);
  }

  /** Finishes a stop-out a restart interrupted, then watches. */
  start(client: BridgeClient, figures: () => AccountFigures): void {
    this.client = client;
    this.figures = figures;
    void this.opts.serial
      .run(() => this.runner.resume())
      .then(() => this.send())
      .catch((err: unknown) => this.opts.diag({ time: this.now(), event: 'stop_out_error', accountId: this.opts.accountId, error: String(err) }));
    this.timer = setInterval(() => void this.tick(), this.opts.everyMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look, from inside the executor (after a batch of commands, or from the timer). */
  async look(): Promise<void> {
    const arming = this.client?.arming;
    if (!arming) return;
    if ((await this.runner.check(arming, this.opts.clock())) === 'tripped') void this.send();
  }

  private async tick(): Promise<void> {
    if (!this.looking) {
      this.looking = true;
      try {
        await this.opts.serial.run(() => this.look());
      } catch (err) {
        this.opts.diag({ time: this.now(), event: 'stop_out_error', accountId: this.opts.accountId, error: String(err) });
      } finally {
        this.looking = false;
      }
    }
    await this.send();
  }

  /** The finished stop-out's event, until the service acknowledges it (the next tick tries again). */
  private async send(): Promise<void> {
    const event = this.runner.pendingEvent();
    if (!event || this.sending || !this.client) return;
    this.sending = true;
    try {
      for (const eventId of await this.client.sendEvents([event], this.figures())) this.runner.acknowledge(eventId);
      this.sendError = undefined;
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      if (message !== this.sendError) this.opts.diag({ time: this.now(), event: 'stop_out_event_retry', accountId: this.opts.accountId, error: message });
      this.sendError = message;
    } finally {
      this.sending = false;
    }
  }

  private now(): string {
    return new Date(this.opts.clock()).toISOString();
  }
}
