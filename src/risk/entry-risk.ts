import { lotsForRisk, riskAmountOf, type InstrumentForSizing } from './sizing';
import type { EquityMarks } from './equity-marks';

/**
 * What a bridge does with an entry's `lossGuards` and `riskSizing` (docs/risk-sizing.md), once it has read its live
 * account: one implementation for every TypeScript bridge (the paper bridge, the cTrader connector), so their
 * guards trip at the same figures and their lots and messages are the same for the same account and symbol.
 */

/** The command's loss guards (protocol 1.1). */
export interface LossGuards {
  dailyLossAmount?: number;
  dailyLossPercent?: number;
  timezone: string;
  maxDrawdownPercent?: number;
  drawdownResetAt?: string;
}

/** The command's sizing by risk (protocol 1.1). */
export interface RiskSizing {
  basis: 'equity_percent' | 'balance_percent' | 'fixed_amount';
  value: number;
  maxLots?: number;
}

export interface LiveFigures {
  balance: number;
  equity: number;
  currency: string;
}

export interface EntryRefusal {
  retcode: 'risk_daily_loss_limit' | 'risk_max_drawdown' | 'risk_volume_below_minimum' | 'risk_stop_loss_required' | 'risk_figures_unavailable';
  message: string;
}

/** Records the equity in the marks, then the refusal of the first guard that trips, or undefined. */
export function checkLossGuards(guards: LossGuards, marks: EquityMarks, account: LiveFigures, nowMs: number): EntryRefusal | undefined {
  // Every comparison with NaN is false: an unreadable equity would pass every guard (and poison the marks). Fail closed.
  if (!Number.isFinite(account.equity)) return unreadable('equity', account.equity);
  const { dayOpen, peak } = marks.observe(account.equity, nowMs, guards.timezone, guards.drawdownResetAt);
  const dailyLimit = guards.dailyLossAmount ?? (guards.dailyLossPercent !== undefined ? (dayOpen * guards.dailyLossPercent) / 100 : undefined);
  if (dailyLimit !== undefined && dayOpen - account.equity >= dailyLimit) {
    return {
      retcode: 'risk_daily_loss_limit',
      message: `equity ${fmt(account.equity)} is ${fmt(dayOpen - account.equity)} below the day's opening ${fmt(dayOpen)} ${account.currency}; limit ${fmt(dailyLimit)}`,
    };
  }
  if (guards.maxDrawdownPercent !== undefined && peak > 0 && ((peak - account.equity) / peak) * 100 >= guards.maxDrawdownPercent) {
    return {
      retcode: 'risk_max_drawdown',
      message: `equity ${fmt(account.equity)} is ${fmt(((peak - account.equity) / peak) * 100)}% below its peak ${fmt(peak)} ${account.currency}; limit ${guards.maxDrawdownPercent}%`,
    };
  }
  return undefined;
}

/**
 * The lots of an entry sized by risk, with the note the bridge reports (the figures it used), or the refusal.
 * `stopDistance` is in price units; `digits` only formats it.
 */
export function sizeEntry(input: {
  sizing: RiskSizing;
  account: LiveFigures;
  stopDistance: number;
  digits: number;
  instrument: InstrumentForSizing;
}): { lots: number; note: string } | { refusal: EntryRefusal } {
  const { sizing, account, stopDistance } = input;
  if (sizing.basis !== 'fixed_amount') {
    const figure = sizing.basis === 'equity_percent' ? 'equity' : 'balance';
    if (!Number.isFinite(account[figure])) return { refusal: unreadable(figure, account[figure]) };
  }
  const riskAmount = riskAmountOf({ kind: sizing.basis, value: sizing.value }, account);
  const sized = lotsForRisk({ riskAmount, stopDistance, instrument: input.instrument, ...(sizing.maxLots !== undefined ? { maxLots: sizing.maxLots } : {}) });
  const basis =
    sizing.basis === 'fixed_amount'
      ? `${fmt(sizing.value)} ${account.currency}`
      : `${sizing.value}% of ${sizing.basis === 'equity_percent' ? 'equity' : 'balance'}`;
  if (!sized.ok)
    return { refusal: { retcode: sized.reason, message: `risk ${basis} = ${fmt(riskAmount)} ${account.currency} is less than one minimum lot at this stop` } };
  const note =
    `sized ${sized.lots} lots by risk: ${basis} = ${fmt(riskAmount)} ${account.currency} (balance ${fmt(account.balance)}, equity ${fmt(account.equity)}); ` +
    `stop ${stopDistance.toFixed(input.digits)} away, ${fmt(sized.lossPerLot)} ${account.currency} a lot${sized.capped ? '; capped' : ''}`;
  return { lots: sized.lots, note };
}

function unreadable(figure: 'equity' | 'balance', value: number): EntryRefusal {
  return {
    retcode: 'risk_figures_unavailable',
    message: `the account's ${figure} reads ${String(value)}; the entry was not placed rather than sized or guarded on it`,
  };
}

const fmt = (n: number) => n.toFixed(2);
