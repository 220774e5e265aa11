import { isOpening } from '../domain/actions';
import type { AccountSnapshot, SignalInstruction } from '../domain/workflow-input';
import type { RiskReason } from '../domain/reason-codes';
import type { RiskSettings } from '../domain/risk-settings';
import { DEFAULT_VOLUME_RULES, type VolumeRules } from '../domain/volume-rules';
import { mapSymbol } from './symbols';
import type { BridgeCommand } from '../domain/bridge-protocol';
import { featuresNeeded, missingFeatures, resolveManagement, type CommandManagement } from '../domain/management';

/**
 * The account owner's risk rules, as pure functions of the signal, the settings snapshot taken at acceptance and
 * the acceptance time, so the account workflow runs them deterministically. A refusal carries a stable reason code
 * (docs/reason-codes.md).
 */

/** Flat like the command: the entry's trade management with the owner's defaults merged and resolved (protocol 1.6). */
interface PlannedOrder extends CommandManagement {
  symbol?: string;
  /** Absent when the bridge sizes the entry by risk (riskSizing). */
  volume?: number;
  riskSizing?: BridgeCommand['riskSizing'];
  lossGuards?: BridgeCommand['lossGuards'];
  maxOpenPositionsPerSymbol?: number;
}

export type Plan = { ok: true; order: PlannedOrder } | { ok: false; reason: RiskReason };

export function planOrder(
  signal: SignalInstruction,
  account: AccountSnapshot,
  times: { acceptedAtMs: number; nowMs: number; expiresAtMs: number },
  volumeRules: VolumeRules = DEFAULT_VOLUME_RULES,
): Plan {
  if (times.nowMs > times.expiresAtMs) return { ok: false, reason: 'signal_expired' };
  const risk = account.risk;
  const symbol = signal.symbol === undefined ? undefined : mapSymbol(signal.symbol, account.symbols);
  if (!isOpening(signal.action)) return { ok: true, order: { symbol } };

  if (risk.closeOnly) return { ok: false, reason: 'risk_close_only' };
  const traded = signal.symbol ?? '';
  if (risk.allowedSymbols && !includesSymbol(risk.allowedSymbols, traded)) return { ok: false, reason: 'risk_symbol_not_allowed' };
  if (includesSymbol(risk.blockedSymbols, traded)) return { ok: false, reason: 'risk_symbol_blocked' };
  if (risk.tradingHours && !withinTradingHours(risk.tradingHours, times.acceptedAtMs)) {
    return { ok: false, reason: 'risk_outside_trading_hours' };
  }
  const hasStopLoss = signal.sl !== undefined || signal.slPips !== undefined;
  const byRisk = risk.sizing.mode === 'risk_percent' || risk.sizing.mode === 'risk_amount';
  // Sizing by risk needs the distance to the stop: never sized on a guess.
  if ((risk.requireStopLoss || byRisk) && !hasStopLoss) return { ok: false, reason: 'risk_stop_loss_required' };
  const features = account.bridgeFeatures ?? [];
  const guards = risk.lossGuards;
  const guarding =
    guards !== undefined && (guards.dailyLossAmount !== undefined || guards.dailyLossPercent !== undefined || guards.maxDrawdownPercent !== undefined);
  const perSymbol = risk.maxOpenPositionsPerSymbol;
  // Nobody opens a trade the owner believes a stop-out protects while the bridge cannot stop it out.
  const stopOut = guards?.stopOut === true;
  if (
    (byRisk && !features.includes('risk_sizing')) ||
    (guarding && !features.includes('loss_guards')) ||
    (perSymbol !== undefined && !features.includes('position_limits')) ||
    (stopOut && !features.includes('stop_out'))
  ) {
    return { ok: false, reason: 'risk_sizing_unsupported' };
  }
  // The signal's own management passed the 412 at acceptance; the owner's defaults may ask for more than the bridge can.
  const management = resolveManagement(signal, risk.management);
  if (missingFeatures(featuresNeeded(management), features).length > 0) return { ok: false, reason: 'management_unsupported' };
  const lossGuards = guarding && guards ? withoutStopOutOff(guards) : undefined;
  const limits = perSymbol !== undefined ? { maxOpenPositionsPerSymbol: perSymbol } : {};
  if (risk.sizing.mode === 'risk_percent' || risk.sizing.mode === 'risk_amount') {
    const riskSizing = {
      basis:
        risk.sizing.mode === 'risk_amount'
          ? ('fixed_amount' as const)
          : risk.sizing.of === 'equity'
            ? ('equity_percent' as const)
            : ('balance_percent' as const),
      value: risk.sizing.mode === 'risk_amount' ? risk.sizing.amount : risk.sizing.percent,
      ...(risk.maxVolume !== undefined ? { maxLots: risk.maxVolume } : {}),
    };
    return { ok: true, order: { symbol, riskSizing, ...(lossGuards ? { lossGuards } : {}), ...limits, ...management } };
  }
  const volume = sizeVolume(signal.volume ?? 0, risk.sizing, volumeRules);
  if (risk.maxVolume !== undefined && volume > risk.maxVolume) return { ok: false, reason: 'risk_max_volume_exceeded' };
  if (volume < volumeRules.min) return { ok: false, reason: 'risk_volume_below_minimum' };
  return { ok: true, order: { symbol, volume, ...(lossGuards ? { lossGuards } : {}), ...limits, ...management } };
}

/** The guards as the command carries them: `stopOut` only when on, so a bridge older than protocol 1.4 never sees it. */
function withoutStopOutOff(guards: NonNullable<RiskSettings['lossGuards']>): NonNullable<PlannedOrder['lossGuards']> {
  const { stopOut, ...rest } = guards;
  return stopOut === true ? { ...rest, stopOut } : rest;
}

/** The owner's sizing mode applied to the signal's lots, rounded down to the volume step (never up: never more risk). */
export function sizeVolume(signalLots: number, sizing: RiskSettings['sizing'], rules: VolumeRules): number {
  const raw = sizing.mode === 'fixed' ? sizing.lots : sizing.mode === 'multiplier' ? signalLots * sizing.factor : signalLots;
  const steps = Math.floor(raw / rules.step + 1e-9);
  return Number((steps * rules.step).toFixed(decimalsOf(rules.step)));
}

/** Decimal places of a step as written (0.25 → 2, 0.01 → 2, 1 → 0), so rounding never moves off the step. */
function decimalsOf(step: number): number {
  const [mantissa = '', exponent] = step.toExponential().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

function includesSymbol(list: readonly string[], symbol: string): boolean {
  const wanted = symbol.toUpperCase();
  return list.some((s) => s.toUpperCase() === wanted);
}

/** UTC windows by weekday; a window whose `to` is before its `from` runs past midnight into the next day. */
export function withinTradingHours(windows: RiskSettings['tradingHours'] & object, atMs: number): boolean {
  const at = new Date(atMs);
  const day = at.getUTCDay();
  const minute = at.getUTCHours() * 60 + at.getUTCMinutes();
  const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  return windows.some((w) => {
    const from = toMinutes(w.from);
    const to = toMinutes(w.to);
    if (from <= to) return w.days.includes(day) && minute >= from && minute < to;
    const yesterday = (day + 6) % 7;
    return (w.days.includes(day) && minute >= from) || (w.days.includes(yesterday) && minute < to);
  });
}
