import type { BridgeCommand } from '../domain/bridge-protocol';
import type { Action } from '../domain/actions';

/**
 * The paper broker: a simulated MT5 / cTrader trading account with real order semantics (docs/paper-bridge.md).
 * Pure: no I/O, no timers. Time comes from an injected clock, prices from an injected feed. `execute` runs one bridge
 * command; `tick` lets the market act (pending triggers, stop-limit triggers, expiries, SL/TP hits). Both return the
 * broker operations they performed, which the terminal writes to the ledger.
 */

export type Platform = 'mt5' | 'ctrader';
export type Side = 'buy' | 'sell';
export type OrderType = 'limit' | 'stop' | 'stop_limit';

// ---------------------------------------------------------------------------------------------------------------
// Symbols

export interface SymbolSpec {
  /** Canonical name (what the feed and the table know), upper case. */
  name: string;
  /** Price decimals. */
  digits: number;
  /** Pip size in price units (slPips/tpPips are multiples of it). */
  pip: number;
  volumeStep: number;
  minVolume: number;
  maxVolume: number;
  /** Units per lot (100 000 for FX, 100 oz for gold, 1 for the index). */
  contractSize: number;
  /** The currency prices are quoted in (profit currency). */
  quoteCurrency: string;
  /** `always`: open around the clock; `weekdays`: closed on Saturday and Sunday (UTC). */
  session: 'always' | 'weekdays';
  /** Centre of the synthetic feed and the default of the manual feed. */
  basePrice: number;
  spreadPips: number;
}

const fx = (name: string, basePrice: number, spreadPips: number, quoteCurrency = 'USD'): SymbolSpec => ({
  name,
  digits: quoteCurrency === 'JPY' ? 3 : 5,
  pip: quoteCurrency === 'JPY' ? 0.01 : 0.0001,
  volumeStep: 0.01,
  minVolume: 0.01,
  maxVolume: 100,
  contractSize: 100_000,
  quoteCurrency,
  session: 'always',
  basePrice,
  spreadPips,
});

export const DEFAULT_SYMBOLS: readonly SymbolSpec[] = [
  fx('EURUSD', 1.085, 1.0),
  fx('GBPUSD', 1.27, 1.5),
  fx('AUDUSD', 0.66, 1.2),
  fx('USDJPY', 150.0, 1.2, 'JPY'),
  {
    name: 'XAUUSD',
    digits: 2,
    pip: 0.1,
    volumeStep: 0.01,
    minVolume: 0.01,
    maxVolume: 50,
    contractSize: 100,
    quoteCurrency: 'USD',
    session: 'always',
    basePrice: 2350,
    spreadPips: 3,
  },
  {
    name: 'US30',
    digits: 1,
    pip: 1,
    volumeStep: 0.1,
    minVolume: 0.1,
    maxVolume: 50,
    contractSize: 1,
    quoteCurrency: 'USD',
    session: 'weekdays',
    basePrice: 39_000,
    spreadPips: 2,
  },
];

/** How broker-side names map to the table: `EURUSD.m`, `EURUSD-pro`, `GOLD` (an alias), `GOLD.m`. Case-insensitive. */
export interface SymbolNaming {
  suffixes: string[];
  prefixes: string[];
  /** Broker name → canonical name. */
  aliases: Record<string, string>;
}

export const DEFAULT_NAMING: SymbolNaming = {
  suffixes: ['.m', '-pro', '.pro', '.raw', 'm', '#'],
  prefixes: [],
  aliases: { GOLD: 'XAUUSD', DJ30: 'US30', WS30: 'US30' },
};

// ---------------------------------------------------------------------------------------------------------------
// Prices

export interface Quote {
  bid: number;
  ask: number;
}

export interface PriceFeed {
  quote(spec: SymbolSpec, nowMs: number): Quote;
  /** A feed that also says when a market is open or closed (undefined: the symbol's session decides). */
  marketOpen?(spec: SymbolSpec, nowMs: number): boolean | undefined;
}

/** The quote at a symbol's base price: bid = base − half the spread, ask = bid + spread. */
export function baselineQuote(spec: SymbolSpec): Quote {
  const spread = spec.spreadPips * spec.pip;
  const bid = roundTo(spec.basePrice - spread / 2, spec.digits);
  return { bid, ask: roundTo(bid + spread, spec.digits) };
}

/**
 * A deterministic, slowly moving feed: a function of time only (every terminal sees the same prices). The mid swings
 * by ±`amplitude` (relative, default 0.06 %) over `periodMs` (default 15 min) plus a smaller faster wave.
 */
export class SyntheticFeed implements PriceFeed {
  private readonly amplitude: number;
  private readonly periodMs: number;

  constructor(options: { amplitude?: number; periodMs?: number } = {}) {
    this.amplitude = options.amplitude ?? 0.0006;
    this.periodMs = options.periodMs ?? 15 * 60_000;
  }

