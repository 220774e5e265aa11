import type { BrokerOptions, PaperBroker, Platform } from './broker';
import type { Journal } from './journal';
import type { Ledger } from './ledger';

/** What a paper terminal (terminal.ts) is made of: its account, its connection, its broker and files, its faults. */

export interface TerminalOptions {
  accountId: string;
  platform: Platform;
  bridgeToken: string;
  /** e.g. http://127.0.0.1:8080 */
  ingressUrl: string;
  /** Reported in hello; default 2.1.0 (mt5) / 1.2.0 (ctrader). Actions this version lacks are refused. */
  bridgeVersion?: string;
  /** A ready broker; otherwise one is made from brokerOptions (and the state file, if it exists). */
  broker?: PaperBroker;
  brokerOptions?: Omit<BrokerOptions, 'platform'>;
  /** Where broker operations go; default in memory. */
  ledger?: Ledger;
  /** The exactly-once journal; default in memory. */
  journal?: Journal;
  /** The broker's state is saved here after every change and reloaded at start. */
  stateFile?: string;
  /** Long-poll wait asked of the ingress. Default 20 000. */
  waitMs?: number;
  /** Sends the account's figures alone when no report carried them for this long (a heartbeat); 0: never. */
  heartbeatMs?: number;
  /** How often the market acts (pending triggers, SL/TP); 0 turns the timer off. Default 250. */
  tickMs?: number;
  clock?: () => number;
  fetch?: typeof fetch;
  /** One line per handled command (stdout by default). */
  log?: (line: Record<string, unknown>) => void;
  /** Connection and market events (stderr by default). */
  diag?: (line: Record<string, unknown>) => void;
  /** Reconnect and report-retry backoff: initialMs doubling to maxMs. Default 50 → 1000. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Fault injection: drop the connection after executing, before reporting, this many times. */
  dropBeforeReport?: number;
  /**
   * Fault injection: die at this point of the first command that reaches the broker (`before_fill`: it never reaches
   * it; `after_fill`: the broker executed it and the journal has it, the report was not sent). `die` must not return
   * (the CLI kills its own process with SIGKILL).
   */
  crash?: { at: CrashPoint; die: () => never };
  /** How often the stop-out's watch looks while armed (docs/risk-sizing.md); default 1 000 ms. */
  stopOutWatchMs?: number;
  /** The trade management's state file (protocol 1.6), fsynced before each call; default in memory. */
  managementFile?: string;
  /** The trade-event outbox's file (protocol 1.5); default in memory. */
  tradesFile?: string;
  /** The trader's clicks in the terminal (src/paper/trader-file.ts), read on each market tick. */
  traderFile?: string;
  /** Fault injection: the trade events stay in the outbox, never sent (a restart without it must deliver them). */
  holdTradeEvents?: boolean;
  /** How often the book goes to the service while nothing happens; default 60 000. */
  bookEveryMs?: number;
}

/** `after_stop_out_mark`: the stop-out's mark is on disk, nothing is closed yet. */
type CrashPoint = 'before_fill' | 'after_fill' | 'after_stop_out_mark';
