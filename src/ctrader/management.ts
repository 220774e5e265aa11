import { coalesced } from '../bridge-kit/coalesced';
import { ManagedTrades } from '../bridge-kit/managed-trades';
import type { Serial } from '../bridge-kit/serial';
import {
  resume,
  startManaging,
  type BrokerPosition,
  type Intent,
  type ManagedPosition,
  type ManagementAsked,
  type Quote,
} from '../bridge-kit/trade-management';
import type { BridgeCommand } from '../domain/bridge-protocol';
import type { CtraderAccount } from './account';
import { FILLED, REPLACED } from './completions';
import { OpenApiError } from './connection';
import { ExecutionType, PayloadType, PositionStatus, TradeSide, type ExecutionEvent, type Position } from './messages';
import type { TradeCause } from './trade-feed';
import { lotsToVolume, pipSize, volumeToLots, type SymbolSpec } from './units';
import { WaitingEntries, type WaitingEntry } from './waiting-entries';

/**
 * The connector's trade management (protocol 1.6; docs/ctrader-connector.md "Trade management"): the bridge kit's
 * engine and state file (src/bridge-kit/managed-trades.ts) fed with the account's spot events, its calls made with
 * ProtoOAAmendPositionSLTPReq (the take profit kept) and ProtoOAClosePositionReq (the level's volume), one at a time
 * beside the commands. A position is managed from its fill: the entry's management fields wait in
 * `<accountId>.management-entries.json` under the order's label until an execution fills that label (a market order
 * at once, a pending order when it triggers). What the broker holds always wins: a change made elsewhere (a command,
 * the trader's hand) is taken from its execution event, and after a restart or a new session the state is squared
 * with ProtoOAReconcileReq.
 */

export type ManagementAccount = Pick<
  CtraderAccount,
  'accountId' | 'call' | 'reconcile' | 'symbol' | 'symbolById' | 'quote' | 'lastQuote' | 'onSpot' | 'onExecution' | 'onSession'
>;

export interface CtraderManagementOptions {
  account: ManagementAccount;
  /** The engine's state (ManagedTrades); the entries waiting for their fill go beside it. */
  file: string;
  serial: Serial;
  /** Runs a management call so that the executions answering it carry its cause (the trade feed's `during`). */
  around: <T>(cause: TradeCause, run: () => Promise<T>) => Promise<T>;
  diag: (line: Record<string, unknown>) => void;
}

/** How long to wait between looks at the broker when a call's answer was lost. */
const VERIFY_EVERY_MS = 1_000;

function managementAsked(cmd: BridgeCommand): ManagementAsked | undefined {
  const asked: ManagementAsked = {
    ...(cmd.trailDistancePips !== undefined ? { trailDistancePips: cmd.trailDistancePips } : {}),
    ...(cmd.trailTriggerPips !== undefined ? { trailTriggerPips: cmd.trailTriggerPips } : {}),
    ...(cmd.trailStepPips !== undefined ? { trailStepPips: cmd.trailStepPips } : {}),
    ...(cmd.breakevenTriggerPips !== undefined ? { breakevenTriggerPips: cmd.breakevenTriggerPips } : {}),
    ...(cmd.breakevenOffsetPips !== undefined ? { breakevenOffsetPips: cmd.breakevenOffsetPips } : {}),
    ...(cmd.takeProfits !== undefined ? { takeProfits: cmd.takeProfits } : {}),
  };
  const any = asked.trailDistancePips !== undefined || asked.breakevenTriggerPips !== undefined || (asked.takeProfits?.length ?? 0) > 0;
  return any ? asked : undefined;
}

export class CtraderManagement {
  readonly managed: ManagedTrades;
  private readonly waiting: WaitingEntries;
  /** Labels of entries being placed right now (not to be dropped by a look at the broker meanwhile). */
  private readonly placing = new Set<string>();
  private readonly inFlight = new Set<string>();
  /** Calls made per ticket: a look at the broker taken before one of them is older than the state. */
  private readonly calls = new Map<string, number>();
  /** Tickets changed elsewhere while a call of ours was in flight: looked at again after it. */
  private readonly stale = new Set<string>();
  /** Quotes that came before the state was squared with the broker (after a start): replayed then. */
  private readonly held = new Map<string, Quote>();
  private squared = false;
  private helloSeen = false;
  private ownCall = false;
  private stopped = false;
  readonly stats = { calls: 0, refused: 0, refreshes: 0 };

