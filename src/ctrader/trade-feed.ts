import fs from 'node:fs';
import type { AccountLink } from '../bridge-kit/account-link';
import { coalesced } from '../bridge-kit/coalesced';
import { writeFileWhole } from '../bridge-kit/durable-file';
import { TradeOutbox } from '../bridge-kit/trade-outbox';
import { TradeSender } from '../bridge-kit/trade-sender';
import type { Book } from '../domain/trade-events';
import type { AccountFigures } from '../domain/bridge-protocol';
import type { CtraderAccount } from './account';
import type { ExecutionEvent } from './messages';
import { eventsOfExecution, type TradeContext } from './trade-events';
import { bookOf, eventsOfHistory } from './trade-history';

/**
 * The cTrader account's trade events and book (protocol 1.5; docs/ctrader-connector.md "Trade events"): every
 * ProtoOAExecutionEvent of the account is mapped and put in the durable outbox before anything else happens to it;
 * after each account session starts (a reconnect, a restart) the deals and orders since the last look are read back
 * (ProtoOADealListReq, ProtoOAOrderListReq) with the same eventIds, so nothing missed is lost and nothing seen is
 * doubled; the book is ProtoOAReconcileReq with the positions' unrealized P&L. The bridge kit's sender sends them.
 */

/** Read back this far before the last look, for deals the server stamped a little before we asked. */
const OVERLAP_MS = 5 * 60_000;
/** A connector with no record of its last look reads back this far (a first start on an account). */
const FIRST_LOOKBACK_MS = 60 * 60_000;
/** Never further back than this, however long the connector was away (the book reconciles the rest). */
const MAX_LOOKBACK_MS = 7 * 24 * 60 * 60_000;

export type TradeCause = NonNullable<TradeContext['causedBy']>;

export interface TradeFeedOptions {
  account: CtraderAccount;
  /** The command behind an order's label (the exactly-once store). */
  commandOfLabel: (label: string) => string | undefined;
  /** The outbox file; the last look's time goes beside it (`.cursor`). Undefined: memory only (tests). */
  outboxFile?: string;
  figures: () => Promise<AccountFigures | undefined>;
  diag: (line: Record<string, unknown>) => void;
  bookEveryMs?: number;
  clock?: () => number;
}

export class CtraderTradeFeed {
  readonly outbox: TradeOutbox;
  readonly sender: TradeSender;
  private cause: TradeCause | undefined;
  private started = false;
  private readonly clock: () => number;
  readonly stats = { executions: 0, recovered: 0, recoveries: 0 };

  constructor(private readonly opts: TradeFeedOptions) {
    this.clock = opts.clock ?? Date.now;
    const accountId = opts.account.accountId;
    this.outbox = new TradeOutbox({ file: opts.outboxFile, accountId, diag: opts.diag, clock: this.clock });
    this.sender = new TradeSender({
      accountId,
      outbox: this.outbox,
      book: () => this.book(),
      figures: opts.figures,
      clock: this.clock,
      diag: opts.diag,
      ...(opts.bookEveryMs !== undefined ? { bookEveryMs: opts.bookEveryMs } : {}),
    });
    opts.account.onExecution((e, answered) => this.onExecution(e, answered));
    // The first session is read back after the hello (helloDone), not beside the hello's symbol requests.
    let sessions = 0;
    opts.account.onSession(() => {
      if (sessions++ > 0 && this.started) void this.recover();
    });
  }

  start(client: AccountLink): void {
    this.started = true;
    this.sender.start(client);
  }

  stop(): void {
    this.started = false;
    this.sender.stop();
  }

  /**
   * Runs a command (or the stop-out, a management call) so that the executions answering its requests name it as
   * their cause. Nested (an entry's reverse inside its command), the inner cause holds until it ends.
   */
  async during<T>(cause: TradeCause, run: () => Promise<T>): Promise<T> {
    const outer = this.cause;
    this.cause = cause;
    try {
      return await run();
    } finally {
      this.cause = outer;
    }
  }

  /** A hello was answered: read back what was missed, then the book and the events go. */
  async helloDone(): Promise<void> {
    await this.recover();
    await this.sender.helloDone();
  }

  private context(answered: boolean): TradeContext {
    const account = this.opts.account;
    return {
      symbolById: (id) => account.symbolById(id),
      commandOfLabel: this.opts.commandOfLabel,
      // Only an execution that answered our own request is the running command's; a pushed one (an SL hit meanwhile) is not.
      ...(answered && this.cause ? { causedBy: this.cause } : {}),
    };
  }

  private onExecution(e: ExecutionEvent, answered: boolean): void {
    this.stats.executions++;
    try {
      const events = eventsOfExecution(e, this.context(answered), this.clock());
      if (events.length === 0) return;
      this.outbox.add(events);
      if (this.started) void this.sender.flush();
    } catch (err) {
      this.opts.diag({ time: this.now(), event: 'trade_event_error', accountId: this.opts.account.accountId, error: (err as Error)?.stack ?? String(err) });
    }
  }

  /** One read-back at a time; a session that starts during one asks for another after it. */
  readonly recover = coalesced(async () => {
    try {
      await this.readBack();
    } catch (err) {
      this.opts.diag({
        time: this.now(),
        event: 'trade_history_error',
        accountId: this.opts.account.accountId,
        error: (err as Error)?.message ?? String(err),
      });
    }
  });

  private async readBack(): Promise<void> {
    const account = this.opts.account;
    const to = this.clock();
    const last = this.readCursor();
    const from = Math.max(to - MAX_LOOKBACK_MS, last === undefined ? to - FIRST_LOOKBACK_MS : last - OVERLAP_MS);
    const deals = await account.dealHistory(from, to + 60_000);
    const orders = await account.orderHistory(from, to + 60_000);
    const { positions } = await account.reconcile();
    const events = eventsOfHistory({ deals, orders, positions, from }, this.context(false), to);
    const added = this.outbox.add(events);
    this.stats.recoveries++;
    this.stats.recovered += added;
    // Only once the events are in the outbox: a crash before this reads the same window again.
    this.writeCursor(to);
    if (added > 0) {
      this.opts.diag({ time: this.now(), event: 'trade_events_recovered', accountId: account.accountId, events: added, from: new Date(from).toISOString() });
      if (this.started) void this.sender.flush();
    }
  }

  private async book(): Promise<Book> {
    const account = this.opts.account;
    const takenAt = this.clock();
    const { positions, orders } = await account.reconcile();
    const unrealized =
      positions.length > 0 ? await account.unrealizedPnl({ timeoutMs: 5_000 }).catch(() => new Map<number, number>()) : new Map<number, number>();
    return bookOf(positions, orders, unrealized, { symbolById: (id) => account.symbolById(id) }, takenAt);
  }

  private get cursorFile(): string | undefined {
    return this.opts.outboxFile ? `${this.opts.outboxFile}.cursor` : undefined;
  }

  private memoryCursor: number | undefined;

  private readCursor(): number | undefined {
    const file = this.cursorFile;
    if (!file) return this.memoryCursor;
    try {
      const v = (JSON.parse(fs.readFileSync(file, 'utf8')) as { lastLookAt?: unknown }).lastLookAt;
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
    } catch {
      return undefined;
    }
  }

  private writeCursor(at: number): void {
    this.memoryCursor = at;
    const file = this.cursorFile;
    if (file) writeFileWhole(file, JSON.stringify({ lastLookAt: at }), { durable: true });
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }
}
