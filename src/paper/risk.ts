import { isOpening } from '../domain/actions';
import type { BridgeCommand } from '../domain/bridge-protocol';
import { lotsForRisk, riskAmountOf, tickValueOf } from '../risk/sizing';
import type { ExecutionResult, PaperBroker } from './broker';

/**
 * What a bridge does with an entry's `riskSizing` and `lossGuards` (docs/risk-sizing.md), on the live account, at the
 * instant of execution and one command at a time: so the figures are never stale, and two entries racing each other
 * cannot both pass a guard that only one fits under (the second sees the account the first left).
 */

/** What the marks are on disk (in the bridge's state file), so a restarted bridge keeps its day's opening and peak. */
export interface EquityMarksState {
  day?: string;
  dayOpen: number;
  peak: number;
  resetApplied: string;
}

/** The equity marks the loss guards compare against, kept by the bridge as it sees its account. */
export class EquityMarks {
  private day: string | undefined;
  private dayOpen = 0;
  private peak = 0;
  private resetApplied = '';

  constructor(saved?: EquityMarksState) {
    if (!saved) return;
    this.day = saved.day;
    this.dayOpen = saved.dayOpen;
    this.peak = saved.peak;
    this.resetApplied = saved.resetApplied;
  }

  state(): EquityMarksState {
    return { ...(this.day !== undefined ? { day: this.day } : {}), dayOpen: this.dayOpen, peak: this.peak, resetApplied: this.resetApplied };
  }

  /**
   * Records the equity now; the first reading of a trading day (in `timezone`) is that day's opening equity. An
   * owner's reset newer than the last one applied starts the peak again from this equity.
   */
  observe(equity: number, nowMs: number, timezone: string, drawdownResetAt?: string): { dayOpen: number; peak: number } {
    if (drawdownResetAt !== undefined && Date.parse(drawdownResetAt) > (Date.parse(this.resetApplied) || 0)) {
      this.resetApplied = drawdownResetAt;
      this.peak = equity;
    }
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(nowMs);
    if (day !== this.day) {
      this.day = day;
      this.dayOpen = equity;
    }
    this.peak = Math.max(this.peak, equity);
    return { dayOpen: this.dayOpen, peak: this.peak };
  }
}

type Refusal = Pick<ExecutionResult, 'status' | 'retcode' | 'message'> & { status: 'rejected' };

/** The command to place (with its lots when sized by risk, and why), or the refusal to report. */
export function applyRisk(
  command: BridgeCommand,
  broker: PaperBroker,
  marks: EquityMarks,
  nowMs: number,
): { command: BridgeCommand; note?: string } | { refusal: Refusal } {
  if (!isOpening(command.action) || (!command.riskSizing && !command.lossGuards)) return { command };
  const account = broker.account();
  const refuse = (retcode: string, message: string) => ({ refusal: { status: 'rejected' as const, retcode, message } });

  const guards = command.lossGuards;
  if (guards) {
    const { dayOpen, peak } = marks.observe(account.equity, nowMs, guards.timezone, guards.drawdownResetAt);
    const dailyLimit = guards.dailyLossAmount ?? (guards.dailyLossPercent !== undefined ? (dayOpen * guards.dailyLossPercent) / 100 : undefined);
    if (dailyLimit !== undefined && dayOpen - account.equity >= dailyLimit) {
      return refuse(
        'risk_daily_loss_limit',
        `equity ${fmt(account.equity)} is ${fmt(dayOpen - account.equity)} below the day's opening ${fmt(dayOpen)} ${account.currency}; limit ${fmt(dailyLimit)}`,
      );
    }
    if (guards.maxDrawdownPercent !== undefined && peak > 0 && ((peak - account.equity) / peak) * 100 >= guards.maxDrawdownPercent) {
      return refuse(
        'risk_max_drawdown',
        `equity ${fmt(account.equity)} is ${fmt(((peak - account.equity) / peak) * 100)}% below its peak ${fmt(peak)} ${account.currency}; limit ${guards.maxDrawdownPercent}%`,
      );
    }
  }

  const sizing = command.riskSizing;
  if (!sizing) return { command };
  const spec = command.symbol === undefined ? undefined : broker.resolveSymbol(command.symbol);
  const quote = spec ? broker.quote(spec.name) : undefined;
  if (!spec || !quote) return refuse('risk_volume_unsizable', `no price for ${command.symbol ?? 'the symbol'} to size the entry with`);
  const entry = command.price ?? (command.action.startsWith('buy') ? quote.ask : quote.bid);
  const stopDistance = command.sl !== undefined ? Math.abs(entry - command.sl) : command.slPips !== undefined ? command.slPips * spec.pip : Number.NaN;
  const tickSize = 10 ** -spec.digits;
  let tickValue: number;
  try {
    tickValue = tickValueOf(tickSize, spec.contractSize, broker.valueInAccount(1, spec.quoteCurrency));
  } catch {
    return refuse('risk_volume_unsizable', `no rate from ${spec.quoteCurrency} to ${account.currency} to size the entry with`);
  }
  const riskAmount = riskAmountOf({ kind: sizing.basis, value: sizing.value }, account);
  const sized = lotsForRisk({
    riskAmount,
    stopDistance,
    instrument: { tickSize, tickValue, volumeMin: spec.minVolume, volumeStep: spec.volumeStep, volumeMax: spec.maxVolume },
    ...(sizing.maxLots !== undefined ? { maxLots: sizing.maxLots } : {}),
  });
  const basis =
    sizing.basis === 'fixed_amount'
      ? `${fmt(sizing.value)} ${account.currency}`
      : `${sizing.value}% of ${sizing.basis === 'equity_percent' ? 'equity' : 'balance'}`;
  if (!sized.ok) return refuse(sized.reason, `risk ${basis} = ${fmt(riskAmount)} ${account.currency} is less than one minimum lot at this stop`);
  const note =
    `sized ${sized.lots} lots by risk: ${basis} = ${fmt(riskAmount)} ${account.currency} (balance ${fmt(account.balance)}, equity ${fmt(account.equity)}); ` +
    `stop ${stopDistance.toFixed(spec.digits)} away, ${fmt(sized.lossPerLot)} ${account.currency} a lot${sized.capped ? '; capped' : ''}`;
  const { riskSizing: _sizing, ...rest } = command;
  return { command: { ...rest, volume: sized.lots }, note };
}

const fmt = (n: number) => n.toFixed(2);
