import { z } from 'zod';
import { commandLogLine } from '../bridge/command-log';
import { CAPABILITIES, compareVersions } from '../domain/capabilities';
import { BridgeClient, toReport } from '../bridge/client';
import { commandSchema, type AccountFigures, type BridgeReport } from '../domain/bridge-protocol';
import { ACTIONS, type Action } from '../domain/actions';
import { PaperBroker, type BrokerOptions, type ExecutionResult, type Platform } from './broker';
import { MemoryJournal, type Journal } from './journal';
import { MemoryLedger, type Ledger } from './ledger';
import { applyRisk, EquityMarks } from './risk';
import { readStateFile, writeStateFile, type PaperState } from './state-file';
import { Serial } from '../bridge/serial';
import { paperStopOut } from './stop-out';
import type { StopOutWatch } from '../bridge/stop-out-watch';

export { parseFaults, type Fault } from './faults';

/**
 * One simulated terminal (an MT5 EA or a cTrader cBot) for one account, speaking the bridge API like a real one
 * (docs/paper-bridge.md): hello, long-poll commands, execute them in order on the paper broker, report.
 * Exactly once: every handled commandId is journaled with its report before the report is sent; a redelivery is
 * answered from the journal. Never stale: a command past its expiresAt is reported `expired`, not executed.
 */

export const DEFAULT_BRIDGE_VERSIONS: Record<Platform, string> = { mt5: '2.1.0', ctrader: '1.2.0' };

/** The command as the paper bridge reads it: the shared schema plus the optional guard a server may add. */
export const paperCommandSchema = commandSchema.extend({ maxOpenPositions: z.number().int().min(0).optional() });
export type PaperCommand = z.infer<typeof paperCommandSchema>;

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
}

