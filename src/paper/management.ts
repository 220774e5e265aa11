import type { Serial } from '../bridge-kit/serial';
import { entrySide } from '../domain/actions';
import { MANAGEMENT_FIELDS } from '../domain/management';
import { ManagedTrades, type ManagementBroker } from '../bridge-kit/managed-trades';
import { entryRefusal, startManaging, type Intent, type ManagedPosition } from '../bridge-kit/trade-management';
import type { BrokerCommand, BrokerOp, ExecutionResult, ManagementCall, PaperBroker } from './broker';
import type { Ledger } from './ledger';

/**
 * A paper terminal's trade management (protocol 1.6; docs/paper-bridge.md, "Trade management"): the checks before an
 * entry (spread, take-profit level prices, closing the other side), and the shared engine (src/bridge-kit/managed-trades.ts)
 * fed with every quote the terminal sees, carrying out its calls on the paper broker. It is the terminal's ledger too:
 * every operation goes through it, so a fill starts the position's management and a close (its stop, its target, a
 * command, the trader's hand, the stop-out) ends it, whoever made it.
 */

export interface PaperManagementOptions {
  accountId: string;
  broker: PaperBroker;
  /** The management state file (fsynced before each call); undefined: in memory. */
  file?: string;
  /** Where the operations go before the management looks at them (the trade events' outbox, then the ledger). */
  ledger: Ledger;
  /** Whatever touches the broker, one at a time (the terminal's commands and stop-out). */
  serial: Serial;
  /** Saves the broker's state after an operation. */
  save: () => void;
  clock: () => number;
  diag: (line: Record<string, unknown>) => void;
}

/** What the terminal announces in hello: it runs all of the trade management. */
export const MANAGEMENT_FEATURES = ['trailing_stop', 'breakeven_trigger', 'take_profit_levels', 'close_opposite', 'max_spread'] as const;

/** The fields whose pips need the symbol's pip (closeOpposite needs none). */
const PIP_FIELDS = MANAGEMENT_FIELDS.filter((f) => f !== 'closeOpposite');

export class PaperManagement implements Ledger, ManagementBroker {
  readonly trades: ManagedTrades;
  private stepping = false;

  constructor(private readonly opts: PaperManagementOptions) {
    this.trades = new ManagedTrades({ file: opts.file, broker: this, now: opts.clock, diag: opts.diag });
    // After a restart: what was managed, squared with what the broker holds now (no call is made by this).
    this.trades.resumeFrom((ticket) => this.held(ticket));
  }

  /** Records the operations, then starts or ends the management of the positions they opened or closed. */
  append(accountId: string, ops: readonly BrokerOp[]): void {
    this.opts.ledger.append(accountId, ops);
    let changedByCommand = false;
    for (const op of ops) {
      if (op.op === 'open' || op.op === 'trigger') this.start(op.ticket);
      else if (op.op === 'close') this.trades.forget(op.ticket);
      else if ((op.op === 'modify' || op.op === 'partial_close') && this.trades.get(op.ticket) && !isManagements(op)) changedByCommand = true;
    }
    // A command moved the stop or closed a part: the engine goes on from the position as the broker holds it, so that
    // it never moves a stop the trader set back.
    if (changedByCommand) this.trades.resumeFrom((ticket) => this.held(ticket));
  }

  /**
   * Before an entry is placed (after the terminal's risk checks): the spread, the take-profit levels' prices, then the
   * positions on the other side closed when the entry asks for it. A refusal, or undefined to place the entry.
   */
  beforeEntry(cmd: BrokerCommand): ExecutionResult | undefined {
    const side = entrySide(cmd.action);
    if (side === undefined) return undefined;
    const spec = cmd.symbol === undefined ? undefined : this.opts.broker.resolveSymbol(cmd.symbol);
    if (spec === undefined) {
      const field = PIP_FIELDS.find((f) => cmd[f] !== undefined);
      // An unknown symbol without management is the broker's own refusal, as before.
      if (field === undefined) return undefined;
      return {
        status: 'rejected',
        retcode: 'bridge_invalid_command',
        message: `${field} needs the pip of ${cmd.symbol ?? '(no symbol)'}, which this bridge does not know`,
      };
    }
    const quote = this.opts.broker.quote(spec.name)!;
    const refusal = entryRefusal(cmd, side, quote, spec.pip);
    if (refusal) return { status: 'rejected', retcode: refusal.reason, message: refusal.message };
    if (cmd.closeOpposite !== true || (cmd.action !== 'buy' && cmd.action !== 'sell')) return undefined;
    const { closed, failed, ops } = this.opts.broker.closeOpposite(cmd.symbol!, side);
    this.append(this.opts.accountId, ops);
    if (!failed) return undefined;
    return {
      status: 'rejected',
      retcode: 'close_opposite_failed',
      message: `closed ${closed.length > 0 ? closed.join(',') : 'none'}; closing ${failed.ticket} failed: ${failed.message}`,
    };
  }