  constructor(private readonly opts: CtraderManagementOptions) {
    this.managed = new ManagedTrades({
      file: opts.file,
      broker: { moveStop: (p, i) => this.moveStop(p, i), closeLevel: (p, i) => this.closeLevel(p, i) },
      diag: (line) => opts.diag({ ...line, accountId: this.account.accountId }),
    });
    this.waiting = new WaitingEntries(`${opts.file.replace(/\.json$/, '')}-entries.json`);
    this.account.onSpot((symbolId) => this.onSpot(symbolId));
    this.account.onExecution((e, answered) => this.onExecution(e, answered && this.ownCall));
    this.account.onSession(() => {
      if (this.helloSeen) void this.refresh();
    });
  }

  private get account(): ManagementAccount {
    return this.opts.account;
  }

  stop(): void {
    this.stopped = true;
  }

  /** After each hello (the symbols are loaded): square the state with the broker and subscribe to its symbols. */
  helloDone(): Promise<void> {
    this.helloSeen = true;
    return this.refresh();
  }

  /** Before an entry is sent: its management fields wait for its fill under the order's label (on disk). */
  expect(label: string, cmd: BridgeCommand): void {
    const asked = managementAsked(cmd);
    if (!asked) return;
    this.placing.add(label);
    this.waiting.add({ label, asked, at: Date.now() });
  }

  /** The entry's command ended: a market entry that did not fill, or any entry refused, waits no more. */
  entryDone(label: string, filled: boolean, market: boolean): void {
    this.placing.delete(label);
    if (!this.waiting.get(label) || (filled && !market)) return;
    this.waiting.remove(label);
    // A market fill whose execution did not start management (it never came): the broker's position decides.
    if (filled) void this.refresh();
  }

  private onSpot(symbolId: number): void {
    if (this.stopped) return;
    const spec = this.account.symbolById(symbolId);
    const quote = this.account.lastQuote(symbolId);
    if (!spec || !quote) return;
    if (!this.squared) {
      this.held.set(spec.name, quote);
      return;
    }
    void this.feed(spec.name, quote);
  }

  private replay(symbol: string): void {
    const spec = this.account.symbol(symbol);
    const quote = spec && this.account.lastQuote(spec.symbolId);
    if (quote && this.squared && !this.stopped) void this.feed(symbol, quote);
  }

  private async feed(symbol: string, quote: Quote): Promise<void> {
    try {
      await this.managed.onQuote(symbol, quote);
    } catch (err) {
      this.opts.diag({ event: 'management_error', accountId: this.account.accountId, error: (err as Error)?.stack ?? String(err) });
    }
  }

  // ---- executions ----------------------------------------------------------------------------------------------

  /** `own`: it answered one of our management calls (settled by the engine itself). */
  private onExecution(e: ExecutionEvent, own: boolean): void {
    try {
      const label = e.order?.tradeData.label;
      const type = e.executionType;
      if ((type === ExecutionType.ORDER_CANCELLED || type === ExecutionType.ORDER_EXPIRED) && this.waiting.remove(label)) return;
      const position = e.position;
      if (!position || own) return;
      const ticket = String(position.positionId);
      const fill = type === ExecutionType.ORDER_FILLED || type === ExecutionType.ORDER_PARTIAL_FILL;
      const waiting = this.waiting.get(label);
      if (fill && e.deal && !e.deal.closePositionDetail && waiting) {
        this.begin(position, waiting, e.deal.executionPrice);
        return;
      }
      if (!this.managed.get(ticket)) return;
      if (position.positionStatus === PositionStatus.POSITION_STATUS_CLOSED) {
        this.managed.forget(ticket);
        return;
      }
      if (fill || type === ExecutionType.ORDER_REPLACED) this.takeBrokers(ticket, position);
    } catch (err) {
      this.opts.diag({ event: 'management_error', accountId: this.account.accountId, error: (err as Error)?.stack ?? String(err) });
    }
  }

