import type { BrokerCommand, BrokerOp, Side, BrokerOptions, BrokerState, ExecutionResult, OrderGone, PendingOrder, Platform, Position } from './broker-types';
import type { SymbolSpec } from './instruments';
import type { Quote } from './feeds';
import { Rejected } from './retcodes';
import { round2 } from './numbers';
import { BrokerBook } from './broker-book';
import { breakeven, closeAll, closeFiltered, closeOne, hitStops, marketEntry, modifyPosition, partialClose } from './broker-positions';
import { closeOpposite, managedClose, managedStop } from './broker-management';
import type { StopCause } from '../bridge-kit/trade-management';
import { cancelPending, modifyPending, pendingEntry, triggerPending } from './broker-pending';

/**
 * The paper broker: a simulated MT5 / cTrader trading account with real order semantics (docs/paper-bridge.md).
 * Pure: no I/O, no timers. Time comes from an injected clock, prices from an injected feed. `execute` runs one bridge
 * command; `tick` lets the market act (pending triggers, stop-limit triggers, expiries, SL/TP hits). Both return the
 * broker operations they performed, which the terminal writes to the ledger.
 */

// The broker's vocabulary lives in files of its own (instruments.ts, feeds.ts, retcodes.ts, broker-types.ts);
// importers know it by this module.
export * from './broker-types';
export * from './instruments';
export * from './feeds';
export { RISK_MAX_OPEN_POSITIONS } from './retcodes';
export type ManagementCall =
  | { op: 'stop'; ticket: string; sl: number; tp: number | null; cause: StopCause; trailActiveAt?: number }
  | { op: 'close_level'; ticket: string; volume: number };

export class PaperBroker {
  readonly platform: Platform;
  readonly currency = 'USD';
  readonly leverage: number;
  private readonly book: BrokerBook;

  constructor(options: BrokerOptions) {
    this.book = new BrokerBook(options);
    this.platform = this.book.platform;
    this.leverage = this.book.leverage;
  }

  // ---- inspection -----------------------------------------------------------------------------------------------

  /** The table entry a broker symbol names, or undefined. */
  resolveSymbol(name: string): SymbolSpec | undefined {
    return this.book.resolveSymbol(name);
  }

  /** Every symbol this broker trades, as a bridge reports them in hello. */
  symbolSpecs(): SymbolSpec[] {
    return [...this.book.specs.values()];
  }

  quote(symbol: string): Quote | undefined {
    const spec = this.resolveSymbol(symbol);
    return spec ? this.book.feed.quote(spec, this.book.clock()) : undefined;
  }

  /** When the feed last quoted a symbol (undefined: a live price, or one at its baseline). */
  quotedAt(symbol: string): number | undefined {
    const spec = this.resolveSymbol(symbol);
    return spec ? this.book.feed.quotedAt?.(spec) : undefined;
  }

  /** The symbol whose price converts `currency` to the account's (undefined: the account's own, or none). */
  conversionSymbol(currency: string): string | undefined {
    if (currency === this.currency) return undefined;
    return this.book.specs.get(`${currency}${this.currency}`)?.name ?? this.book.specs.get(`${this.currency}${currency}`)?.name;
  }

  /** Force a symbol's market open or closed (tests, `--closed`); undefined returns it to its session schedule. */
  setMarketOpen(symbol: string, open: boolean | undefined): void {
    const spec = this.resolveSymbol(symbol);
    if (!spec) throw new Error(`unknown symbol ${symbol}`);
    if (open === undefined) this.book.marketOverride.delete(spec.name);
    else this.book.marketOverride.set(spec.name, open);
  }

  isMarketOpen(symbol: string): boolean {
    const spec = this.resolveSymbol(symbol);
    return spec !== undefined && this.book.marketOpen(spec);
  }

  positions(): Position[] {
    return structuredClone(this.book.state.positions);
  }

  orders(): PendingOrder[] {
    return structuredClone(this.book.state.orders);
  }

  account(): { balance: number; equity: number; margin: number; freeMargin: number; currency: string; leverage: number } {
    return this.book.account();
  }

  /** What became of an order that left the book (undefined: still pending, never placed, or long forgotten). */
  orderGone(ticket: string): OrderGone | undefined {
    const gone = this.book.state.gone?.find((g) => g.ticket === ticket);
    return gone ? { ...gone } : undefined;
  }

  /** An amount in `currency` as the account's currency, at the feed's current rate (what sizing by risk needs). */
  valueInAccount(amount: number, currency: string): number {
    return this.book.toAccount(amount, currency);
  }

  /** Floating profit of an open position in the account currency. */
  profitOf(ticket: string): number | undefined {
    const pos = this.book.state.positions.find((p) => p.ticket === ticket);
    return pos ? round2(this.book.floating(pos)) : undefined;
  }

  snapshot(): BrokerState {
    return structuredClone(this.book.state);
  }