  /** Every managed symbol's quote as the terminal sees it now (each market tick): the engine takes a step. */
  async onQuotes(): Promise<void> {
    if (this.stepping) return;
    this.stepping = true;
    try {
      for (const symbol of this.trades.symbols()) {
        if (!this.opts.broker.isMarketOpen(symbol)) continue;
        const quote = this.opts.broker.quote(symbol);
        if (quote) await this.trades.onQuote(symbol, quote);
      }
    } catch (err) {
      this.opts.diag({ time: new Date(this.opts.clock()).toISOString(), event: 'management_error', accountId: this.opts.accountId, error: String(err) });
    } finally {
      this.stepping = false;
    }
  }

  moveStop(position: ManagedPosition, intent: Extract<Intent, { kind: 'modify' }>): Promise<'done' | 'failed'> {
    const { sl, tp, cause, trailActiveAt } = intent;
    return this.call(position, intent, { op: 'stop', ticket: position.ticket, sl, tp, cause, ...(trailActiveAt !== undefined ? { trailActiveAt } : {}) });
  }

  closeLevel(position: ManagedPosition, intent: Extract<Intent, { kind: 'partial_close' }>): Promise<'done' | 'failed'> {
    return this.call(position, intent, { op: 'close_level', ticket: position.ticket, volume: intent.volume });
  }

  private call(position: ManagedPosition, intent: Intent, what: ManagementCall): Promise<'done' | 'failed'> {
    return this.opts.serial.run(() => {
      // A command changed the position while this call waited its turn, and the state was squared with the broker:
      // nothing is sent, the next quote decides anew.
      if (this.trades.get(position.ticket)?.pending !== intent) return 'failed';
      const { result, ops } = this.opts.broker.manage(what);
      this.append(this.opts.accountId, ops);
      this.opts.save();
      if (result.status !== 'rejected') return 'done';
      this.opts.diag({
        time: new Date(this.opts.clock()).toISOString(),
        event: 'management_refused',
        accountId: this.opts.accountId,
        ticket: position.ticket,
        kind: intent.kind,
        retcode: result.retcode,
        message: result.message,
      });
      return 'failed';
    });
  }

  /** A position that filled with management asked: managed from its fill on. */
  private start(ticket: string): void {
    if (this.trades.get(ticket)) return;
    const pos = this.opts.broker.positions().find((p) => p.ticket === ticket);
    const spec = pos && this.opts.broker.resolveSymbol(pos.symbol);
    if (!pos?.management || !spec) return;
    const fill = { ticket, symbol: pos.symbol, side: pos.side, openPrice: pos.openPrice, volume: pos.volume, sl: pos.sl, tp: pos.tp };
    const managed = startManaging(pos.management, fill, { pip: spec.pip, digits: spec.digits, volumeStep: spec.volumeStep, volumeMin: spec.minVolume });
    if (managed) this.trades.add(managed);
  }

  private held(ticket: string): { sl: number | null; tp: number | null; volume: number } | null {
    const pos = this.opts.broker.positions().find((p) => p.ticket === ticket);
    return pos ? { sl: pos.sl, tp: pos.tp, volume: pos.volume } : null;
  }
}

function isManagements(op: BrokerOp): boolean {
  return op.cause === 'trailing_stop' || op.cause === 'breakeven_trigger' || op.cause === 'take_profit_level';
}
