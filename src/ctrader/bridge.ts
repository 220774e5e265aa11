import { commandLogLine } from '../bridge-kit/command-log';
import { commandIdOf, toReport } from '../bridge-kit/client';
import { connectionOf, startAccountSession, type BridgeSession, type SessionPeer } from '../bridge-kit/session';
import type { FleetAccount } from '../bridge-kit/session';
import {
  commandSchema,
  instrumentSchema,
  type AccountFigures,
  type BridgeCommand,
  type BridgeHello,
  type BridgeReport,
  type Instrument,
} from '../domain/bridge-protocol';
import { ACTIONS, isOpening } from '../domain/actions';
import type { CtraderAccount } from './account';
import { OutcomeUnknown } from './connection';
import { protocolFigures, readAccount } from './figures';
import { MarksFile } from './marks-file';
import { OrderStatus, OrderType, type Order } from './messages';
import { applyRisk, type MarksKeeper } from './risk';
import { Serial } from '../bridge-kit/serial';
import type { StopOutWatch } from '../bridge-kit/stop-out-watch';
import { beforeEntry } from './entry-checks';
import { CtraderManagement } from './management';
import { ctraderStopOut } from './stop-out';
import type { CommandStore, Intent } from './store';
import { CtraderTradeFeed } from './trade-feed';
import { executeCommand, labelOf, type Outcome } from './trading';
import { toInstrument, volumeToLots } from './units';

/**
 * The bridge loop of one cTrader account (docs/bridge-protocol.md): hello with the account's symbols, long-poll,
 * execute each command in seq order through Open API, report. Exactly once: a command's intent is synced to disk
 * before its first Open API request and its report before the report is sent; a redelivered command is answered from
 * the store, and one whose answer was lost is resolved from the broker's state instead of being sent again.
 */

/**
 * The version this connector reports in hello: it runs all 17 actions (docs/capabilities.md); 1.3.0 adds the stop-out,
 * 1.4.0 the trade events and the book (protocol 1.5), 1.5.0 trade management (protocol 1.6: trailing stop, breakeven
 * trigger, take-profit levels, close opposite, spread guard).
 */
export const CTRADER_CONNECTOR_VERSION = '1.5.0';

/**
 * What this connector announces in hello besides the actions: sizing by risk and loss guards on the live account
 * (src/ctrader/risk.ts), the stop-out, trade events, and trade management (management.ts, entry-checks.ts). Listed, not
 * taken from BRIDGE_FEATURES: a feature added there is announced only once the connector does it.
 */
// prettier-ignore
const CTRADER_FEATURES = ['risk_sizing', 'loss_guards', 'position_limits', 'stop_out', 'trade_events', 'trailing_stop', 'breakeven_trigger', 'take_profit_levels', 'close_opposite', 'max_spread'] as const;

/** How long the figures sent to the service may take to read; past it the report goes without them. */
const FIGURES_FOR_SERVICE_MS = 2_000;

/** Bridge-side code when a command may have reached the broker and its outcome cannot be established. */
const OUTCOME_UNKNOWN = 'bridge_outcome_unknown';

export interface CtraderBridgeOptions {
  account: CtraderAccount;
  store: CommandStore;
  ingressUrl: string;
  bridgeToken: string;
  waitMs?: number;
  fetch?: typeof fetch;
  backoff?: { initialMs?: number; maxMs?: number };
  /** Where the loss guards' equity marks are kept; without it they live in memory only (unit tests). */
  marksFile?: string;
  /** The trade events' durable outbox (and `.cursor`, the last read-back); without it in memory only (unit tests). */
  tradesFile?: string;
  /** Trade management's state (and `-entries.json`, the entries waiting for their fill). */
  managementFile: string;
  /** How often the book goes to the service while connected; default 60 000. */
  bookEveryMs?: number;
  /** Sends the account's figures alone when no report carried them for this long (a heartbeat); 0: never. */
  heartbeatMs?: number;
  /** How often the stop-out's watch looks while armed (docs/risk-sizing.md); default 1 000 ms. */
  stopOutWatchMs?: number;
  log?: (line: Record<string, unknown>) => void;
  diag?: (line: Record<string, unknown>) => void;
}

