import fs from 'node:fs';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { REPO_ROOT } from '../../support/infra';
import { ServiceProcess } from '../../support/processes';
import { CONFORMANCE_SYMBOLS, MT5_CODES, type BridgeUnderTest, type BrokerOrder, type BrokerView, type ConformanceAccount, type StartOptions } from './driver';
import { ProcessPerAccountDriver, type SteeredMarket } from './process-driver';

/**
 * The MT5 bridge (bridges/mt5, `python3 -m es_mt5_bridge`) under the conformance suite, with the `MetaTrader5` test
 * double (bridges/mt5/tests/double) first on its PYTHONPATH in place of the Windows-only package. Per account: one
 * bridge process, one directory holding the double's trade server (`server.json`, written by the double), its market
 * (`market.json`, written here) and the bridge's journal; all of it survives bridge restarts.
 */

export const MT5_BRIDGE_DIR = path.join(REPO_ROOT, 'bridges', 'mt5');
/** The bridge's version (bridges/mt5/src/es_mt5_bridge/__init__.py), which its hello reports. */
export const MT5_BRIDGE_VERSION = /__version__ = "(\d+\.\d+\.\d+)"/.exec(
  fs.readFileSync(path.join(MT5_BRIDGE_DIR, 'src', 'es_mt5_bridge', '__init__.py'), 'utf8'),
)![1]!;
/** The double's trade server runs two hours ahead of UTC, as many brokers' servers do. */
const SERVER_UTC_OFFSET_S = 7200;

/** A symbol as the double's trade server is configured (its SymbolInfo is built from it). */
const doubleSymbols = CONFORMANCE_SYMBOLS.map((s) => ({
  name: s.name,
  digits: s.digits,
  volume_step: s.volumeStep,
  volume_min: s.volumeMin,
  volume_max: s.volumeMax,
  bid: s.bid,
  spread: s.spread,
  contract_size: s.name === 'XAUUSD' ? 100 : s.name === 'US30' ? 1 : 100_000,
  currency_base: s.name === 'XAUUSD' ? 'XAU' : s.name === 'US30' ? 'USD' : s.name.slice(0, 3),
  currency_profit: s.name.slice(-3) === 'JPY' ? 'JPY' : 'USD',
  // SYMBOL_CALC_MODE_FOREX (0) or SYMBOL_CALC_MODE_CFDLEVERAGE (4)
  calc_mode: s.name === 'XAUUSD' || s.name === 'US30' ? 4 : 0,
  // SYMBOL_FILLING_FOK | SYMBOL_FILLING_IOC; SYMBOL_EXPIRATION_GTC | DAY | SPECIFIED | SPECIFIED_DAY
  filling_mode: 3,
  expiration_mode: 15,
}));

interface Market extends SteeredMarket {
  symbols: typeof doubleSymbols;
  server_utc_offset: number;
  balance: number;
  leverage: number;
  login: number;
  algo_trading: boolean;
  /** What the trader (or the broker) does in the terminal, applied once each by the double's trade server (_moves.py). */
  terminal_ops: TerminalOp[];
}

/** A click in the terminal: a close by hand (or the broker's own stop-out, reason `so`), a pending order deleted by hand. */
type TerminalClick = { op: 'close'; ticket: number; volume?: number; reason?: 'client' | 'mobile' | 'web' | 'so' } | { op: 'cancel'; ticket: number };
type TerminalOp = TerminalClick & { id: string };

interface ServerOrder {
  ticket: number;
  type: number;
  state: number;
  position_id: number;
  volume_initial: number;
  price_open: number;
  price_stoplimit: number;
  sl: number;
  tp: number;
  time_expiration: number;
  symbol: string;
}

interface ServerState {
  positions: { ticket: number; type: number; volume: number; price_open: number; sl: number; tp: number; symbol: string }[];
  orders: ServerOrder[];
  history_orders: ServerOrder[];
}

const ORDER_TYPES: Record<number, Pick<BrokerOrder, 'side' | 'type'>> = {
  2: { side: 'buy', type: 'limit' },
  3: { side: 'sell', type: 'limit' },
  4: { side: 'buy', type: 'stop' },
  5: { side: 'sell', type: 'stop' },
  6: { side: 'buy', type: 'stop_limit' },
  7: { side: 'sell', type: 'stop_limit' },
};

const level = (v: number) => (v === 0 ? null : v);

/** A fresh trade server for the double (its market.json): the conformance symbols, 100,000 USD, algo trading on. */
export function mt5DoubleMarket(): Market {
  return {
    symbols: doubleSymbols,
    quotes: {},
    closed: [],
    server_utc_offset: SERVER_UTC_OFFSET_S,
    balance: 100_000,
    leverage: 100,
    login: randomInt(5_000_000, 9_000_000),
    algo_trading: true,
    terminal_ops: [],
  };
}