  quote(spec: SymbolSpec, nowMs: number): Quote {
    let phase = 0;
    for (const ch of spec.name) phase = (phase * 31 + ch.charCodeAt(0)) % 6283;
    phase /= 1000;
    const t = (2 * Math.PI * nowMs) / this.periodMs;
    const move = this.amplitude * Math.sin(t + phase) + (this.amplitude / 3) * Math.sin(t * 9.3 + 2 * phase);
    const spread = spec.spreadPips * spec.pip;
    const bid = roundTo(spec.basePrice * (1 + move) - spread / 2, spec.digits);
    return { bid, ask: roundTo(bid + spread, spec.digits) };
  }
}

/** A feed the caller moves by hand (tests). Unset symbols sit at their baseline quote. */
export class ManualFeed implements PriceFeed {
  private readonly quotes = new Map<string, Quote>();

  set(symbol: string, bid: number, ask: number): void {
    if (!(ask >= bid)) throw new Error(`ask ${ask} is below bid ${bid}`);
    this.quotes.set(symbol.toUpperCase(), { bid, ask });
  }

  quote(spec: SymbolSpec): Quote {
    return this.quotes.get(spec.name) ?? baselineQuote(spec);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Rejections

export type RejectionKind =
  | 'invalid_request'
  | 'unknown_symbol'
  | 'bad_volume'
  | 'bad_price'
  | 'bad_stops'
  | 'market_closed'
  | 'no_money'
  | 'bad_expiry'
  | 'position_not_found'
  | 'order_not_found';

/** What a rejection looks like on each platform: MT5 trade-server retcodes, cTrader Open API error codes. */
export const RETCODES: Record<RejectionKind, Record<Platform, { retcode: number | string; message: string }>> = {
  invalid_request: { mt5: { retcode: 10013, message: 'Invalid request' }, ctrader: { retcode: 'INVALID_REQUEST', message: 'Invalid request' } },
  unknown_symbol: { mt5: { retcode: 10013, message: 'Invalid request' }, ctrader: { retcode: 'SYMBOL_NOT_FOUND', message: 'Symbol not found' } },
  bad_volume: { mt5: { retcode: 10014, message: 'Invalid volume' }, ctrader: { retcode: 'TRADING_BAD_VOLUME', message: 'Bad volume' } },
  bad_price: { mt5: { retcode: 10015, message: 'Invalid price' }, ctrader: { retcode: 'TRADING_BAD_PRICES', message: 'Bad prices' } },
  bad_stops: { mt5: { retcode: 10016, message: 'Invalid stops' }, ctrader: { retcode: 'TRADING_BAD_STOPS', message: 'Bad stops' } },
  market_closed: { mt5: { retcode: 10018, message: 'Market is closed' }, ctrader: { retcode: 'MARKET_CLOSED', message: 'Market is closed' } },
  no_money: { mt5: { retcode: 10019, message: 'No money' }, ctrader: { retcode: 'NOT_ENOUGH_MONEY', message: 'Not enough money' } },
  bad_expiry: {
    mt5: { retcode: 10022, message: 'Invalid expiration' },
    ctrader: { retcode: 'TRADING_BAD_EXPIRATION_DATE', message: 'Bad expiration date' },
  },
  position_not_found: {
    mt5: { retcode: 10036, message: "Position doesn't exist" },
    ctrader: { retcode: 'POSITION_NOT_FOUND', message: 'Position not found' },
  },
  order_not_found: { mt5: { retcode: 4754, message: 'Order not found' }, ctrader: { retcode: 'ORDER_NOT_FOUND', message: 'Order not found' } },
};

/** The bridge-side max-open-positions guard; a service reason code, passed through as the outcome's reason. */
export const RISK_MAX_OPEN_POSITIONS = 'risk_max_open_positions';
/** MT5 TRADE_RETCODE_NO_CHANGES: a modify that changes nothing. A success (reported `done`), like MT5 treats it. */
export const MT5_NO_CHANGES = 10025;

class Rejected extends Error {
  constructor(
    readonly retcode: number | string,
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// State, commands, results, operations

export interface Position {
  ticket: string;
  /** The broker symbol as the command named it (e.g. EURUSD.m). */
  symbol: string;
  canonical: string;
  side: Side;
  volume: number;
  openPrice: number;
  openTime: string;
  sl: number | null;
  tp: number | null;
  commandId: string | null;
  action: Action | null;
}

export interface PendingOrder {
  ticket: string;
  symbol: string;
  canonical: string;
  side: Side;
  /** A triggered stop-limit becomes a `limit` with the same ticket. */
  type: OrderType;
  /** Entry price (the limit price of a stop-limit). */
  price: number;
  /** Trigger price of an untriggered stop-limit. */
  stopLimitPrice: number | null;
  volume: number;
  sl: number | null;
  tp: number | null;
  expiry: string | null;
  placedTime: string;
  commandId: string | null;
  action: Action | null;
}

export interface BrokerState {
  nextTicket: number;
  balance: number;
  positions: Position[];
  orders: PendingOrder[];
}

/** A bridge command as the broker needs it; `maxOpenPositions` is the optional bridge-side guard. */
export type BrokerCommand = Partial<Omit<BridgeCommand, 'action'>> & { action: Action; maxOpenPositions?: number };

export interface ExecutionResult {
  /** filled: an entry was accepted (position or pending order); done: a non-opening action ran. */
  status: 'filled' | 'done' | 'rejected';
  ticket?: string | null;
  price?: number | null;
  volume?: number | null;
  retcode?: number | string | null;
  message?: string | null;
}

export type OpKind =
  | 'open' // market order filled: a new position
  | 'place' // pending order placed
  | 'trigger' // pending order filled: a new position (same ticket)
  | 'stop_limit_trigger' // stop-limit reached its trigger: now a limit order (same ticket)
  | 'close' // position closed (by command, SL, TP)
  | 'partial_close'
  | 'modify' // position SL/TP (modify_sl, modify_tp, breakeven)
  | 'modify_order' // pending order price/trigger/SL/TP/expiry
  | 'cancel' // pending order removed (by command, or at trigger for lack of margin)
  | 'expire'; // pending order reached its expiry

export interface BrokerOp {
  time: string;
  /** The command that performed it; for market-driven ops (cause ≠ command), the command that created the ticket. */
  commandId: string | null;
  action: Action | null;
  op: OpKind;
  ticket: string;
  symbol: string;
  side: Side;
  volume: number;
  price: number | null;
  cause: 'command' | 'price' | 'sl' | 'tp' | 'expiry' | 'no_money';
  orderType?: OrderType;
  stopLimitPrice?: number | null;
  sl?: number | null;
  tp?: number | null;
  expiry?: string | null;
  profit?: number;
  balance?: number;
}

export interface BrokerOptions {
  platform: Platform;
  clock?: () => number;
  feed?: PriceFeed;
  symbols?: readonly SymbolSpec[];
  naming?: Partial<SymbolNaming>;
  /** Account currency is USD. Default 100 000. */
  balance?: number;
  /** Default 100 (margin = notional / leverage). */
  leverage?: number;
  /** First ticket number. Default 1000001. */
  firstTicket?: number;
  /** A state from `snapshot()` to continue from (a restarted terminal). */
  state?: BrokerState;
}

const EPS = 1e-9;

// ---------------------------------------------------------------------------------------------------------------

export class PaperBroker {
  readonly platform: Platform;
  readonly currency = 'USD';
  readonly leverage: number;
  private readonly clock: () => number;
  private readonly feed: PriceFeed;
  private readonly specs = new Map<string, SymbolSpec>();
  private readonly naming: SymbolNaming;
  private readonly marketOverride = new Map<string, boolean>();
  private state: BrokerState;

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

  // ---- inspection -----------------------------------------------------------------------------------------------

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

  /** Every symbol this broker trades, as a bridge reports them in hello. */
  symbolSpecs(): SymbolSpec[] {
    return [...this.specs.values()];
  }

  quote(symbol: string): Quote | undefined {
    const spec = this.resolveSymbol(symbol);
    return spec ? this.feed.quote(spec, this.clock()) : undefined;
  }

  /** Force a symbol's market open or closed (tests, `--closed`); undefined returns it to its session schedule. */
  setMarketOpen(symbol: string, open: boolean | undefined): void {
    const spec = this.resolveSymbol(symbol);
    if (!spec) throw new Error(`unknown symbol ${symbol}`);
    if (open === undefined) this.marketOverride.delete(spec.name);
    else this.marketOverride.set(spec.name, open);
  }

  isMarketOpen(symbol: string): boolean {
    const spec = this.resolveSymbol(symbol);
    return spec !== undefined && this.marketOpen(spec);
  }

  positions(): Position[] {
    return structuredClone(this.state.positions);
  }

  orders(): PendingOrder[] {
    return structuredClone(this.state.orders);
  }

  account(): { balance: number; equity: number; margin: number; freeMargin: number; currency: string; leverage: number } {
    const equity = round2(this.state.balance + this.state.positions.reduce((sum, p) => sum + this.floating(p), 0));
    const margin = round2(this.usedMargin());
    return { balance: round2(this.state.balance), equity, margin, freeMargin: round2(equity - margin), currency: this.currency, leverage: this.leverage };
  }

  /** Floating profit of an open position in the account currency. */
  profitOf(ticket: string): number | undefined {
    const pos = this.state.positions.find((p) => p.ticket === ticket);
    return pos ? round2(this.floating(pos)) : undefined;
  }

  snapshot(): BrokerState {
    return structuredClone(this.state);
  }

  // ---- the market -----------------------------------------------------------------------------------------------

  /** Lets the market act up to now: expiries, stop-limit triggers, pending fills, SL/TP hits. */
  tick(): BrokerOp[] {
    const ops: BrokerOp[] = [];
    const now = this.clock();
    for (const order of [...this.state.orders]) {
      const spec = this.specs.get(order.canonical);
      if (!spec) continue;
      if (order.expiry !== null && now >= Date.parse(order.expiry)) {
        this.removeOrder(order.ticket);
        ops.push(this.orderOp(order, 'expire', 'expiry', null));
        continue;
      }
      if (!this.marketOpen(spec)) continue;
      const q = this.feed.quote(spec, now);
      if (order.type === 'stop_limit') {
        const trigger = order.stopLimitPrice ?? order.price;
        if (!(order.side === 'buy' ? q.ask >= trigger - EPS : q.bid <= trigger + EPS)) continue;
        order.type = 'limit';
        order.stopLimitPrice = null;
        ops.push(this.orderOp(order, 'stop_limit_trigger', 'price', order.side === 'buy' ? q.ask : q.bid));
      }
      if (!fillable(order, q)) continue;
      const fill = order.side === 'buy' ? q.ask : q.bid;
      this.removeOrder(order.ticket);
      if (this.marginFor(spec, order.volume, fill) > this.freeMargin() + EPS) {
        ops.push(this.orderOp(order, 'cancel', 'no_money', fill));
        continue;
      }
      const pos: Position = {
        ticket: order.ticket,
        symbol: order.symbol,
        canonical: order.canonical,
        side: order.side,
        volume: order.volume,
        openPrice: fill,
        openTime: iso(now),
        sl: order.sl,
        tp: order.tp,
        commandId: order.commandId,
        action: order.action,
      };
      this.state.positions.push(pos);
      ops.push({ ...this.positionOp(pos, 'trigger', 'price', fill, pos.volume), orderType: order.type });
    }
    for (const pos of [...this.state.positions]) {
      const spec = this.specs.get(pos.canonical);
      if (!spec || !this.marketOpen(spec)) continue;
      const q = this.feed.quote(spec, now);
      const exit = pos.side === 'buy' ? q.bid : q.ask;
      const dir = pos.side === 'buy' ? 1 : -1;
      if (pos.sl !== null && dir * (exit - pos.sl) <= EPS) ops.push(this.closePosition(pos, pos.volume, 'sl'));
      else if (pos.tp !== null && dir * (exit - pos.tp) >= -EPS) ops.push(this.closePosition(pos, pos.volume, 'tp'));
    }
    return ops;
  }

  // ---- commands -------------------------------------------------------------------------------------------------

  /** Runs one command: first the market catches up to now (tick), then the command. Never throws for a broker refusal. */
  execute(command: BrokerCommand): { result: ExecutionResult; ops: BrokerOp[] } {
    const ops = this.tick();
    try {
      const result = this.run(command, ops);
      return { result, ops };
    } catch (err) {
      if (err instanceof Rejected) return { result: { status: 'rejected', retcode: err.retcode, message: err.message }, ops };
      throw err;
    }
  }

  private run(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    switch (cmd.action) {
      case 'buy':
      case 'sell':
        return this.marketEntry(cmd, cmd.action, ops);
      case 'buy_limit':
      case 'sell_limit':
        return this.pendingEntry(cmd, cmd.action === 'buy_limit' ? 'buy' : 'sell', 'limit', ops);
      case 'buy_stop':
      case 'sell_stop':
        return this.pendingEntry(cmd, cmd.action === 'buy_stop' ? 'buy' : 'sell', 'stop', ops);
      case 'buy_stop_limit':
      case 'sell_stop_limit':
        return this.pendingEntry(cmd, cmd.action === 'buy_stop_limit' ? 'buy' : 'sell', 'stop_limit', ops);
      case 'close':
        return cmd.positionId !== undefined ? this.closeOne(cmd, ops) : this.closeFiltered(cmd, ops);
      case 'close_all':
        return this.closeAll(cmd, ops);
      case 'partial_close':
        return this.partialClose(cmd, ops);
      case 'cancel_pending':
        return this.cancelPending(cmd, ops);
      case 'modify_sl':
        return this.modifyPosition(cmd, 'sl', ops);
      case 'modify_tp':
        return this.modifyPosition(cmd, 'tp', ops);
      case 'breakeven':
        return this.breakeven(cmd, ops);
      case 'modify_pending':
        return this.modifyPending(cmd, ops);
      case 'modify_pending_expiry':
        if (cmd.expiry === undefined) this.reject('invalid_request', 'expiry is required');
        return this.modifyPending({ action: cmd.action, commandId: cmd.commandId, orderId: cmd.orderId, expiry: cmd.expiry }, ops);
    }
  }

  private marketEntry(cmd: BrokerCommand, side: Side, ops: BrokerOp[]): ExecutionResult {
    const spec = this.requireSymbol(cmd.symbol);
    this.guardOpenPositions(cmd);
    const volume = this.requireVolume(spec, cmd.volume);
    this.requireOpen(spec);
    const q = this.feed.quote(spec, this.clock());
    const fill = side === 'buy' ? q.ask : q.bid;
    const { sl, tp } = this.stopsFrom(spec, side, fill, cmd);
    // A position closes at the other side of the quote: a buy's SL must be below the bid, its TP above, and mirrored.
    this.checkStops(spec, side, side === 'buy' ? q.bid : q.ask, sl, tp, side === 'buy' ? 'bid' : 'ask');
    this.requireMargin(spec, volume, fill);
    const pos: Position = {
      ticket: this.nextTicket(),
      symbol: cmd.symbol!,
      canonical: spec.name,
      side,
      volume,
      openPrice: fill,
      openTime: iso(this.clock()),
      sl,
      tp,
      commandId: cmd.commandId ?? null,
      action: cmd.action,
    };
    this.state.positions.push(pos);
    ops.push(this.positionOp(pos, 'open', 'command', fill, volume));
    return { status: 'filled', ticket: pos.ticket, price: fill, volume };
  }

  private pendingEntry(cmd: BrokerCommand, side: Side, type: OrderType, ops: BrokerOp[]): ExecutionResult {
    const spec = this.requireSymbol(cmd.symbol);
    this.guardOpenPositions(cmd);
    const volume = this.requireVolume(spec, cmd.volume);
    this.requireOpen(spec);
    if (cmd.price === undefined) this.reject('invalid_request', 'price is required');
    if (type === 'stop_limit' && cmd.stopLimitPrice === undefined) this.reject('invalid_request', 'stopLimitPrice is required');
    const price = roundTo(cmd.price, spec.digits);
    const trigger = type === 'stop_limit' ? roundTo(cmd.stopLimitPrice!, spec.digits) : null;
    const q = this.feed.quote(spec, this.clock());
    this.checkEntryPrice(spec, side, type, price, trigger, q);
    const { sl, tp } = this.stopsFrom(spec, side, price, cmd);
    this.checkStops(spec, side, price, sl, tp, 'entry');
    const expiry = cmd.expiry === undefined ? null : this.requireExpiry(cmd.expiry);
    this.requireMargin(spec, volume, price);
    const order: PendingOrder = {
      ticket: this.nextTicket(),
      symbol: cmd.symbol!,
      canonical: spec.name,
      side,
      type,
      price,
      stopLimitPrice: trigger,
      volume,
      sl,
      tp,
      expiry,
      placedTime: iso(this.clock()),
      commandId: cmd.commandId ?? null,
      action: cmd.action,
    };
    this.state.orders.push(order);
    ops.push(this.orderOp(order, 'place', 'command', price));
    return { status: 'filled', ticket: order.ticket, price, volume };
  }

  private closeOne(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    const pos = this.requirePosition(cmd.positionId);
    this.requireOpen(this.specOf(pos));
    const op = this.closePosition(pos, pos.volume, 'command', cmd);
    ops.push(op);
    return { status: 'done', ticket: pos.ticket, price: op.price, volume: op.volume };
  }

  /** close with a filter: every open position matching symbol, side and pnl (profit > 0, loss < 0). */
  private closeFiltered(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    const spec = cmd.symbol === undefined ? undefined : this.requireSymbol(cmd.symbol);
    const matching = this.state.positions.filter((p) => {
      if (spec && p.canonical !== spec.name) return false;
      if (cmd.side && p.side !== cmd.side) return false;
      if (cmd.pnl === 'profit' && !(this.floating(p) > 0)) return false;
      if (cmd.pnl === 'loss' && !(this.floating(p) < 0)) return false;
      return true;
    });
    return this.closeMany(cmd, matching, [], ops);
  }

  /** close_all: every open position and every pending order ("close everything"). */
  private closeAll(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    return this.closeMany(cmd, [...this.state.positions], [...this.state.orders], ops);
  }

  /** Closes what it can; a symbol whose market is closed is skipped. Rejected only if everything was skipped. */
  private closeMany(cmd: BrokerCommand, positions: Position[], orders: PendingOrder[], ops: BrokerOp[]): ExecutionResult {
    if (positions.length === 0 && orders.length === 0) return { status: 'done', ticket: null, message: 'nothing to close' };
    const closed: string[] = [];
    const cancelled: string[] = [];
    const skipped = new Set<string>();
    for (const pos of positions) {
      const spec = this.specOf(pos);
      if (!this.marketOpen(spec)) {
        skipped.add(spec.name);
        continue;
      }
      ops.push(this.closePosition(pos, pos.volume, 'command', cmd));
      closed.push(pos.ticket);
    }
    for (const order of orders) {
      const spec = this.specOf(order);
      if (!this.marketOpen(spec)) {
        skipped.add(spec.name);
        continue;
      }
      this.removeOrder(order.ticket);
      ops.push(this.orderOp(order, 'cancel', 'command', null, cmd));
      cancelled.push(order.ticket);
    }
    if (closed.length === 0 && cancelled.length === 0) this.reject('market_closed', [...skipped].join(', '));
    const parts = [`closed ${closed.length} position(s)${closed.length ? ` ${closed.join(',')}` : ''}`];
    if (orders.length > 0) parts.push(`cancelled ${cancelled.length} order(s)${cancelled.length ? ` ${cancelled.join(',')}` : ''}`);
    if (skipped.size > 0) parts.push(`market closed: ${[...skipped].join(', ')}`);
    const only = closed.length + cancelled.length === 1 ? (closed[0] ?? cancelled[0])! : null;
    return { status: 'done', ticket: only, message: parts.join('; ') };
  }

  private partialClose(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    const pos = this.requirePosition(cmd.positionId);
    const spec = this.specOf(pos);
    if (cmd.partialVolume === undefined) this.reject('invalid_request', 'partialVolume is required');
    const wanted = cmd.partialVolume;
    if (!(wanted > 0) || !isMultiple(wanted, spec.volumeStep)) {
      this.reject('bad_volume', `partialVolume ${wanted} is not a multiple of ${spec.volumeStep}`);
    }
    this.requireOpen(spec);
    if (wanted >= pos.volume - EPS) {
      const op = this.closePosition(pos, pos.volume, 'command', cmd);
      ops.push(op);
      return { status: 'done', ticket: pos.ticket, price: op.price, volume: op.volume, message: 'closed in full' };
    }
    const volume = roundTo(wanted, volumeDecimals(spec));
    const remaining = roundTo(pos.volume - volume, volumeDecimals(spec));
    if (volume < spec.minVolume - EPS) this.reject('bad_volume', `partialVolume ${volume} is below the minimum ${spec.minVolume}`);
    if (remaining < spec.minVolume - EPS) this.reject('bad_volume', `the remaining ${remaining} would be below the minimum ${spec.minVolume}`);
    const op = this.closePosition(pos, volume, 'command', cmd);
    ops.push(op);
    return { status: 'done', ticket: pos.ticket, price: op.price, volume };
  }

  private cancelPending(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    const order = this.requireOrder(cmd.orderId);
    this.requireOpen(this.specOf(order));
    this.removeOrder(order.ticket);
    ops.push(this.orderOp(order, 'cancel', 'command', null, cmd));
    return { status: 'done', ticket: order.ticket };
  }

  private modifyPosition(cmd: BrokerCommand, which: 'sl' | 'tp', ops: BrokerOp[]): ExecutionResult {
    const pos = this.requirePosition(cmd.positionId);
    const spec = this.specOf(pos);
    const value = cmd[which];
    if (value === undefined) this.reject('invalid_request', `${which} is required`);
    return this.setPositionStops(
      cmd,
      pos,
      spec,
      which === 'sl' ? roundTo(value, spec.digits) : pos.sl,
      which === 'tp' ? roundTo(value, spec.digits) : pos.tp,
      ops,
    );
  }

  /** SL to the entry price. MT5-like: refused (invalid stops) unless the entry is already beyond the closing price. */
  private breakeven(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    const pos = this.requirePosition(cmd.positionId);
    return this.setPositionStops(cmd, pos, this.specOf(pos), pos.openPrice, pos.tp, ops);
  }

  private setPositionStops(cmd: BrokerCommand, pos: Position, spec: SymbolSpec, sl: number | null, tp: number | null, ops: BrokerOp[]): ExecutionResult {
    this.requireOpen(spec);
    const q = this.feed.quote(spec, this.clock());
    this.checkStops(spec, pos.side, pos.side === 'buy' ? q.bid : q.ask, sl, tp, pos.side === 'buy' ? 'bid' : 'ask');
    if (sl === pos.sl && tp === pos.tp) return this.noChanges(pos.ticket);
    pos.sl = sl;
    pos.tp = tp;
    ops.push({ ...this.positionOp(pos, 'modify', 'command', null, pos.volume, cmd), sl, tp });
    return { status: 'done', ticket: pos.ticket };
  }

  private modifyPending(cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
    const order = this.requireOrder(cmd.orderId);
    const spec = this.specOf(order);
    const given = (['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'] as const).filter((f) => cmd[f] !== undefined);
    if (given.length === 0) this.reject('invalid_request', 'nothing to modify');
    if (cmd.stopLimitPrice !== undefined && order.type !== 'stop_limit') {
      this.reject('invalid_request', `order ${order.ticket} is a ${order.type} order, it has no stop-limit trigger`);
    }
    this.requireOpen(spec);
    const price = cmd.price !== undefined ? roundTo(cmd.price, spec.digits) : order.price;
    const trigger = cmd.stopLimitPrice !== undefined ? roundTo(cmd.stopLimitPrice, spec.digits) : order.stopLimitPrice;
    const sl = cmd.sl !== undefined ? roundTo(cmd.sl, spec.digits) : order.sl;
    const tp = cmd.tp !== undefined ? roundTo(cmd.tp, spec.digits) : order.tp;
    const expiry = cmd.expiry !== undefined ? this.requireExpiry(cmd.expiry) : order.expiry;
    if (price !== order.price || trigger !== order.stopLimitPrice) {
      this.checkEntryPrice(spec, order.side, order.type, price, trigger, this.feed.quote(spec, this.clock()));
    }
    this.checkStops(spec, order.side, price, sl, tp, 'entry');
    if (price === order.price && trigger === order.stopLimitPrice && sl === order.sl && tp === order.tp && expiry === order.expiry) {
      return this.noChanges(order.ticket);
    }
    Object.assign(order, { price, stopLimitPrice: trigger, sl, tp, expiry });
    ops.push(this.orderOp(order, 'modify_order', 'command', price, cmd));
    return { status: 'done', ticket: order.ticket };
  }

  // ---- validation -----------------------------------------------------------------------------------------------

  private reject(kind: RejectionKind, detail?: string): never {
    const { retcode, message } = RETCODES[kind][this.platform];
    throw new Rejected(retcode, detail ? `${message}: ${detail}` : message);
  }

  private noChanges(ticket: string): ExecutionResult {
    return this.platform === 'mt5'
      ? { status: 'done', ticket, retcode: MT5_NO_CHANGES, message: 'No changes' }
      : { status: 'done', ticket, message: 'No changes' };
  }

  private requireSymbol(symbol: string | undefined): SymbolSpec {
    if (symbol === undefined) this.reject('invalid_request', 'symbol is required');
    const spec = this.resolveSymbol(symbol);
    if (!spec) this.reject('unknown_symbol', `unknown symbol ${symbol}`);
    return spec;
  }

  private guardOpenPositions(cmd: BrokerCommand): void {
    const max = cmd.maxOpenPositions;
    if (typeof max !== 'number' || this.state.positions.length < max) return;
    throw new Rejected(RISK_MAX_OPEN_POSITIONS, `the account already has ${this.state.positions.length} open position(s); the maximum is ${max}`);
  }

  private requireVolume(spec: SymbolSpec, volume: number | undefined): number {
    if (volume === undefined) this.reject('invalid_request', 'volume is required');
    if (!(volume >= spec.minVolume - EPS)) this.reject('bad_volume', `volume ${volume} is below the minimum ${spec.minVolume}`);
    if (volume > spec.maxVolume + EPS) this.reject('bad_volume', `volume ${volume} is above the maximum ${spec.maxVolume}`);
    if (!isMultiple(volume, spec.volumeStep)) this.reject('bad_volume', `volume ${volume} is not a multiple of ${spec.volumeStep}`);
    return roundTo(volume, volumeDecimals(spec));
  }

  private requireOpen(spec: SymbolSpec): void {
    if (!this.marketOpen(spec)) this.reject('market_closed', spec.name);
  }

  private requirePosition(ticket: string | undefined): Position {
    if (ticket === undefined) this.reject('invalid_request', 'positionId is required');
    const pos = this.state.positions.find((p) => p.ticket === ticket);
    if (!pos) this.reject('position_not_found', `position ${ticket}`);
    return pos;
  }

  private requireOrder(ticket: string | undefined): PendingOrder {
    if (ticket === undefined) this.reject('invalid_request', 'orderId is required');
    const order = this.state.orders.find((o) => o.ticket === ticket);
    if (!order) this.reject('order_not_found', `order ${ticket}`);
    return order;
  }

  private requireExpiry(expiry: string): string {
    const at = Date.parse(expiry);
    if (!Number.isFinite(at)) this.reject('bad_expiry', `expiry ${expiry} is not a date-time`);
    if (at <= this.clock()) this.reject('bad_expiry', `expiry ${expiry} is not in the future`);
    return iso(at);
  }

  private requireMargin(spec: SymbolSpec, volume: number, price: number): void {
    const needed = this.marginFor(spec, volume, price);
    const free = this.freeMargin();
    if (needed > free + EPS) this.reject('no_money', `margin ${round2(needed)} ${this.currency} needed, ${round2(free)} free`);
  }

  /** Pending entry prices must be on the right side of the market: buy_limit below the ask, buy_stop above, etc. */
  private checkEntryPrice(spec: SymbolSpec, side: Side, type: OrderType, price: number, trigger: number | null, q: Quote): void {
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
  private checkStops(spec: SymbolSpec, side: Side, ref: number, sl: number | null, tp: number | null, refName: string): void {
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
  private stopsFrom(spec: SymbolSpec, side: Side, entry: number, cmd: BrokerCommand): { sl: number | null; tp: number | null } {
    const dir = side === 'buy' ? 1 : -1;
    const sl = cmd.sl !== undefined ? cmd.sl : cmd.slPips !== undefined ? entry - dir * cmd.slPips * spec.pip : undefined;
    const tp = cmd.tp !== undefined ? cmd.tp : cmd.tpPips !== undefined ? entry + dir * cmd.tpPips * spec.pip : undefined;
    return { sl: sl === undefined ? null : roundTo(sl, spec.digits), tp: tp === undefined ? null : roundTo(tp, spec.digits) };
  }

  // ---- money ----------------------------------------------------------------------------------------------------

  private marketOpen(spec: SymbolSpec): boolean {
    const forced = this.marketOverride.get(spec.name) ?? this.feed.marketOpen?.(spec, this.clock());
    if (forced !== undefined) return forced;
    if (spec.session === 'always') return true;
    const day = new Date(this.clock()).getUTCDay();
    return day !== 0 && day !== 6;
  }

  /** Converts an amount in `currency` to the account currency (USD) with the feed's current quotes. */
  /** An amount in `currency` as the account's currency, at the feed's current rate (what sizing by risk needs). */
  valueInAccount(amount: number, currency: string): number {
    return this.toAccount(amount, currency);
  }

  private toAccount(amount: number, currency: string): number {
    if (currency === this.currency) return amount;
    const direct = this.specs.get(`${currency}${this.currency}`);
    if (direct) return amount * mid(this.feed.quote(direct, this.clock()));
    const inverse = this.specs.get(`${this.currency}${currency}`);
    if (inverse) return amount / mid(this.feed.quote(inverse, this.clock()));
    throw new Error(`no conversion from ${currency} to ${this.currency}`);
  }

  private marginFor(spec: SymbolSpec, volume: number, price: number): number {
    return this.toAccount(volume * spec.contractSize * price, spec.quoteCurrency) / this.leverage;
  }

  private usedMargin(): number {
    return this.state.positions.reduce((sum, p) => sum + this.marginFor(this.specOf(p), p.volume, p.openPrice), 0);
  }

  private freeMargin(): number {
    return this.account().equity - this.usedMargin();
  }

  private floating(pos: Position): number {
    const spec = this.specs.get(pos.canonical);
    if (!spec) return 0;
    const q = this.feed.quote(spec, this.clock());
    return this.profit(spec, pos, pos.side === 'buy' ? q.bid : q.ask, pos.volume);
  }

  private profit(spec: SymbolSpec, pos: Position, exit: number, volume: number): number {
    const dir = pos.side === 'buy' ? 1 : -1;
    return this.toAccount(dir * (exit - pos.openPrice) * spec.contractSize * volume, spec.quoteCurrency);
  }

  // ---- mutations ------------------------------------------------------------------------------------------------

  private closePosition(pos: Position, volume: number, cause: BrokerOp['cause'], cmd?: BrokerCommand): BrokerOp {
    const spec = this.specOf(pos);
    const q = this.feed.quote(spec, this.clock());
    const exit = pos.side === 'buy' ? q.bid : q.ask;
    const profit = round2(this.profit(spec, pos, exit, volume));
    this.state.balance = round2(this.state.balance + profit);
    const full = volume >= pos.volume - EPS;
    if (full) this.state.positions = this.state.positions.filter((p) => p.ticket !== pos.ticket);
    else pos.volume = roundTo(pos.volume - volume, volumeDecimals(spec));
    return { ...this.positionOp(pos, full ? 'close' : 'partial_close', cause, exit, volume, cmd), profit, balance: this.state.balance };
  }

  private removeOrder(ticket: string): void {
    this.state.orders = this.state.orders.filter((o) => o.ticket !== ticket);
  }

  private nextTicket(): string {
    return String(this.state.nextTicket++);
  }

  private specOf(item: { canonical: string }): SymbolSpec {
    const spec = this.specs.get(item.canonical);
    if (!spec) throw new Error(`symbol ${item.canonical} is not in the symbol table`);
    return spec;
  }

  private positionOp(pos: Position, op: OpKind, cause: BrokerOp['cause'], price: number | null, volume: number, cmd?: BrokerCommand): BrokerOp {
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
    };
  }

  private orderOp(order: PendingOrder, op: OpKind, cause: BrokerOp['cause'], price: number | null, cmd?: BrokerCommand): BrokerOp {
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
    };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// helpers

function fillable(order: PendingOrder, q: Quote): boolean {
  if (order.type === 'limit') return order.side === 'buy' ? q.ask <= order.price + EPS : q.bid >= order.price - EPS;
  if (order.type === 'stop') return order.side === 'buy' ? q.ask >= order.price - EPS : q.bid <= order.price + EPS;
  return false;
}

export function roundTo(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f + (value >= 0 ? 1e-9 : -1e-9)) / f;
}

function round2(value: number): number {
  return roundTo(value, 2);
}

function mid(q: Quote): number {
  return (q.bid + q.ask) / 2;
}

function volumeDecimals(spec: SymbolSpec): number {
  return Math.max(0, Math.ceil(-Math.log10(spec.volumeStep) - 1e-9));
}

function isMultiple(value: number, step: number): boolean {
  const n = value / step;
  return Math.abs(n - Math.round(n)) < 1e-6;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