/** `after_stop_out_mark`: the stop-out's mark is on disk, nothing is closed yet. */
export type CrashPoint = 'before_fill' | 'after_fill' | 'after_stop_out_mark';

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
  private running = false;
  private abort = new AbortController();
  private client!: BridgeClient;
  private loopDone: Promise<void> = Promise.resolve();
  private ticker: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  /** When the account's figures last went to the service (with reports or alone). */
  private figuresSentAt = 0;
  /**
   * The equity marks of the loss guards (day's opening, peak), as this terminal has seen its account; kept in its
   * state file beside the broker's, so a restart does not forget a bad day or the peak.
   */
  readonly marks: EquityMarks;
  /** Whatever touches the broker, one at a time: the delivered commands and the stop-out. */
  private readonly serial = new Serial();
  readonly stopOut: StopOutWatch;

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
    const crash = options.crash;
    this.stopOut = paperStopOut({
      accountId: this.accountId,
      broker: this.broker,
      ledger: this.ledger,
      marks: this.marks,
      saved: saved?.stopOut,
      save: (durable) => this.saveState(durable),
      serial: this.serial,
      clock: this.clock,
      diag: this.diag,
      ...(options.stopOutWatchMs !== undefined ? { everyMs: options.stopOutWatchMs } : {}),
      ...(crash?.at === 'after_stop_out_mark' ? { afterMark: () => crash.die() } : {}),
    });
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

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    const { ingressUrl, bridgeToken, fetch, backoff } = this.opts;
    this.client = new BridgeClient({ ingressUrl, bridgeToken, fetch, backoff, signal: this.abort.signal, accountId: this.accountId, diag: this.diag });
    const tickMs = this.opts.tickMs ?? 250;
    if (tickMs > 0) {
      this.ticker = setInterval(() => this.tick(), tickMs);
      this.ticker.unref();
    }
    this.stopOut.start(this.client, () => Promise.resolve(this.figures()));
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    if (!this.running) return this.loopDone;
    this.running = false;
    this.abort.abort();
    this.stopOut.stop();
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    await this.loopDone;
  }

  /** Lets the market act now; its operations go to the ledger. */
  tick(): void {
    const ops = this.broker.tick();
    if (ops.length === 0) return;
    this.ledger.append(this.accountId, ops);
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
    const commandId =
      typeof raw === 'object' && raw !== null && typeof (raw as { commandId?: unknown }).commandId === 'string'
        ? (raw as { commandId: string }).commandId
        : undefined;
    if (commandId === undefined || commandId.length === 0) return undefined;
    const recorded = this.journal.get(commandId);
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
          if ('refusal' in risked) {
            result = risked.refusal;
          } else {
            const run = this.broker.execute(risked.command);
            result = risked.note && run.result.status === 'filled' ? { ...run.result, message: risked.note } : run.result;
            this.ledger.append(this.accountId, run.ops);
          }
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

  // ---- the bridge loop ------------------------------------------------------------------------------------------

  private async loop(): Promise<void> {
    let delay = this.client.initialBackoff;
    let connected = false;
    while (this.running) {
      try {
        if (!connected) {
          await this.hello();
          connected = true;
        }
        const commands = await this.poll();
        delay = this.client.initialBackoff;
        this.lastError = undefined;
        if (commands.length === 0) {
          await this.heartbeatIfDue();
          continue;
        }
        const reports: BridgeReport[] = [];
        // Never beside the stop-out, which looks again after the batch.
        await this.serial.run(async () => {
          for (const raw of commands) {
            const handled = this.handle(raw);
            if (!handled) {
              this.diag({ time: this.now(), event: 'command_without_id', accountId: this.accountId });
              continue;
            }
            reports.push(handled.report);
            this.logHandled(handled, raw);
          }
          await this.stopOut
            .look()
            .catch((err: unknown) => this.diag({ time: this.now(), event: 'stop_out_error', accountId: this.accountId, error: String(err) }));
        });
        if (reports.length === 0) {
          await this.heartbeatIfDue();
          continue;
        }
        if (this.dropsLeft > 0) {
          this.dropsLeft--;
          this.stats.drops++;
          connected = false;
          this.diag({ time: this.now(), event: 'fault_drop_before_report', accountId: this.accountId, commandIds: reports.map((r) => r.commandId) });
          await this.client.sleep(delay);
          continue;
        }
        await this.sendReports(reports);
      } catch (err) {
        if (!this.running) break;
        connected = false;
        const message = (err as Error)?.message ?? String(err);
        if (message !== this.lastError) this.diag({ time: this.now(), event: 'connection_error', accountId: this.accountId, error: message, retryInMs: delay });
        this.lastError = message;
        await this.client.sleep(delay);
        delay = Math.min(delay * 2, this.client.maxBackoff);
      }
    }
  }

  private async hello(): Promise<void> {
    const account = this.broker.account();
    const body = {
      platform: this.platform,
      bridgeVersion: this.bridgeVersion,
      // The actions this version can run, and the features: sizing by risk, loss guards and the stop-out on the live account.
      capabilities: [...ACTIONS.filter((a) => this.supports(a)), 'risk_sizing', 'loss_guards', 'position_limits', 'stop_out'],
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
    const answer = await this.client.hello(body);
    // The hello carried the figures: the next heartbeat is due a whole interval from now.
    this.figuresSentAt = this.clock();
    this.stats.hellos++;
    const serverAccount = answer.accountId;
    this.diag({ time: this.now(), event: 'hello', accountId: this.accountId, serverAccountId: serverAccount, bridgeVersion: this.bridgeVersion });
  }

  private async poll(): Promise<unknown[]> {
    const commands = await this.client.poll(this.opts.waitMs ?? 20_000);
    this.stats.polls++;
    return commands;
  }

  /** Every report carries the account's figures as they are now (protocol 1.2). */
  private async sendReports(reports: BridgeReport[]): Promise<void> {
    await this.client.sendReports(reports, this.figures());
    this.figuresSentAt = this.clock();
    this.stats.reportsSent += reports.length;
  }

  private async heartbeatIfDue(): Promise<void> {
    const every = this.opts.heartbeatMs ?? 30_000;
    if (every <= 0 || this.clock() - this.figuresSentAt < every) return;
    await this.client.sendReports([], this.figures());
    this.figuresSentAt = this.clock();
    this.stats.heartbeats++;
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
