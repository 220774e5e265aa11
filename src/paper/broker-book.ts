import { DEFAULT_NAMING, DEFAULT_SYMBOLS, type SymbolNaming, type SymbolSpec } from './instruments';
import { mid, SyntheticFeed, type PriceFeed, type Quote } from './feeds';
import { MT5_NO_CHANGES, Rejected, RETCODES, RISK_MAX_OPEN_POSITIONS, type RejectionKind } from './retcodes';
import { EPS, isMultiple, iso, round2, roundTo, volumeDecimals } from './numbers';
import type {
  BrokerCommand,
  BrokerOp,
  BrokerOptions,
  BrokerState,
  ExecutionResult,
  OpKind,
  OrderGone,
  OrderType,
  PendingOrder,
  Platform,
  Position,
  Side,
} from './broker-types';

/**
 * How many orders that left the book the broker remembers: a stop-out lists at most 500 (the wire's bound), and asks
 * about one within seconds of its listing, so twice that covers every order it can ask about.
 */
export const GONE_ORDERS_KEPT = 1_000;

/**
 * The paper broker's account book: its state (balance, positions, pending orders, ticket counter), the symbol table,
 * the checks a command must pass, the money (margin, profit, conversion) and the state changes every command and the
 * market share. PaperBroker (broker.ts) owns one; the command handlers (broker-positions.ts, broker-pending.ts) act
 * on it.
 */
export class BrokerBook {
  readonly platform: Platform;
  readonly currency = 'USD';
  readonly leverage: number;
  readonly clock: () => number;
  readonly feed: PriceFeed;
  readonly specs = new Map<string, SymbolSpec>();
  private readonly naming: SymbolNaming;
  readonly marketOverride = new Map<string, boolean>();
  state: BrokerState;

  constructor(options: BrokerOptions) {
    this.platform = options.platform;
    this.clock = options.clock ?? Date.now;
    this.feed = options.feed ?? new SyntheticFeed();
    this.leverage = options.leverage ?? 100;
    for (const spec of options.symbols ?? DEFAULT_SYMBOLS) this.specs.set(spec.name.toUpperCase(), { ...spec, name: spec.name.toUpperCase() });
    this.naming = {
      suffixes: options.naming?.suffixes ?? DEFAULT_NAMING.suffixes,
      prefixes: options.naming?.prefixes ?? DEFAULT_NAMING.prefixes,
      aliases: options.naming?.aliases ?? DEFAULT_NAMING.aliases,
    };
    this.state = options.state
      ? structuredClone(options.state)
      : { nextTicket: options.firstTicket ?? 1_000_001, balance: options.balance ?? 100_000, positions: [], orders: [] };
  }

  // ---- inspection --------------------------------------------------------------------------------------------

  /** The table entry a broker symbol names, or undefined. */
  resolveSymbol(name: string): SymbolSpec | undefined {
    const upper = name.toUpperCase();
    const candidates = new Set<string>([upper]);
    const prefixes = ['', ...this.naming.prefixes.map((p) => p.toUpperCase())];
    const suffixes = ['', ...this.naming.suffixes.map((s) => s.toUpperCase())];
    for (const p of prefixes) {
      for (const s of suffixes) {
        if (upper.length > p.length + s.length && upper.startsWith(p) && upper.endsWith(s)) {
          candidates.add(upper.slice(p.length, upper.length - s.length));
        }
      }
    }
    const aliases = new Map(Object.entries(this.naming.aliases).map(([k, v]) => [k.toUpperCase(), v.toUpperCase()]));
    for (const c of candidates) {
      const spec = this.specs.get(aliases.get(c) ?? c);
      if (spec) return spec;
    }
    return undefined;
  }

  account(): { balance: number; equity: number; margin: number; freeMargin: number; currency: string; leverage: number } {
    const equity = round2(this.state.balance + this.state.positions.reduce((sum, p) => sum + this.floating(p), 0));
    const margin = round2(this.usedMargin());
    return { balance: round2(this.state.balance), equity, margin, freeMargin: round2(equity - margin), currency: this.currency, leverage: this.leverage };
  }

  // ---- validation --------------------------------------------------------------------------------------------

