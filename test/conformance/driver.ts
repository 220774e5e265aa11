/**
 * The bridge under test: what the conformance suite (suite.ts, docs/bridge-conformance.md) needs of a bridge
 * implementation and of its broker side. A driver starts the real bridge program as its own process for one account,
 * stops or kills it, arms a crash at a precise point, steers the broker side's market (quotes, open or closed) and
 * reads back what the broker side did. Everything else (ingress, worker, Temporal, Redis) is the real service.
 */

export type Platform = 'mt5' | 'ctrader';
type Side = 'buy' | 'sell';

/** An account of the registry the bridge runs for, with its bridge token (give it to the bridge as a trader would). */
export interface ConformanceAccount {
  id: string;
  platform: Platform;
  bridgeToken: string;
}

/**
 * Where a bridge started with `crash` dies, on the first command that reaches its broker side:
 * - `before_fill`: before the broker side executes anything for it (the bridge holds the command, nothing happened);
 * - `after_fill`: after the broker side executed it and before the bridge's report left (the order exists, the
 *   service does not know). The process must end abnormally by itself (SIGKILL, os._exit): no cleanup, no report.
 */
type CrashPoint = 'before_fill' | 'after_fill';

export interface StartOptions {
  crash?: CrashPoint;
}

/** A quote on the broker side (bid ≤ ask), in the symbol's digits. */
export interface Quote {
  bid: number;
  ask: number;
}

/** An open position as the broker side holds it. Tickets are the broker's, as the bridge reports them (decimal strings). */
export interface BrokerPosition {
  ticket: string;
  symbol: string;
  side: Side;
  volume: number;
  openPrice: number;
  sl: number | null;
  tp: number | null;
}

/** A pending order as the broker side holds it. `price` is the entry (the limit price of a stop-limit), `stopLimitPrice` its trigger. */
export interface BrokerOrder {
  ticket: string;
  symbol: string;
  side: Side;
  type: 'limit' | 'stop' | 'stop_limit';
  volume: number;
  price: number;
  stopLimitPrice: number | null;
  sl: number | null;
  tp: number | null;
  /** ISO 8601 UTC, or null for good-till-cancelled. */
  expiry: string | null;
}

/**
 * Every entry the broker side ever accepted for the account, oldest first: a market order that opened a position
 * (`position`, ticket = the position) or a pending order placed (`order`, ticket = the order). What exactly-once counts.
 */
export interface BrokerEntry {
  kind: 'position' | 'order';
  ticket: string;
  symbol: string;
  side: Side;
  volume: number;
}

/** What the broker side shows now, mapped to the shapes above; `native` is the broker's own view (for failure messages). */
export interface BrokerView {
  positions: BrokerPosition[];
  orders: BrokerOrder[];
  entries: BrokerEntry[];
  native: unknown;
}

/** The symbols every broker side must offer, with these specs (the suite's orders are sized and priced for them). */
export interface SymbolSpec {
  name: string;
  digits: number;
  pip: number;
  volumeStep: number;
  volumeMin: number;
  volumeMax: number;
  /** Where the suite puts the market at the start (bid; ask = bid + spread). */
  bid: number;
  spread: number;
}

export const CONFORMANCE_SYMBOLS: readonly SymbolSpec[] = [
  { name: 'EURUSD', digits: 5, pip: 0.0001, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 100, bid: 1.085, spread: 0.0001 },
  { name: 'GBPUSD', digits: 5, pip: 0.0001, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 100, bid: 1.27, spread: 0.00015 },
  { name: 'AUDUSD', digits: 5, pip: 0.0001, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 100, bid: 0.66, spread: 0.00012 },
  { name: 'USDJPY', digits: 3, pip: 0.01, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 100, bid: 150, spread: 0.012 },
  { name: 'XAUUSD', digits: 2, pip: 0.1, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 50, bid: 2350, spread: 0.3 },
  { name: 'US30', digits: 1, pip: 1, volumeStep: 0.1, volumeMin: 0.1, volumeMax: 50, bid: 39_000, spread: 2 },
];

export interface BridgeUnderTest {
  /** Names the suite in test output, e.g. "paper bridge (mt5)". */
  readonly name: string;
  readonly platform: Platform;
  /** The bridgeVersion its hello reports. */
  readonly bridgeVersion: string;
  /** The broker's own refusal codes for what the suite provokes, as the bridge reports them (`retcode`). */
  readonly codes: Record<RefusalKind, number | string>;

  /**
   * Starts the bridge program as its own process for this account against the ingress, with a fresh broker side on
   * first start (a USD account of 100 000, leverage 100, the CONFORMANCE_SYMBOLS) and the same broker side on every
   * later start (the broker and the bridge's own files survive a bridge restart, as on a trader's machine).
   * Resolves once the bridge's hello was answered.
   */
  start(account: ConformanceAccount, ingressUrl: string, options?: StartOptions): Promise<void>;
  /** Graceful stop (SIGTERM); resolves when the process is gone. */
  stop(accountId: string): Promise<void>;
  /** SIGKILL; resolves when the process is gone. */
  kill(accountId: string): Promise<void>;
  /** Resolves when the process ended by itself (after an armed crash); rejects if it is still running after timeoutMs. */
  exited(accountId: string, timeoutMs: number): Promise<void>;
  /** What the broker side holds and did for this account. */
  broker(accountId: string): Promise<BrokerView>;
  /** Moves the broker side's market for this account (takes effect for the next command the bridge executes). */
  setQuote(accountId: string, symbol: string, quote: Quote): Promise<void>;
  setMarketOpen(accountId: string, symbol: string, open: boolean): Promise<void>;
  /**
   * Trade events (protocol 1.5): the trader closes this open position by hand in the terminal, not through the service
   * (a click in MT5 or cTrader; the paper bridge's `--trader FILE`). The bridge must then report it closed with cause
   * `manual`. Resolves once the click is handed to the broker side, not when the close is done. Optional until the
   * bridge sends trade events: the suite's trade-event cases (trade-cases.ts) run only for a driver that has it.
   */
  manualClose?(accountId: string, ticket: string): Promise<void>;
  /**
   * Trade management (protocol 1.6): the bridge runs trailing stops, breakeven triggers, take-profit levels, close
   * opposite and the spread guard. The suite's management cases (management-cases.ts) run only for a driver that says so.
   */
  readonly managesTrades?: boolean;
  /** Stops everything it started and removes its files. */
  cleanup(): Promise<void>;
}

/** The refusals the suite provokes; each broker answers with its own code (docs/bridge-protocol.md, Broker diagnostics). */
export type RefusalKind = 'badStops' | 'badPrice' | 'badVolume' | 'unknownSymbol' | 'noPosition' | 'noOrder' | 'marketClosed' | 'noMoney';

export const MT5_CODES: Record<RefusalKind, number> = {
  badStops: 10016,
  badPrice: 10015,
  badVolume: 10014,
  unknownSymbol: 10013,
  noPosition: 10036,
  noOrder: 4754,
  marketClosed: 10018,
  noMoney: 10019,
};

export const CTRADER_CODES: Record<RefusalKind, string> = {
  badStops: 'TRADING_BAD_STOPS',
  badPrice: 'TRADING_BAD_PRICES',
  badVolume: 'TRADING_BAD_VOLUME',
  unknownSymbol: 'SYMBOL_NOT_FOUND',
  noPosition: 'POSITION_NOT_FOUND',
  noOrder: 'ORDER_NOT_FOUND',
  marketClosed: 'MARKET_CLOSED',
  noMoney: 'NOT_ENOUGH_MONEY',
};