export class Mt5BridgeDriver extends ProcessPerAccountDriver<Market> implements BridgeUnderTest {
  readonly name = 'MT5 bridge (Python) on the MetaTrader5 double';
  readonly platform = 'mt5' as const;
  readonly bridgeVersion = MT5_BRIDGE_VERSION;
  readonly codes = MT5_CODES;
  // Trade management (protocol 1.6): the bridge runs it from 3.6.0 (docs/mt5-bridge.md "Trade management").
  readonly managesTrades = true;

  async start(account: ConformanceAccount, ingressUrl: string, options: StartOptions = {}): Promise<void> {
    const run = this.prepare(account.id, 'mt5', mt5DoubleMarket);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PYTHONPATH: [path.join(MT5_BRIDGE_DIR, 'src'), path.join(MT5_BRIDGE_DIR, 'tests', 'double')].join(path.delimiter),
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONUNBUFFERED: '1',
      ES_BRIDGE_TOKEN: account.bridgeToken,
      MT5_DOUBLE_DIR: run.dir,
      ...(options.crash ? { MT5_DOUBLE_CRASH: options.crash } : {}),
    };
    const proc = new ServiceProcess({
      kind: 'external',
      program: [process.env.PYTHON ?? 'python3', '-m', 'es_mt5_bridge'],
      name: `conformance-mt5-${account.id}-${randomInt(1e9)}`,
      args: ['--url', ingressUrl, '--data-dir', path.join(run.dir, 'bridge-data'), '--wait-ms', '20000'],
      env,
      ready: async (p) => p.jsonLines('stderr').some((l) => l.event === 'hello'),
      readyTimeoutMs: 30_000,
    });
    run.process = proc;
    await proc.start();
  }

  /** A close by hand in the terminal (all, or `volume` lots of it): the deal's reason is DEAL_REASON_CLIENT. */
  async manualClose(accountId: string, ticket: string, volume?: number): Promise<void> {
    this.terminalOp(accountId, { op: 'close', ticket: Number(ticket), ...(volume === undefined ? {} : { volume }) });
  }

  /** The broker's own stop-out of a position (DEAL_REASON_SO): a margin call. */
  async marginCall(accountId: string, ticket: string): Promise<void> {
    this.terminalOp(accountId, { op: 'close', ticket: Number(ticket), reason: 'so' });
  }

  /** A pending order deleted by hand in the terminal. */
  async manualCancel(accountId: string, ticket: string): Promise<void> {
    this.terminalOp(accountId, { op: 'cancel', ticket: Number(ticket) });
  }

  private terminalOp(accountId: string, op: TerminalClick): void {
    const market = this.run(accountId).market;
    market.terminal_ops.push({ ...op, id: `op-${market.terminal_ops.length + 1}-${randomInt(1e9)}` });
    this.saveMarket(accountId);
  }

  async broker(accountId: string): Promise<BrokerView> {
    const file = path.join(this.run(accountId).dir, 'server.json');
    const state: ServerState = fs.existsSync(file)
      ? (JSON.parse(fs.readFileSync(file, 'utf8')) as ServerState)
      : { positions: [], orders: [], history_orders: [] };
    const offset = this.run(accountId).market.server_utc_offset;
    const pending = [...state.orders, ...state.history_orders.filter((o) => o.type >= 2)];
    const opened = state.history_orders.filter((o) => o.type <= 1 && o.position_id === o.ticket);
    return {
      positions: state.positions.map((p) => ({
        ticket: String(p.ticket),
        symbol: p.symbol,
        side: p.type === 0 ? 'buy' : 'sell',
        volume: p.volume,
        openPrice: p.price_open,
        sl: level(p.sl),
        tp: level(p.tp),
      })),
      orders: state.orders.map((o) => {
        const stopLimit = o.type === 6 || o.type === 7;
        return {
          ticket: String(o.ticket),
          symbol: o.symbol,
          ...ORDER_TYPES[o.type]!,
          volume: o.volume_initial,
          // MT5 keeps a stop-limit's trigger in price_open and its limit price in price_stoplimit.
          price: stopLimit ? o.price_stoplimit : o.price_open,
          stopLimitPrice: stopLimit ? o.price_open : null,
          sl: level(o.sl),
          tp: level(o.tp),
          expiry: o.time_expiration ? new Date((o.time_expiration - offset) * 1000).toISOString() : null,
        };
      }),
      entries: [...opened.map((o) => ({ o, kind: 'position' as const })), ...pending.map((o) => ({ o, kind: 'order' as const }))]
        .sort((a, b) => a.o.ticket - b.o.ticket)
        .map(({ o, kind }) => ({
          kind,
          ticket: String(o.ticket),
          symbol: o.symbol,
          side: o.type % 2 === 0 ? ('buy' as const) : ('sell' as const),
          volume: o.volume_initial,
        })),
      native: state,
    };
  }
}