  reject(kind: RejectionKind, detail?: string): never {
    const { retcode, message } = RETCODES[kind][this.platform];
    throw new Rejected(retcode, detail ? `${message}: ${detail}` : message);
  }

  noChanges(ticket: string): ExecutionResult {
    return this.platform === 'mt5'
      ? { status: 'done', ticket, retcode: MT5_NO_CHANGES, message: 'No changes' }
      : { status: 'done', ticket, message: 'No changes' };
  }

  requireSymbol(symbol: string | undefined): SymbolSpec {
    if (symbol === undefined) this.reject('invalid_request', 'symbol is required');
    const spec = this.resolveSymbol(symbol);
    if (!spec) this.reject('unknown_symbol', `unknown symbol ${symbol}`);
    return spec;
  }

  /** The owner's position limits, on the account as it is now: all positions, and those in the entry's symbol. */
  guardOpenPositions(cmd: BrokerCommand, symbol: string): void {
    const max = cmd.maxOpenPositions;
    if (typeof max === 'number' && this.state.positions.length >= max) {
      throw new Rejected(RISK_MAX_OPEN_POSITIONS, `the account already has ${this.state.positions.length} open position(s); the maximum is ${max}`);
    }
    const perSymbol = cmd.maxOpenPositionsPerSymbol;
    const inSymbol = this.state.positions.filter((p) => p.symbol === symbol).length;
    if (typeof perSymbol === 'number' && inSymbol >= perSymbol) {
      throw new Rejected(RISK_MAX_OPEN_POSITIONS, `the account already has ${inSymbol} open position(s) in ${symbol}; the maximum per symbol is ${perSymbol}`);
    }
  }

  requireVolume(spec: SymbolSpec, volume: number | undefined): number {
    if (volume === undefined) this.reject('invalid_request', 'volume is required');
    if (!(volume >= spec.minVolume - EPS)) this.reject('bad_volume', `volume ${volume} is below the minimum ${spec.minVolume}`);
    if (volume > spec.maxVolume + EPS) this.reject('bad_volume', `volume ${volume} is above the maximum ${spec.maxVolume}`);
    if (!isMultiple(volume, spec.volumeStep)) this.reject('bad_volume', `volume ${volume} is not a multiple of ${spec.volumeStep}`);
    return roundTo(volume, volumeDecimals(spec));
  }

  requireOpen(spec: SymbolSpec): void {
    if (!this.marketOpen(spec)) this.reject('market_closed', spec.name);
  }

  requirePosition(ticket: string | undefined): Position {
    if (ticket === undefined) this.reject('invalid_request', 'positionId is required');
    const pos = this.state.positions.find((p) => p.ticket === ticket);
    if (!pos) this.reject('position_not_found', `position ${ticket}`);
    return pos;
  }

  requireOrder(ticket: string | undefined): PendingOrder {
    if (ticket === undefined) this.reject('invalid_request', 'orderId is required');
    const order = this.state.orders.find((o) => o.ticket === ticket);
    if (!order) this.reject('order_not_found', `order ${ticket}`);
    return order;
  }

  requireExpiry(expiry: string): string {
    const at = Date.parse(expiry);
    if (!Number.isFinite(at)) this.reject('bad_expiry', `expiry ${expiry} is not a date-time`);
    if (at <= this.clock()) this.reject('bad_expiry', `expiry ${expiry} is not in the future`);
    return iso(at);
  }

  requireMargin(spec: SymbolSpec, volume: number, price: number): void {
    const needed = this.marginFor(spec, volume, price);
    const free = this.freeMargin();
    if (needed > free + EPS) this.reject('no_money', `margin ${round2(needed)} ${this.currency} needed, ${round2(free)} free`);
  }

