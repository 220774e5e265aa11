/**
 * Sizing by risk (docs/risk-sizing.md): the lots that lose `riskAmount` (account currency) if the stop loss is hit.
 * Pure, so the bridge that executes the order runs it on its live account at the instant of execution, and the unit
 * table checks it by hand. Never rounds up: the lots are floored to the volume step, so the loss at the stop is at
 * most the amount at risk; below the minimum lot the entry is refused, never sized up to it.
 */

export interface RiskBasis {
  /** What the owner risks per trade: a percentage of equity or balance, or a fixed amount of account currency. */
  kind: 'equity_percent' | 'balance_percent' | 'fixed_amount';
  /** The percentage (0 < p ≤ 10) or the amount. */
  value: number;
}

export interface AccountFigures {
  balance: number;
  equity: number;
  currency: string;
}

export interface InstrumentForSizing {
  /** The smallest price move. */
  tickSize: number;
  /** What one tick is worth for one lot, in the account's currency. */
  tickValue: number;
  volumeMin: number;
  volumeStep: number;
  volumeMax: number;
}

export type Sized =
  | { ok: true; lots: number; riskAmount: number; lossPerLot: number; capped: boolean }
  | { ok: false; reason: 'risk_volume_below_minimum' | 'risk_stop_loss_required' };

export function riskAmountOf(basis: RiskBasis, figures: Pick<AccountFigures, 'balance' | 'equity'>): number {
  switch (basis.kind) {
    case 'equity_percent':
      return (figures.equity * basis.value) / 100;
    case 'balance_percent':
      return (figures.balance * basis.value) / 100;
    case 'fixed_amount':
      return basis.value;
  }
}

/** `stopDistance` in price units (|entry − stop loss|); `maxLots` is the owner's cap (their max volume per order). */
export function lotsForRisk(input: { riskAmount: number; stopDistance: number; instrument: InstrumentForSizing; maxLots?: number }): Sized {
  const { riskAmount, stopDistance, instrument: i } = input;
  if (!(stopDistance > 0) || !Number.isFinite(stopDistance)) return { ok: false, reason: 'risk_stop_loss_required' };
  const lossPerLot = (stopDistance / i.tickSize) * i.tickValue;
  // The epsilon keeps an exact multiple (0.3 / 0.1 = 2.9999999999999996) from losing a step; it cannot add one.
  let steps = Math.floor(riskAmount / lossPerLot / i.volumeStep + 1e-9);
  // The epsilon must never add a step the risk does not cover: a value just below a step stays below it.
  if (steps > 0 && steps * i.volumeStep * lossPerLot > riskAmount * (1 + 1e-12)) steps -= 1;
  let lots = roundToStep(steps * i.volumeStep, i.volumeStep);
  const cap = Math.min(i.volumeMax, input.maxLots ?? Number.POSITIVE_INFINITY);
  const capped = lots > cap;
  if (capped) lots = roundToStep(Math.floor(cap / i.volumeStep + 1e-9) * i.volumeStep, i.volumeStep);
  // Written so that a NaN anywhere above (an unreadable figure) refuses: every comparison with NaN is false.
  if (!(lots >= i.volumeMin && lots > 0)) return { ok: false, reason: 'risk_volume_below_minimum' };
  return { ok: true, lots, riskAmount, lossPerLot, capped };
}

/** The tick value of one lot in the account currency: tickSize × contractSize × (account currency per quote unit). */
export function tickValueOf(tickSize: number, contractSize: number, quoteToAccountRate: number): number {
  return tickSize * contractSize * quoteToAccountRate;
}

function roundToStep(value: number, step: number): number {
  const decimals = Math.max(0, Math.ceil(-Math.log10(step)) + 2);
  return Number(value.toFixed(decimals));
}
