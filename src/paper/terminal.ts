import { z } from 'zod';
import { commandLogLine } from '../bridge-kit/command-log';
import { CAPABILITIES, compareVersions } from '../domain/capabilities';
import { commandIdOf, toReport } from '../bridge-kit/client';
import { connectionOf, startAccountSession, type BridgeSession, type SessionPeer } from '../bridge-kit/session';
import type { AccountLink } from '../bridge-kit/account-link';
import type { FleetAccount } from '../bridge-kit/session';
import { commandSchema, type AccountFigures, type BridgeHello, type BridgeReport } from '../domain/bridge-protocol';
import { ACTIONS, type Action } from '../domain/actions';
import { PaperBroker, type BrokerOp, type ExecutionResult, type Platform } from './broker';
import { MemoryJournal, type Journal } from './journal';
import { MemoryLedger, type Ledger } from './ledger';
import { applyRisk, EquityMarks } from './risk';
import { readStateFile, writeStateFile, type PaperState } from './state-file';
import { Serial } from '../bridge-kit/serial';
import { paperStopOut } from './stop-out';
import type { StopOutWatch } from '../bridge-kit/stop-out-watch';
import { PaperTrades } from './trades';
import { MANAGEMENT_FEATURES, PaperManagement } from './management';
import type { TerminalOptions } from './terminal-options';
import { TraderFile } from './trader-file';

/**
 * One simulated terminal (an MT5 EA or a cTrader cBot) for one account, speaking the bridge API like a real one
 * (docs/paper-bridge.md): hello, long-poll commands, execute them in order on the paper broker, report.
 * Exactly once: every handled commandId is journaled with its report before the report is sent; a redelivery is
 * answered from the journal. Never stale: a command past its expiresAt is reported `expired`, not executed.
 */

/** What the paper bridge runs besides the actions, whatever version it reports (sizing by risk, guards, events, management). */
const FEATURES = ['risk_sizing', 'loss_guards', 'position_limits', 'stop_out', 'trade_events', ...MANAGEMENT_FEATURES] as const;

export const DEFAULT_BRIDGE_VERSIONS: Record<Platform, string> = { mt5: '2.1.0', ctrader: '1.2.0' };

/** The command as the paper bridge reads it: the shared schema plus the optional guard a server may add. */
const paperCommandSchema = commandSchema.extend({ maxOpenPositions: z.number().int().min(0).optional() });
export type PaperCommand = z.infer<typeof paperCommandSchema>;

export type { TerminalOptions } from './terminal-options';

export interface Handled {
  report: BridgeReport;
  /** Answered from the journal: the command had been handled before. */
  replayed: boolean;
  command?: PaperCommand;
}

export class PaperTerminal {
  readonly accountId: string;
  readonly platform: Platform;
  readonly bridgeVersion: string;
  readonly broker: PaperBroker;
  readonly ledger: Ledger;
  readonly journal: Journal;
  /** Counters for tests and logs. */
  readonly stats = { hellos: 0, polls: 0, executed: 0, replayed: 0, reportsSent: 0, drops: 0, heartbeats: 0 };

  private readonly opts: TerminalOptions;
  private readonly clock: () => number;
  private readonly log: (line: Record<string, unknown>) => void;
  private readonly diag: (line: Record<string, unknown>) => void;
  private dropsLeft: number;
  private session: BridgeSession | undefined;
  private readonly peer: SessionPeer;
  private ticker: NodeJS.Timeout | undefined;
  /**
   * The equity marks of the loss guards (day's opening, peak), as this terminal has seen its account; kept in its
   * state file beside the broker's, so a restart does not forget a bad day or the peak.
   */
  readonly marks: EquityMarks;
  /** Whatever touches the broker, one at a time: the delivered commands and the stop-out. */
  private readonly serial = new Serial();
  readonly stopOut: StopOutWatch;
  readonly trades: PaperTrades;
  /** The ledger every broker operation goes through: its trade events first, then its line, then the management. */
  private readonly record: Ledger;
  /** Trade management (protocol 1.6): trailing stop, breakeven, take-profit levels, the checks before an entry. */
  readonly management: PaperManagement;
  private readonly trader: TraderFile | undefined;

