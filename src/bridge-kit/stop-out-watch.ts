import type { AccountFigures } from '../domain/bridge-protocol';
import type { StopOutRunner } from '../risk/stop-out-runner';
import type { AccountLink } from './account-link';
import type { Serial } from './serial';

/**
 * When a TypeScript bridge looks for a stop-out (docs/risk-sizing.md, "Stop-out"): while the service's last answer
 * armed it, every second on a timer, after each batch of commands, and on a price event at most once a second;
 * always through the bridge's executor (`serial`), never beside a command. And the finished stop-out's event, sent
 * until the service acknowledges it.
 */

export interface StopOutWatchOptions {
  accountId: string;
  runner: StopOutRunner;
  serial: Serial;
  clock: () => number;
  diag: (line: Record<string, unknown>) => void;
  /** How often the watch looks while armed; default 1 000 ms. */
  everyMs?: number;
}

export class StopOutWatch {
  readonly runner: StopOutRunner;
  private timer: NodeJS.Timeout | undefined;
  private client: AccountLink | undefined;
  private figures: () => Promise<AccountFigures | undefined> = () => Promise.resolve(undefined);
  private looking = false;
  private lookedAt = 0;
  private sending = false;
  private sendError: string | undefined;

  constructor(private readonly opts: StopOutWatchOptions) {
    this.runner = opts.runner;
  }

  /** Finishes a stop-out a restart interrupted, then watches. */
  start(client: AccountLink, figures: () => Promise<AccountFigures | undefined>): void {
    this.client = client;
    this.figures = figures;
    void this.opts.serial
      .run(() => this.runner.resume())
      .then(() => this.send())
      .catch((err: unknown) => this.failed(err));
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
    // A stop-out begun is finished even when the owner turned it off since (its tickets were marked to close).
    if (!arming) return this.runner.mark?.state === 'closing' ? this.runner.resume() : undefined;
    this.lookedAt = this.opts.clock();
    if ((await this.runner.check(arming, this.opts.clock())) === 'tripped') void this.send();
  }

  /** A price moved: look now, unless the last look was less than a second ago (the timer comes soon enough). */
  priceMoved(): void {
    if (this.opts.clock() - this.lookedAt >= 1000) void this.tick();
  }

  private async tick(): Promise<void> {
    if (!this.looking) {
      this.looking = true;
      try {
        await this.opts.serial.run(() => this.look());
      } catch (err) {
        this.failed(err);
      } finally {
        this.looking = false;
      }
    }
    await this.send();
  }

  /** The finished stop-out's event, until the service acknowledges it (the next tick tries again). */
  private async send(): Promise<void> {
    // At most 10 events a call (protocol 1.4); more than one only when an earlier stop-out's was never acknowledged.
    const events = this.runner.pendingEvents().slice(0, 10);
    if (events.length === 0 || this.sending || !this.client) return;
    this.sending = true;
    try {
      for (const eventId of await this.client.sendEvents(events, await this.figures())) this.runner.acknowledge(eventId);
      this.sendError = undefined;
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      if (message !== this.sendError) this.opts.diag({ time: this.now(), event: 'stop_out_event_retry', accountId: this.opts.accountId, error: message });
      this.sendError = message;
    } finally {
      this.sending = false;
    }
  }

  private failed(err: unknown): void {
    this.opts.diag({ time: this.now(), event: 'stop_out_error', accountId: this.opts.accountId, error: (err as Error)?.message ?? String(err) });
  }

  private now(): string {
    return new Date(this.opts.clock()).toISOString();
  }
}
