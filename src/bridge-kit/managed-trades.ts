import fs from 'node:fs';
import { writeFileWhole } from './durable-file';
import { onQuote, resume, settle, type BrokerPosition, type Intent, type ManagedPosition, type Quote } from './trade-management';

/**
 * A bridge's managed positions (protocol 1.6; docs/trade-management.md): the pure engine's state for every open
 * position that asked for management, kept in one file written whole and fsynced before each broker call, so that a
 * restart finds what was in flight and squares it with the broker (trade-management.ts `resume`). The paper terminal
 * and the cTrader connector run it; the MT5 bridge runs its Python port.
 */

/** What the bridge's broker side does for management. Each call says whether the broker did it. */
export interface ManagementBroker {
  /** Moves the position's stop (the take profit kept as given). */
  moveStop(position: ManagedPosition, intent: Extract<Intent, { kind: 'modify' }>): Promise<'done' | 'failed'>;
  /** Closes `intent.volume` lots of the position (all of it when `intent.closesPosition`). */
  closeLevel(position: ManagedPosition, intent: Extract<Intent, { kind: 'partial_close' }>): Promise<'done' | 'failed'>;
}

export interface ManagedTradesOptions {
  /** Undefined: kept in memory only (a paper bridge without files); a restart then starts with nothing managed. */
  file?: string;
  broker: ManagementBroker;
  now?: () => number;
  /** A diagnostic line (never a secret): a refused call, a state file that could not be read. */
  diag?: (event: Record<string, unknown>) => void;
}

interface StateFile {
  version: 1;
  positions: ManagedPosition[];
}

export class ManagedTrades {
  private readonly positions = new Map<string, ManagedPosition>();
  private readonly now: () => number;

  constructor(private readonly opts: ManagedTradesOptions) {
    this.now = opts.now ?? Date.now;
    for (const p of this.read()) this.positions.set(p.ticket, p);
  }

  /** Tickets whose state was read back and not yet squared with the broker (after a restart). */
  tickets(): string[] {
    return [...this.positions.keys()];
  }

  get(ticket: string): ManagedPosition | undefined {
    return this.positions.get(ticket);
  }

  symbols(): string[] {
    return [...new Set([...this.positions.values()].map((p) => p.symbol))];
  }

  /** Starts managing a position that just filled; written down before the fill's report leaves. */
  add(position: ManagedPosition): void {
    this.positions.set(position.ticket, position);
    this.write();
  }

  /** The position is gone (closed by its stop, its target, a command or by hand): its management ends. */
  forget(ticket: string): void {
    if (this.positions.delete(ticket)) this.write();
  }

  /**
   * After a restart or a gap: each saved position squared with what the broker holds now (`held` answers null for a
   * position the broker no longer has). Makes no broker call.
   */
  resumeFrom(held: (ticket: string) => BrokerPosition | null): void {
    for (const [ticket, saved] of [...this.positions]) {
      const now = resume(saved, held(ticket));
      if (now === null) this.positions.delete(ticket);
      else this.positions.set(ticket, now);
    }
    this.write();
  }

  /** A new quote of `symbol`: every managed position of it takes a step, and what the engine asks is carried out. */
  async onQuote(symbol: string, quote: Quote): Promise<void> {
    const steps = [...this.positions.values()].filter((p) => p.symbol === symbol && p.pending === null);
    await Promise.all(steps.map((p) => this.step(p, quote)));
  }

  private async step(current: ManagedPosition, quote: Quote): Promise<void> {
    const { position, intent } = onQuote(current, quote, this.now());
    this.positions.set(position.ticket, position);
    if (!intent) return;
    // Written before the call: a restart must know a call may have been made.
    this.write();
    let result: 'done' | 'failed';
    try {
      result = intent.kind === 'modify' ? await this.opts.broker.moveStop(position, intent) : await this.opts.broker.closeLevel(position, intent);
    } catch (err) {
      result = 'failed';
      this.opts.diag?.({
        event: 'management_call_failed',
        ticket: position.ticket,
        kind: intent.kind,
        error: err instanceof Error ? err.message : String(err),
      });
    }
    if (result === 'failed') this.opts.diag?.({ event: 'management_call_refused', ticket: position.ticket, kind: intent.kind });
    // forget() may have run meanwhile (the position closed by its stop while the call was in flight).
    if (!this.positions.has(position.ticket)) return;
    const after = settle(this.positions.get(position.ticket)!, result, this.now());
    if (after === null) this.positions.delete(position.ticket);
    else this.positions.set(position.ticket, after);
    this.write();
  }

  private read(): ManagedPosition[] {
    if (this.opts.file === undefined) return [];
    let text: string;
    try {
      text = fs.readFileSync(this.opts.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const parsed = JSON.parse(text) as StateFile;
    // A file of another version is not guessed at: the bridge refuses to start rather than manage on a wrong state.
    if (parsed.version !== 1 || !Array.isArray(parsed.positions)) throw new Error(`unreadable management state in ${this.opts.file}`);
    return parsed.positions;
  }

  private write(): void {
    if (this.opts.file === undefined) return;
    const state: StateFile = { version: 1, positions: [...this.positions.values()] };
    writeFileWhole(this.opts.file, JSON.stringify(state), { durable: true });
  }
}