  constructor(options: TerminalOptions) {
    this.opts = options;
    this.accountId = options.accountId;
    this.platform = options.platform;
    this.bridgeVersion = options.bridgeVersion ?? DEFAULT_BRIDGE_VERSIONS[options.platform];
    this.clock = options.clock ?? options.brokerOptions?.clock ?? Date.now;
    this.log = options.log ?? ((line) => process.stdout.write(`${JSON.stringify(line)}\n`));
    this.diag = options.diag ?? ((line) => process.stderr.write(`${JSON.stringify(line)}\n`));
    this.dropsLeft = options.dropBeforeReport ?? 0;
    this.ledger = options.ledger ?? new MemoryLedger();
    this.journal = options.journal ?? new MemoryJournal();
    const saved = this.loadState();
    this.marks = new EquityMarks(saved?.marks);
    this.broker = options.broker ?? new PaperBroker({ clock: this.clock, ...options.brokerOptions, platform: options.platform, state: saved?.broker });
    this.trades = new PaperTrades({
      accountId: this.accountId,
      broker: this.broker,
      file: options.tradesFile,
      clock: this.clock,
      diag: this.diag,
      figures: () => this.figures(),
      ...(options.bookEveryMs !== undefined ? { bookEveryMs: options.bookEveryMs } : {}),
    });
    this.management = new PaperManagement({
      accountId: this.accountId,
      broker: this.broker,
      file: options.managementFile,
      ledger: this.trades.through(this.ledger),
      serial: this.serial,
      save: () => this.saveState(),
      clock: this.clock,
      diag: this.diag,
    });
    this.record = this.management;
    this.trader = options.traderFile ? new TraderFile(options.traderFile, this.accountId, this.diag) : undefined;
    const crash = options.crash;
    this.stopOut = paperStopOut({
      accountId: this.accountId,
      broker: this.broker,
      ledger: this.record,
      marks: this.marks,
      saved: saved?.stopOut,
      save: (durable) => this.saveState(durable),
      serial: this.serial,
      clock: this.clock,
      diag: this.diag,
      ...(options.stopOutWatchMs !== undefined ? { everyMs: options.stopOutWatchMs } : {}),
      ...(crash?.at === 'after_stop_out_mark' ? { afterMark: () => crash.die() } : {}),
    });
    this.peer = {
      helloBody: () => Promise.resolve(this.helloBody()),
      helloDone: (answer) => {
        this.diag({ time: this.now(), event: 'hello', accountId: this.accountId, serverAccountId: answer.accountId, bridgeVersion: this.bridgeVersion });
        void this.trades.sender.helloDone();
      },
      handle: (raw) => Promise.resolve(this.delivered(raw)),
      figures: () => Promise.resolve(this.figures()),
      dropReports: (reports) => this.dropReports(reports),
    };
  }

  /** Fault hook: the next `times` report sends are dropped (the connection "fails" after the orders were placed). */
  dropAfterPlacing(times = 1): void {
    this.dropsLeft += times;
  }

  /** Can this bridge version run the action? (What an older EA or cBot would not know.) */
  supports(action: Action): boolean {
    const table = CAPABILITIES[this.platform];
    return compareVersions(this.bridgeVersion, table.needs[action] ?? table.base) >= 0;
  }

  /** The account on its own session loop (its own hello, long-poll and reports): a single-account bridge. */
  start(): void {
    if (this.session) return;
    this.session = startAccountSession(connectionOf(this.opts), this.asFleetAccount(), { clock: this.clock, diag: this.diag });
  }

  /** The account's parts for a multi-account process (src/bridge-kit/fleet.ts), which then runs its loop. */
  asFleetAccount(): FleetAccount {
    return {
      accountId: this.accountId,
      bridgeToken: this.opts.bridgeToken,
      peer: this.peer,
      serial: this.serial,
      stopOut: this.stopOut,
      stats: this.stats,
      withLink: (link) => this.started(link),
    };
  }