export class CtraderBridge {
  readonly stats = { hellos: 0, polls: 0, executed: 0, replayed: 0, resolved: 0, heartbeats: 0, reportsSent: 0 };
  private session: BridgeSession | undefined;
  private readonly peer: SessionPeer;
  /** How many symbols the last hello listed, for its diagnostic line. */
  private helloSymbols = 0;
  private readonly log: (line: Record<string, unknown>) => void;
  private readonly diag: (line: Record<string, unknown>) => void;
  /** The loss guards' day's opening equity and peak, as this connector has seen the account; on disk. */
  private readonly keeper: MarksKeeper;
  /** Whatever touches the broker, one at a time: the delivered commands and the stop-out. */
  private readonly serial = new Serial();
  readonly stopOut: StopOutWatch;
  readonly trades: CtraderTradeFeed;
  readonly management: CtraderManagement;

  constructor(private readonly opts: CtraderBridgeOptions) {
    this.log = opts.log ?? ((line) => process.stdout.write(`${JSON.stringify(line)}\n`));
    this.diag = opts.diag ?? ((line) => process.stderr.write(`${JSON.stringify(line)}\n`));
    this.trades = new CtraderTradeFeed({
      account: opts.account,
      commandOfLabel: (label) => opts.store.commandOfLabel(label),
      outboxFile: opts.tradesFile,
      figures: () => this.figures(),
      diag: this.diag,
      ...(opts.bookEveryMs !== undefined ? { bookEveryMs: opts.bookEveryMs } : {}),
    });
    const file = new MarksFile(opts.marksFile);
    const { marks, stopOut } = file.loadAll();
    // The file is written whole: the equity marks and the stop-out's mark together, whoever saves.
    const save = () => file.save(marks, this.stopOut.runner.mark);
    this.keeper = { marks, save };
    this.stopOut = ctraderStopOut({
      accountId: this.accountId,
      account: opts.account,
      marks,
      saved: stopOut,
      save,
      serial: this.serial,
      diag: this.diag,
      around: (run) => this.trades.during({ kind: 'stop_out' }, run),
      ...(opts.stopOutWatchMs !== undefined ? { everyMs: opts.stopOutWatchMs } : {}),
    });
    this.management = new CtraderManagement({
      account: opts.account,
      file: opts.managementFile,
      serial: this.serial,
      around: (cause, run) => this.trades.during(cause, run),
      diag: this.diag,
    });
    this.peer = {
      helloBody: () => this.helloBody(),
      helloDone: (answer) => {
        this.diag({
          time: now(),
          event: 'hello',
          accountId: this.accountId,
          serverAccountId: answer.accountId,
          symbols: this.helloSymbols,
          bridgeVersion: CTRADER_CONNECTOR_VERSION,
        });
        // Not awaited: reading back the history must not hold up the commands waiting behind the hello.
        void this.trades.helloDone();
        void this.management.helloDone();
      },
      handle: (raw) => this.handle(raw),
      figures: () => this.figures(),
    };
  }

  get accountId(): string {
    return this.opts.account.accountId;
  }

  /** The account on its own session loop (its own hello, long-poll and reports). */
  start(): void {
    if (this.session) return;
    this.session = startAccountSession(connectionOf(this.opts), this.asFleetAccount(), { diag: this.diag });
  }

  /** The account's parts for the connector's multi-account sessions (src/bridge-kit/fleet.ts), which run its loop. */
  asFleetAccount(): FleetAccount {
    return {
      accountId: this.accountId,
      bridgeToken: this.opts.bridgeToken,
      peer: this.peer,
      serial: this.serial,
      stopOut: this.stopOut,
      stats: this.stats,
      withLink: (link) => {
        this.stopOut.start(link, () => this.figures());
        this.trades.start(link);
      },
    };
  }

  /** Stops what runs beside the loop, and the account's own loop if it runs one (a fleet stops its own). */
  async stop(): Promise<void> {
    this.stopOut.stop();
    this.trades.stop();
    this.management.stop();
    await this.session?.stop();
    this.session = undefined;
  }

  /** The hello's body: the account's symbols (as many as the ingress takes) and figures. */
  private async helloBody(): Promise<BridgeHello> {
    const specs = await this.opts.account.loadSymbols();
    const all = specs.map(toInstrument).filter((s) => instrumentSchema.safeParse(s).success);
    const symbols = fitHello(all);
    if (symbols.length < all.length) {
      this.diag({
        time: now(),
        event: 'symbols_truncated',
        accountId: this.accountId,
        sent: symbols.length,
        listed: all.length,
        lastSent: symbols[symbols.length - 1]?.name,
      });
    }
    this.helloSymbols = symbols.length;
    const figures = await this.figures();
    return {
      platform: 'ctrader',
      bridgeVersion: CTRADER_CONNECTOR_VERSION,
      capabilities: [...ACTIONS, ...CTRADER_FEATURES],
      symbols,
      ...(figures ? { account: figures } : {}),
    };
  }