  // ---- the market -----------------------------------------------------------------------------------------------

  /** Lets the market act up to now: expiries, stop-limit triggers, pending fills, SL/TP hits. */
  tick(): BrokerOp[] {
    const ops: BrokerOp[] = [];
    const now = this.book.clock();
    triggerPending(this.book, now, ops);
    hitStops(this.book, now, ops);
    return ops;
  }

  // ---- the trader at the terminal ------------------------------------------------------------------------------

  /**
   * The trader closes a position (or cancels a pending order) by hand in the terminal: no command, cause `manual`.
   * Refused like a command would be (unknown ticket, market closed).
   */
  byHand(what: { op: 'close' | 'cancel'; ticket: string }): { result: ExecutionResult; ops: BrokerOp[] } {
    return this.act((ops) => {
      if (what.op === 'close') {
        const pos = this.book.requirePosition(what.ticket);
        this.book.requireOpen(this.book.specOf(pos));
        const op = this.book.closePosition(pos, pos.volume, 'manual');
        ops.push(op);
        return { status: 'done', ticket: pos.ticket, price: op.price, volume: op.volume };
      }
      const order = this.book.requireOrder(what.ticket);
      this.book.requireOpen(this.book.specOf(order));
      this.book.removeOrder(order.ticket, 'cancelled');
      ops.push(this.book.orderOp(order, 'cancel', 'manual', null));
      return { status: 'done', ticket: order.ticket };
    });
  }

  // ---- trade management (protocol 1.6) ---------------------------------------------------------------------------

  /** The terminal's trade management moves a position's stop or closes a take-profit level's share. */
  manage(what: ManagementCall): { result: ExecutionResult; ops: BrokerOp[] } {
    return this.act((ops) =>
      what.op === 'stop'
        ? managedStop(this.book, what.ticket, what.sl, what.tp, what.cause, what.trailActiveAt, ops)
        : managedClose(this.book, what.ticket, what.volume, ops),
    );
  }

  /** An entry's closeOpposite: the symbol's positions on the other side closed, one by one, before the entry. */
  closeOpposite(symbol: string, side: Side): { closed: string[]; failed?: { ticket: string; message: string }; ops: BrokerOp[] } {
    const ops = this.tick();
    return { ...closeOpposite(this.book, symbol, side, ops), ops };
  }

  // ---- commands -------------------------------------------------------------------------------------------------

  /** Runs one command: first the market catches up to now (tick), then the command. Never throws for a broker refusal. */
  execute(command: BrokerCommand): { result: ExecutionResult; ops: BrokerOp[] } {
    return this.act((ops) => this.run(command, ops));
  }

  /** The market first catches up to now, then the operation; a broker refusal is a result, never a throw. */
  private act(operation: (ops: BrokerOp[]) => ExecutionResult): { result: ExecutionResult; ops: BrokerOp[] } {
    const ops = this.tick();
    try {
      return { result: operation(ops), ops };
    } catch (err) {
      if (err instanceof Rejected) return { result: { status: 'rejected', retcode: err.retcode, message: err.message }, ops };
      throw err;
    }
  }

  private run(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    switch (cmd.action) {
      case 'buy':
      case 'sell':
        return marketEntry(this.book, cmd, cmd.action, ops);
      case 'buy_limit':
      case 'sell_limit':
        return pendingEntry(this.book, cmd, cmd.action === 'buy_limit' ? 'buy' : 'sell', 'limit', ops);
      case 'buy_stop':
      case 'sell_stop':
        return pendingEntry(this.book, cmd, cmd.action === 'buy_stop' ? 'buy' : 'sell', 'stop', ops);
      case 'buy_stop_limit':
      case 'sell_stop_limit':
        return pendingEntry(this.book, cmd, cmd.action === 'buy_stop_limit' ? 'buy' : 'sell', 'stop_limit', ops);
      case 'close':
        return cmd.positionId !== undefined ? closeOne(this.book, cmd, ops) : closeFiltered(this.book, cmd, ops);
      case 'close_all':
        return closeAll(this.book, cmd, ops);
      case 'partial_close':
        return partialClose(this.book, cmd, ops);
      case 'cancel_pending':
        return cancelPending(this.book, cmd, ops);
      case 'modify_sl':
        return modifyPosition(this.book, cmd, 'sl', ops);
      case 'modify_tp':
        return modifyPosition(this.book, cmd, 'tp', ops);
      case 'breakeven':
        return breakeven(this.book, cmd, ops);
      case 'modify_pending':
        return modifyPending(this.book, cmd, ops);
      case 'modify_pending_expiry':
        if (cmd.expiry === undefined) this.book.reject('invalid_request', 'expiry is required');
        return modifyPending(this.book, { action: cmd.action, commandId: cmd.commandId, orderId: cmd.orderId, expiry: cmd.expiry }, ops);
    }
  }
}