  /** What runs beside the loop once the account has its link: the market's ticks, the stop-out, trade events. */
  private started(link: AccountLink): void {
    const tickMs = this.opts.tickMs ?? 250;
    if (tickMs > 0 && !this.ticker) {
      this.ticker = setInterval(() => void this.tick(), tickMs);
      this.ticker.unref();
    }
    this.stopOut.start(link, () => Promise.resolve(this.figures()));
    if (!this.opts.holdTradeEvents) this.trades.sender.start(link);
  }

  /** Stops what runs beside the loop, and the account's own loop if it runs one (a fleet stops its own). */
  async stop(): Promise<void> {
    this.stopOut.stop();
    this.trades.sender.stop();
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    await this.session?.stop();
    this.session = undefined;
  }

  /**
   * Lets the market act now, then the trader's clicks in the terminal; their operations go to the ledger. Then the
   * trade management sees the quotes (its calls wait their turn behind any command).
   */
  tick(): Promise<void> {
    this.took(this.broker.tick());
    for (const click of this.trader?.take() ?? []) this.byHand(click);
    return this.management.onQuotes();
  }

  /** The trader closes a position or deletes a pending order by hand (no command; the ledger says `manual`). */
  byHand(click: { op: 'close' | 'cancel'; ticket: string }): ExecutionResult {
    const { result, ops } = this.broker.byHand(click);
    this.took(ops);
    if (result.status === 'rejected') this.diag({ time: this.now(), event: 'by_hand_refused', accountId: this.accountId, ...click, message: result.message });
    return result;
  }

  /** Operations that came from no command (the market, the trader's hand). */
  private took(ops: BrokerOp[]): void {
    if (ops.length === 0) return;
    this.record.append(this.accountId, ops);
    this.saveState();
    for (const op of ops)
      this.diag({
        time: op.time,
        event: 'market',
        accountId: this.accountId,
        op: op.op,
        cause: op.cause,
        ticket: op.ticket,
        symbol: op.symbol,
        price: op.price,
      });
  }