  /**
   * One delivered command → its report: from the store; resolved, when its answer was lost before; else checked,
   * journaled as an intent, executed and journaled with its outcome. Throws OutcomeUnknown when this attempt's
   * answer was lost too.
   */
  async handle(raw: unknown): Promise<BridgeReport | undefined> {
    const commandId = commandIdOf(raw);
    if (commandId === undefined) {
      this.diag({ time: now(), event: 'command_without_id', accountId: this.accountId });
      return undefined;
    }
    const store = this.opts.store;
    const recorded = store.report(commandId);
    if (recorded) {
      this.stats.replayed++;
      this.logCommand(raw, recorded, true);
      return recorded;
    }
    const parsed = commandSchema.safeParse(raw);
    let outcome: Outcome;
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      outcome = { status: 'rejected', retcode: 'bridge_invalid_command', message: `invalid command: ${detail}` };
    } else if (parsed.data.accountId !== this.accountId) {
      outcome = { status: 'rejected', retcode: 'bridge_wrong_account', message: `command for ${parsed.data.accountId} delivered to ${this.accountId}` };
    } else {
      const unresolved = store.unresolved(commandId);
      const cmd = parsed.data;
      outcome = await this.trades.during({ kind: 'command', commandId }, () => (unresolved ? this.resolve(unresolved, cmd) : this.execute(cmd)));
    }
    const report = store.record(toReport(commandId, outcome, Date.now()));
    this.logCommand(raw, report, false);
    return report;
  }

  private async execute(cmd: BridgeCommand): Promise<Outcome> {
    const expiresAt = Date.parse(cmd.expiresAt);
    if (!(Date.now() <= expiresAt)) return { status: 'expired', message: `not executed: expired at ${cmd.expiresAt}` };
    const label = labelOf(cmd.commandId);
    this.opts.store.begin({ commandId: cmd.commandId, action: cmd.action, label });
    this.stats.executed++;
    return this.attempt(cmd, label, expiresAt);
  }

  private async attempt(cmd: BridgeCommand, label: string, notAfter: number): Promise<Outcome> {
    try {
      const risked = await applyRisk(this.opts.account, cmd, this.keeper, notAfter);
      if ('refusal' in risked) return risked.refusal;
      const outcome = isOpening(cmd.action)
        ? await this.enter(risked.command, label, notAfter)
        : await executeCommand(this.opts.account, risked.command, label, notAfter);
      if (!risked.note || outcome.status !== 'filled') return outcome;
      return { ...outcome, message: outcome.message ? `${risked.note}; ${outcome.message}` : risked.note };
    } catch (err) {
      if (err instanceof OutcomeUnknown) {
        this.diag({ time: now(), event: 'outcome_unknown', accountId: this.accountId, commandId: cmd.commandId, error: err.message });
        throw err;
      }
      this.diag({ time: now(), event: 'internal_error', accountId: this.accountId, commandId: cmd.commandId, error: (err as Error)?.stack ?? String(err) });
      return { status: 'rejected', retcode: 'bridge_internal_error', message: `connector failed: ${(err as Error)?.message ?? String(err)}` };
    }
  }

  /**
   * An entry with trade management around it: the spread, the levels and the reverse first (entry-checks.ts), then
   * its management fields wait for its fill under its label, then the order.
   */
  private async enter(cmd: BridgeCommand, label: string, notAfter: number): Promise<Outcome> {
    const refused = await beforeEntry(this.opts.account, cmd, notAfter, (cause, run) => this.trades.during(cause, run));
    if (refused) return refused;
    this.management.expect(label, cmd);
    let outcome: Outcome | undefined;
    try {
      outcome = await executeCommand(this.opts.account, cmd, label, notAfter);
      return outcome;
    } finally {
      // A lost answer keeps the entry waiting: the broker's position (by its label) decides when it is resolved.
      if (outcome) this.management.entryDone(label, outcome.status === 'filled', cmd.action === 'buy' || cmd.action === 'sell');
    }
  }

  /**
   * A command whose earlier attempt may have reached the broker. An entry is looked up by its label among the open
   * positions and orders, then in the order history since the attempt (ProtoOAOrderListReq): found, it is reported
   * as the broker has it; not found, the broker never took it, so it runs now if it is still fresh, else it expired.
   * A close or cancel whose target is gone is done; modifies and close-alls run again (same target state) while
   * fresh; a partial close cannot be told apart from one that did not run and is reported unknown, never risked twice.
   */
  private async resolve(intent: Intent, cmd: BridgeCommand): Promise<Outcome> {
    this.stats.resolved++;
    const acct = this.opts.account;
    const expiresAt = Date.parse(cmd.expiresAt);
    const fresh = Date.now() <= expiresAt;
    const expired: Outcome = { status: 'expired', message: `not executed: expired at ${cmd.expiresAt}` };
    const unknown = (why: string): Outcome => ({
      status: 'rejected',
      retcode: OUTCOME_UNKNOWN,
      message: `the answer to this command was lost (connection or restart) and ${why}; it was not sent again: check the account`,
    });
    const { positions, orders } = await acct.reconcile();
    const lots = (symbolId: number, volume: number) => {
      const spec = acct.symbolById(symbolId);
      return spec ? volumeToLots(volume, spec) : null;
    };
    const resolved = 'resolved from the broker after a lost answer';
    if (isOpening(cmd.action)) {
      const mine = (o: Order) => o.tradeData.label === intent.label || o.clientOrderId === intent.label;
      const position = positions.find((p) => p.tradeData.label === intent.label);
      if (position)
        return {
          status: 'filled',
          ticket: String(position.positionId),
          price: position.price ?? null,
          volume: lots(position.tradeData.symbolId, position.tradeData.volume),
          message: resolved,
        };
      const order = orders.find(mine);
      if (order)
        return {
          status: 'filled',
          ticket: String(order.orderId),
          price: order.limitPrice ?? order.stopPrice ?? null,
          volume: lots(order.tradeData.symbolId, order.tradeData.volume),
          message: resolved,
        };
      const since = Date.parse(intent.at) - 60_000;
      const past = (await acct.orderHistory(since, Date.now() + 60_000)).find(mine);
      if (!past) return fresh ? this.attempt(cmd, intent.label, expiresAt) : expired;
      if (past.orderStatus === OrderStatus.ORDER_STATUS_REJECTED)
        return { status: 'rejected', retcode: 'ORDER_REJECTED', message: `the broker rejected order ${past.orderId} (${resolved})` };
      const market = past.orderType === OrderType.MARKET;
      if (market && past.orderStatus !== OrderStatus.ORDER_STATUS_FILLED)
        return { status: 'rejected', retcode: 'ORDER_CANCELLED', message: `market order ${past.orderId} ended without a fill (${resolved})` };
      const ticket = market ? past.positionId : past.orderId;
      return {
        status: 'filled',
        ticket: ticket === undefined ? null : String(ticket),
        price: past.executionPrice ?? past.limitPrice ?? past.stopPrice ?? null,
        volume: lots(past.tradeData.symbolId, past.tradeData.volume),
        message: `${resolved}; no longer open`,
      };
    }
    if (cmd.action === 'close' && cmd.positionId !== undefined && !positions.some((p) => String(p.positionId) === cmd.positionId)) {
      return { status: 'done', ticket: cmd.positionId, message: `position no longer open (${resolved})` };
    }
    if (cmd.action === 'cancel_pending' && cmd.orderId !== undefined && !orders.some((o) => String(o.orderId) === cmd.orderId)) {
      return { status: 'done', ticket: cmd.orderId, message: `order no longer pending (${resolved})` };
    }
    if (cmd.action === 'partial_close') return unknown('a partial close cannot be told apart from one that did not run');
    if (!fresh) return unknown('it expired before it could be checked');
    return this.attempt(cmd, intent.label, expiresAt);
  }

  /** The account's figures now, or undefined when Open API does not give them in time (they are then left out). */
  private async figures(): Promise<AccountFigures | undefined> {
    try {
      return protocolFigures(await readAccount(this.opts.account, { timeoutMs: FIGURES_FOR_SERVICE_MS, withMargin: true }));
    } catch (err) {
      this.diag({ time: now(), event: 'figures_unavailable', accountId: this.accountId, error: (err as Error)?.message ?? String(err) });
      return undefined;
    }
  }

  private logCommand(raw: unknown, report: BridgeReport, replayed: boolean): void {
    this.log(commandLogLine(now(), this.accountId, raw as Partial<BridgeCommand>, report, replayed));
  }
}

/**
 * The ingress takes at most 5 000 symbols and 256 KB per hello; a broker listing more sends its first ones in its own
 * display order (sortingNumber), the rest are sized with the service's default step (and checked by the broker).
 */
const HELLO_SYMBOL_BYTES = 240 * 1024;
function fitHello(all: Instrument[]): Instrument[] {
  let bytes = 0;
  const out: Instrument[] = [];
  for (const s of all) {
    bytes += JSON.stringify(s).length + 1;
    if (out.length >= 5000 || bytes > HELLO_SYMBOL_BYTES) break;
    out.push(s);
  }
  return out;
}

function now(): string {
  return new Date().toISOString();
}