  /** Pending entry prices must be on the right side of the market: buy_limit below the ask, buy_stop above, etc. */
  checkEntryPrice(spec: SymbolSpec, side: Side, type: OrderType, price: number, trigger: number | null, q: Quote): void {
    const f = (n: number) => n.toFixed(spec.digits);
    if (type === 'limit') {
      if (side === 'buy' && !(price < q.ask)) this.reject('bad_price', `buy limit ${f(price)} must be below the ask ${f(q.ask)}`);
      if (side === 'sell' && !(price > q.bid)) this.reject('bad_price', `sell limit ${f(price)} must be above the bid ${f(q.bid)}`);
    } else if (type === 'stop') {
      if (side === 'buy' && !(price > q.ask)) this.reject('bad_price', `buy stop ${f(price)} must be above the ask ${f(q.ask)}`);
      if (side === 'sell' && !(price < q.bid)) this.reject('bad_price', `sell stop ${f(price)} must be below the bid ${f(q.bid)}`);
    } else {
      const t = trigger!;
      if (side === 'buy' && !(t > q.ask)) this.reject('bad_price', `buy stop-limit trigger ${f(t)} must be above the ask ${f(q.ask)}`);
      if (side === 'sell' && !(t < q.bid)) this.reject('bad_price', `sell stop-limit trigger ${f(t)} must be below the bid ${f(q.bid)}`);
      if (side === 'buy' && price > t) this.reject('bad_price', `buy stop-limit price ${f(price)} must not be above its trigger ${f(t)}`);
      if (side === 'sell' && price < t) this.reject('bad_price', `sell stop-limit price ${f(price)} must not be below its trigger ${f(t)}`);
    }
  }

  /** A buy's SL below the reference and TP above it; a sell's mirrored. The reference is the bid/ask or the entry. */
  checkStops(spec: SymbolSpec, side: Side, ref: number, sl: number | null, tp: number | null, refName: string): void {
    const f = (n: number) => n.toFixed(spec.digits);
    if (side === 'buy') {
      if (sl !== null && !(sl < ref)) this.reject('bad_stops', `sl ${f(sl)} must be below the ${refName} ${f(ref)}`);
      if (tp !== null && !(tp > ref)) this.reject('bad_stops', `tp ${f(tp)} must be above the ${refName} ${f(ref)}`);
    } else {
      if (sl !== null && !(sl > ref)) this.reject('bad_stops', `sl ${f(sl)} must be above the ${refName} ${f(ref)}`);
      if (tp !== null && !(tp < ref)) this.reject('bad_stops', `tp ${f(tp)} must be below the ${refName} ${f(ref)}`);
    }
  }

  /** sl/tp as prices, or slPips/tpPips converted from the given entry (fill price or pending price). */
  stopsFrom(spec: SymbolSpec, side: Side, entry: number, cmd: BrokerCommand): { sl: number | null; tp: number | null } {
    const dir = side === 'buy' ? 1 : -1;
    const sl = cmd.sl !== undefined ? cmd.sl : cmd.slPips !== undefined ? entry - dir * cmd.slPips * spec.pip : undefined;
    const tp = cmd.tp !== undefined ? cmd.tp : cmd.tpPips !== undefined ? entry + dir * cmd.tpPips * spec.pip : undefined;
    return { sl: sl === undefined ? null : roundTo(sl, spec.digits), tp: tp === undefined ? null : roundTo(tp, spec.digits) };
  }

  // ---- money -------------------------------------------------------------------------------------------------

  marketOpen(spec: SymbolSpec): boolean {
    const forced = this.marketOverride.get(spec.name) ?? this.feed.marketOpen?.(spec, this.clock());
    if (forced !== undefined) return forced;
    if (spec.session === 'always') return true;
    const day = new Date(this.clock()).getUTCDay();
    return day !== 0 && day !== 6;
  }

  /** Converts an amount in `currency` to the account currency (USD) with the feed's current quotes. */
  toAccount(amount: number, currency: string): number {
    if (currency === this.currency) return amount;
    const direct = this.specs.get(`${currency}${this.currency}`);
    if (direct) return amount * mid(this.feed.quote(direct, this.clock()));
    const inverse = this.specs.get(`${this.currency}${currency}`);
    if (inverse) return amount / mid(this.feed.quote(inverse, this.clock()));
    throw new Error(`no conversion from ${currency} to ${this.currency}`);
  }

  marginFor(spec: SymbolSpec, volume: number, price: number): number {
    return this.toAccount(volume * spec.contractSize * price, spec.quoteCurrency) / this.leverage;
  }