  /** A managed position changed elsewhere (a command, the trader): its stop, target and volume as the broker has them. */
  private takeBrokers(ticket: string, position: Position): void {
    if (this.inFlight.has(ticket)) {
      this.stale.add(ticket);
      return;
    }
    this.square(ticket, this.brokerView(position));
  }

  private square(ticket: string, broker: BrokerPosition | null): void {
    const saved = this.managed.get(ticket);
    if (!saved) return;
    const now = resume(saved, broker);
    if (now === null) this.managed.forget(ticket);
    else this.managed.add(now);
  }

  private brokerView(position: Position): BrokerPosition {
    const spec = this.account.symbolById(position.tradeData.symbolId);
    return {
      sl: position.stopLoss ?? null,
      tp: position.takeProfit ?? null,
      volume: spec ? volumeToLots(position.tradeData.volume, spec) : 0,
    };
  }

  /** A waiting entry filled: the position is managed from now on (written down before its report leaves). */
  private begin(position: Position, waiting: WaitingEntry, executionPrice: number | undefined): void {
    const spec = this.account.symbolById(position.tradeData.symbolId);
    this.waiting.remove(waiting.label);
    const openPrice = position.price ?? executionPrice;
    if (!spec || openPrice === undefined) {
      this.opts.diag({ event: 'management_not_started', accountId: this.account.accountId, ticket: String(position.positionId) });
      return;
    }
    const started = startManaging(
      waiting.asked,
      {
        ticket: String(position.positionId),
        symbol: spec.name,
        side: position.tradeData.tradeSide === TradeSide.BUY ? 'buy' : 'sell',
        openPrice,
        volume: volumeToLots(position.tradeData.volume, spec),
        sl: position.stopLoss ?? null,
        tp: position.takeProfit ?? null,
      },
      rulesOf(spec),
    );
    if (!started) return;
    this.managed.add(started);
    void this.watch(spec);
  }

  /** Spots of a managed symbol (once per session), and the latest one now, for a position already in profit. */
  private async watch(spec: SymbolSpec): Promise<void> {
    try {
      await this.account.quote(spec.symbolId);
    } catch (err) {
      this.opts.diag({ event: 'management_no_quotes', accountId: this.account.accountId, symbol: spec.name, error: (err as Error)?.message ?? String(err) });
      return;
    }
    const quote = this.account.lastQuote(spec.symbolId);
    if (quote && this.squared) await this.feed(spec.name, quote);
  }

  // ---- the broker's side of the engine -------------------------------------------------------------------------

  private moveStop(p: ManagedPosition, intent: Extract<Intent, { kind: 'modify' }>): Promise<'done' | 'failed'> {
    const cause: TradeCause = {
      kind: 'management',
      cause: intent.cause,
      ...(intent.trailActiveAt !== undefined ? { trailActiveAt: intent.trailActiveAt } : {}),
    };
    // Both levels: whether an amend without takeProfit removes it is not in the definitions (docs/ctrader-connector.md).
    const req = { positionId: Number(p.ticket), stopLoss: intent.sl, ...(intent.tp !== null ? { takeProfit: intent.tp } : {}) };
    return this.brokerCall(
      p,
      cause,
      () => this.account.call(PayloadType.PROTO_OA_AMEND_POSITION_SLTP_REQ, req, { done: REPLACED }),
      (held) => {
        const half = 0.5 * 10 ** -p.digits;
        return held?.stopLoss !== undefined && Math.abs(held.stopLoss - intent.sl) <= half;
      },
    );
  }

  private closeLevel(p: ManagedPosition, intent: Extract<Intent, { kind: 'partial_close' }>): Promise<'done' | 'failed'> {
    const spec = this.account.symbol(p.symbol);
    if (!spec) return Promise.resolve('failed');
    const volume = lotsToVolume(intent.volume, spec);
    const before = lotsToVolume(intent.volumeBefore, spec);
    return this.brokerCall(
      p,
      { kind: 'management', cause: 'take_profit_level' },
      () => this.account.call(PayloadType.PROTO_OA_CLOSE_POSITION_REQ, { positionId: Number(p.ticket), volume }, { done: FILLED }),
      (held) => held === undefined || held.tradeData.volume <= before - volume,
    );
  }