  /**
   * Handles one delivered command: from the journal if it was handled before; otherwise expired, refused or executed,
   * then journaled. Undefined only for something that has no commandId to report against.
   */
  handle(raw: unknown): Handled | undefined {
    const commandId = commandIdOf(raw);
    if (commandId === undefined) return undefined;
    const recorded = this.journal.get(commandId) ?? this.heldEntry(commandId);
    if (recorded) {
      this.stats.replayed++;
      return { report: recorded, replayed: true };
    }
    const parsed = paperCommandSchema.safeParse(raw);
    const now = this.clock();
    let result: Outcome;
    let command: PaperCommand | undefined;
    let executed = false;
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      result = { status: 'rejected', retcode: 'bridge_invalid_command', message: `invalid command: ${detail}` };
    } else {
      command = parsed.data;
      if (command.accountId !== this.accountId) {
        result = { status: 'rejected', retcode: 'bridge_wrong_account', message: `command for ${command.accountId} delivered to ${this.accountId}` };
      } else if (!(now <= Date.parse(command.expiresAt))) {
        result = { status: 'expired', message: `not executed: expired at ${command.expiresAt}` };
      } else if (!this.supports(command.action)) {
        result = {
          status: 'rejected',
          retcode: 'bridge_unsupported_action',
          message: `${command.action} is not supported by ${this.platform === 'mt5' ? 'EA' : 'cBot'} version ${this.bridgeVersion}`,
        };
      } else {
        if (this.opts.crash?.at === 'before_fill') this.opts.crash.die();
        try {
          const risked = applyRisk(command, this.broker, this.marks, now);
          if ('refusal' in risked) result = risked.refusal;
          else result = this.management.beforeEntry(risked.command) ?? this.place(risked.command, risked.note);
        } catch (err) {
          // A defect in the simulator, not a broker answer: journal a refusal rather than fail on every redelivery.
          result = { status: 'rejected', retcode: 'bridge_internal_error', message: `paper broker failed: ${(err as Error)?.message ?? String(err)}` };
          this.diag({ time: this.now(), event: 'internal_error', accountId: this.accountId, commandId, error: (err as Error)?.stack ?? String(err) });
        }
        this.saveState();
        this.stats.executed++;
        executed = true;
      }
    }
    const report = toReport(commandId, result, now);
    this.journal.record(report);
    if (this.opts.crash?.at === 'after_fill' && executed) this.opts.crash.die();
    return { report, replayed: false, command };
  }

  /**
   * The entry the broker already holds for this command, journaled now: a bridge killed after the broker's state was
   * saved and before its journal line (a window of a few writes) finds its fill again, as an EA finds its own order
   * by its comment, instead of placing it twice.
   */
  private heldEntry(commandId: string): BridgeReport | undefined {
    const { positions, orders } = this.broker.snapshot();
    const held = positions.find((p) => p.commandId === commandId) ?? orders.find((o) => o.commandId === commandId);
    // Killed after the ledger's line and before the state was saved: the broker did it (its own record says so), so
    // it is never done again, an entry or a close alike.
    const done = held ? undefined : this.ledger.firstOpOf?.(this.accountId, commandId);
    const found = held ? { ticket: held.ticket, price: 'openPrice' in held ? held.openPrice : held.price, volume: held.volume } : done;
    if (!found) return undefined;
    const report = toReport(
      commandId,
      { status: 'filled', ticket: found.ticket, price: found.price ?? 0, volume: found.volume, message: 'found on the broker after a restart' },
      this.clock(),
    );
    this.journal.record(report);
    return report;
  }

  /** The entry (or any other action) on the broker, its operations to the ledger. */
  private place(command: PaperCommand, note: string | undefined): ExecutionResult {
    const run = this.broker.execute(command);
    this.record.append(this.accountId, run.ops);
    return note && run.result.status === 'filled' ? { ...run.result, message: note } : run.result;
  }

  // ---- the session's peer (src/bridge-kit/session.ts) ------------------------------------------------------------

  /** One delivered command of a batch → its report, logged. */
  private delivered(raw: unknown): BridgeReport | undefined {
    const handled = this.handle(raw);
    if (!handled) {
      this.diag({ time: this.now(), event: 'command_without_id', accountId: this.accountId });
      return undefined;
    }
    this.logHandled(handled, raw);
    return handled.report;
  }

  /** The drop-before-report fault: the orders were placed, the connection "fails" before the reports go. */
  private dropReports(reports: BridgeReport[]): boolean {
    if (this.dropsLeft <= 0) return false;
    this.dropsLeft--;
    this.stats.drops++;
    this.diag({ time: this.now(), event: 'fault_drop_before_report', accountId: this.accountId, commandIds: reports.map((r) => r.commandId) });
    return true;
  }

  private helloBody(): BridgeHello {
    const account = this.broker.account();
    return {
      platform: this.platform,
      bridgeVersion: this.bridgeVersion,
      capabilities: [...ACTIONS.filter((a) => this.supports(a)), ...FEATURES],
      symbols: this.broker.symbolSpecs().map((spec) => ({
        name: spec.name,
        digits: spec.digits,
        pipSize: spec.pip,
        volumeStep: spec.volumeStep,
        volumeMin: spec.minVolume,
        volumeMax: spec.maxVolume,
      })),
      account: { balance: account.balance, equity: account.equity, margin: account.margin, freeMargin: account.freeMargin, currency: account.currency },
    };
  }

  private figures(): AccountFigures {
    const { balance, equity, margin, freeMargin, currency } = this.broker.account();
    return { balance, equity, margin, freeMargin, currency };
  }

  private logHandled(handled: Handled, raw: unknown): void {
    const cmd = (handled.command ?? raw) as Partial<PaperCommand>;
    this.log(commandLogLine(this.now(), this.accountId, cmd, handled.report, handled.replayed));
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  private loadState(): PaperState | undefined {
    return this.opts.stateFile ? readStateFile(this.opts.stateFile) : undefined;
  }

  private saveState(durable = false): void {
    const stopOut = this.stopOut.runner.mark;
    if (this.opts.stateFile)
      writeStateFile(this.opts.stateFile, { broker: this.broker.snapshot(), marks: this.marks.state(), ...(stopOut ? { stopOut } : {}) }, durable);
  }
}

type Outcome = ExecutionResult | { status: 'expired'; message: string; ticket?: undefined; price?: undefined; volume?: undefined; retcode?: undefined };