  usedMargin(): number {
    return this.state.positions.reduce((sum, p) => sum + this.marginFor(this.specOf(p), p.volume, p.openPrice), 0);
  }

  freeMargin(): number {
    return this.account().equity - this.usedMargin();
  }

  floating(pos: Position): number {
    const spec = this.specs.get(pos.canonical);
    if (!spec) return 0;
    const q = this.feed.quote(spec, this.clock());
    return this.profit(spec, pos, pos.side === 'buy' ? q.bid : q.ask, pos.volume);
  }

  profit(spec: SymbolSpec, pos: Position, exit: number, volume: number): number {
    const dir = pos.side === 'buy' ? 1 : -1;
    return this.toAccount(dir * (exit - pos.openPrice) * spec.contractSize * volume, spec.quoteCurrency);
  }

  // ---- mutations ---------------------------------------------------------------------------------------------

  closePosition(pos: Position, volume: number, cause: BrokerOp['cause'], cmd?: BrokerCommand): BrokerOp {
    const spec = this.specOf(pos);
    const q = this.feed.quote(spec, this.clock());
    const exit = pos.side === 'buy' ? q.bid : q.ask;
    const profit = round2(this.profit(spec, pos, exit, volume));
    this.state.balance = round2(this.state.balance + profit);
    const full = volume >= pos.volume - EPS;
    if (full) this.state.positions = this.state.positions.filter((p) => p.ticket !== pos.ticket);
    else pos.volume = roundTo(pos.volume - volume, volumeDecimals(spec));
    const remainingVolume = full ? 0 : pos.volume;
    return { ...this.positionOp(pos, full ? 'close' : 'partial_close', cause, exit, volume, cmd), profit, balance: this.state.balance, remainingVolume };
  }

  /** Takes a pending order off the book and remembers what became of it (bounded: the oldest are forgotten). */
  removeOrder(ticket: string, fate: OrderGone['fate']): void {
    this.state.orders = this.state.orders.filter((o) => o.ticket !== ticket);
    const gone = (this.state.gone ?? []).filter((g) => g.ticket !== ticket);
    gone.push(fate === 'filled' ? { ticket, fate, position: ticket } : { ticket, fate });
    this.state.gone = gone.slice(-GONE_ORDERS_KEPT);
  }

  nextTicket(): string {
    return String(this.state.nextTicket++);
  }

  /** The deal number of the operation being made (what the broker's history would call it). */
  private nextDeal(): number {
    const deal = this.state.nextDeal ?? 1;
    this.state.nextDeal = deal + 1;
    return deal;
  }

  specOf(item: { canonical: string }): SymbolSpec {
    const spec = this.specs.get(item.canonical);
    if (!spec) throw new Error(`symbol ${item.canonical} is not in the symbol table`);
    return spec;
  }

  positionOp(pos: Position, op: OpKind, cause: BrokerOp['cause'], price: number | null, volume: number, cmd?: BrokerCommand): BrokerOp {
    const byCommand = cause === 'command' && cmd !== undefined;
    return {
      time: iso(this.clock()),
      commandId: byCommand ? (cmd.commandId ?? null) : pos.commandId,
      action: byCommand ? cmd.action : pos.action,
      op,
      ticket: pos.ticket,
      symbol: pos.symbol,
      side: pos.side,
      volume,
      price,
      cause,
      sl: pos.sl,
      tp: pos.tp,
      deal: this.nextDeal(),
    };
  }

  orderOp(order: PendingOrder, op: OpKind, cause: BrokerOp['cause'], price: number | null, cmd?: BrokerCommand): BrokerOp {
    const byCommand = cause === 'command' && cmd !== undefined;
    return {
      time: iso(this.clock()),
      commandId: byCommand ? (cmd.commandId ?? null) : order.commandId,
      action: byCommand ? cmd.action : order.action,
      op,
      ticket: order.ticket,
      symbol: order.symbol,
      side: order.side,
      volume: order.volume,
      price: price ?? order.price,
      cause,
      orderType: order.type,
      stopLimitPrice: order.stopLimitPrice,
      sl: order.sl,
      tp: order.tp,
      expiry: order.expiry,
      deal: this.nextDeal(),
    };
  }
}