  /**
   * One management call, in turn with the commands. A refusal did nothing (`failed`, the engine tries again on a later
   * quote). A lost answer is settled by what the broker holds, asked until it answers: never guessed, so a level is not
   * closed twice and a stop not moved twice.
   */
  private async brokerCall(
    p: ManagedPosition,
    cause: TradeCause,
    send: () => Promise<unknown>,
    happened: (held: Position | undefined) => boolean,
  ): Promise<'done' | 'failed'> {
    const ticket = p.ticket;
    this.inFlight.add(ticket);
    this.calls.set(ticket, (this.calls.get(ticket) ?? 0) + 1);
    this.stats.calls++;
    try {
      await this.opts.serial.run(() =>
        this.opts.around(cause, async () => {
          this.ownCall = true;
          try {
            await send();
          } finally {
            this.ownCall = false;
          }
        }),
      );
      return 'done';
    } catch (err) {
      if (err instanceof OpenApiError) {
        this.stats.refused++;
        this.opts.diag({ event: 'management_refused', accountId: this.account.accountId, ticket, errorCode: err.errorCode, description: err.description });
        this.stale.add(ticket);
        return 'failed';
      }
      return (await this.verify(ticket, happened)) ? 'done' : 'failed';
    } finally {
      this.inFlight.delete(ticket);
      if (this.stale.delete(ticket)) void this.refresh();
      // Quotes that came while the call was out were not stepped on (one call at a time per position): the latest
      // one is, once the engine has settled this call (a spot comes only when the price changes).
      setImmediate(() => this.replay(p.symbol));
    }
  }

  private async verify(ticket: string, happened: (held: Position | undefined) => boolean): Promise<boolean> {
    for (;;) {
      if (this.stopped) await new Promise<never>(() => undefined); // the state on disk keeps the call in flight for the next start
      try {
        const { positions } = await this.account.reconcile();
        return happened(positions.find((p) => String(p.positionId) === ticket));
      } catch {
        await new Promise((resolve) => setTimeout(resolve, VERIFY_EVERY_MS));
      }
    }
  }

  // ---- squaring with the broker --------------------------------------------------------------------------------

  /** ProtoOAReconcileReq: every managed position (none in flight) squared with the broker; waiting entries filled meanwhile start. */
  readonly refresh = coalesced(async () => {
    try {
      await this.refreshOnce();
    } catch (err) {
      this.opts.diag({ event: 'management_refresh_failed', accountId: this.account.accountId, error: (err as Error)?.message ?? String(err) });
    }
  });

  private async refreshOnce(): Promise<void> {
    const callsBefore = new Map(this.calls);
    const { positions, orders } = await this.account.reconcile();
    this.stats.refreshes++;
    const byTicket = new Map(positions.map((p) => [String(p.positionId), p]));
    for (const ticket of this.managed.tickets()) {
      if (this.inFlight.has(ticket) || (this.calls.get(ticket) ?? 0) !== (callsBefore.get(ticket) ?? 0)) continue;
      const held = byTicket.get(ticket);
      this.square(ticket, held ? this.brokerView(held) : null);
    }
    const pendingLabels = new Set(orders.map((o) => o.tradeData.label));
    for (const w of this.waiting.all()) {
      const filled = positions.find((p) => p.tradeData.label === w.label);
      if (filled && !this.managed.get(String(filled.positionId))) this.begin(filled, w, undefined);
      else if (!filled && !pendingLabels.has(w.label) && !this.placing.has(w.label)) this.waiting.remove(w.label);
    }
    for (const name of this.managed.symbols()) {
      const spec = this.account.symbol(name);
      if (spec) await this.watch(spec);
    }
    if (!this.squared) {
      this.squared = true;
      for (const [symbol, quote] of this.held) await this.feed(symbol, quote);
      this.held.clear();
    }
  }
}

function rulesOf(spec: SymbolSpec): { pip: number; digits: number; volumeStep: number; volumeMin: number } {
  return { pip: pipSize(spec), digits: spec.digits, volumeStep: volumeToLots(spec.stepVolume, spec), volumeMin: volumeToLots(spec.minVolume, spec) };
}
