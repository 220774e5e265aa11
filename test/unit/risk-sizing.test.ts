import { lotsForRisk, riskAmountOf, tickValueOf, type InstrumentForSizing } from '../../src/risk/sizing';

/**
 * Sizing by risk over real instrument specifications. Each row's figures are worked by hand in its comment:
 * tickValue = tickSize × contractSize × (account currency per unit of the quote currency);
 * lossPerLot = stopDistance / tickSize × tickValue; lots = floor(riskAmount / lossPerLot / step) × step, capped.
 * Rates assumed: EURUSD 1.08, USDJPY 150.
 */
const fx = (tickSize: number, rate: number): InstrumentForSizing => ({
  tickSize,
  tickValue: tickValueOf(tickSize, 100_000, rate),
  volumeMin: 0.01,
  volumeStep: 0.01,
  volumeMax: 100,
});

const ROWS: { name: string; riskAmount: number; stopDistance: number; instrument: InstrumentForSizing; maxLots?: number; lots: number; lossPerLot: number }[] =
  [
    // EURUSD, USD account, 1 % of 10,000 = 100 USD. tick 0.00001 × 100,000 × 1 = 1 USD. SL 20 pips = 200 ticks = 200 USD/lot.
    // 100 / 200 = 0.5 lots.
    { name: 'EURUSD on a USD account', riskAmount: 100, stopDistance: 0.002, instrument: fx(0.00001, 1), lots: 0.5, lossPerLot: 200 },
    // EURUSD, EUR account, 1 % of 5,000 = 50 EUR. tick 1 USD = 1/1.08 = 0.925926 EUR. SL 25 pips = 250 ticks = 231.48 EUR/lot.
    // 50 / 231.48 = 0.216 → 0.21.
    { name: 'EURUSD on a EUR account', riskAmount: 50, stopDistance: 0.0025, instrument: fx(0.00001, 1 / 1.08), lots: 0.21, lossPerLot: 231.4815 },
    // EURUSD, JPY account, 1 % of 1,600,000 = 16,000 JPY. tick 1 USD = 150 JPY. SL 20 pips = 200 ticks = 30,000 JPY/lot.
    // 16,000 / 30,000 = 0.533 → 0.53.
    { name: 'EURUSD on a JPY account', riskAmount: 16_000, stopDistance: 0.002, instrument: fx(0.00001, 150), lots: 0.53, lossPerLot: 30_000 },
    // USDJPY, JPY account, 2 % of 1,500,000 = 30,000 JPY. tick 0.001 × 100,000 = 100 JPY. SL 50 pips = 0.50 = 500 ticks
    // = 50,000 JPY/lot. 30,000 / 50,000 = 0.6 lots.
    { name: 'USDJPY on a JPY account', riskAmount: 30_000, stopDistance: 0.5, instrument: fx(0.001, 1), lots: 0.6, lossPerLot: 50_000 },
    // USDJPY, USD account, 1 % of 10,000 = 100 USD. tick 100 JPY = 100/150 = 0.6667 USD. SL 30 pips = 300 ticks = 200 USD/lot.
    // 100 / 200 = 0.5 lots.
    { name: 'USDJPY on a USD account', riskAmount: 100, stopDistance: 0.3, instrument: fx(0.001, 1 / 150), lots: 0.5, lossPerLot: 200 },
    // XAUUSD (100 oz, tick 0.01 = 1 USD), USD account, 0.5 % of balance 20,000 = 100 USD. SL 5.00 = 500 ticks = 500 USD/lot.
    // 100 / 500 = 0.2 lots.
    {
      name: 'XAUUSD on a USD account',
      riskAmount: 100,
      stopDistance: 5,
      instrument: { tickSize: 0.01, tickValue: tickValueOf(0.01, 100, 1), volumeMin: 0.01, volumeStep: 0.01, volumeMax: 50 },
      lots: 0.2,
      lossPerLot: 500,
    },
    // XAUUSD, EUR account, 1 % of 8,000 = 80 EUR. tick 1 USD = 0.925926 EUR. SL 4.00 = 400 ticks = 370.37 EUR/lot.
    // 80 / 370.37 = 0.216 → 0.21.
    {
      name: 'XAUUSD on a EUR account',
      riskAmount: 80,
      stopDistance: 4,
      instrument: { tickSize: 0.01, tickValue: tickValueOf(0.01, 100, 1 / 1.08), volumeMin: 0.01, volumeStep: 0.01, volumeMax: 50 },
      lots: 0.21,
      lossPerLot: 370.3704,
    },
    // US30 index CFD (contract 1, tick 0.1: 1 USD a point a lot, a common CFD convention), fixed 150 USD. SL 100 points =
    // 1,000 ticks × 0.1 = 100 USD/lot. 150 / 100 = 1.5 lots (step 0.1).
    {
      name: 'US30 index CFD, fixed amount',
      riskAmount: 150,
      stopDistance: 100,
      instrument: { tickSize: 0.1, tickValue: tickValueOf(0.1, 1, 1), volumeMin: 0.1, volumeStep: 0.1, volumeMax: 100 },
      lots: 1.5,
      lossPerLot: 100,
    },
    // BTCUSD (contract 1, tick 0.01 = 0.01 USD), 1 % of 50,000 = 500 USD. SL 1,500 = 150,000 ticks = 1,500 USD/lot.
    // 500 / 1,500 = 0.333 → 0.33.
    {
      name: 'BTCUSD on a USD account',
      riskAmount: 500,
      stopDistance: 1500,
      instrument: { tickSize: 0.01, tickValue: tickValueOf(0.01, 1, 1), volumeMin: 0.01, volumeStep: 0.01, volumeMax: 10 },
      lots: 0.33,
      lossPerLot: 1500,
    },
    // Capped: 1 % of 1,000,000 = 10,000 USD on EURUSD with a 10-pip SL (100 USD/lot) would be 100 lots; the owner's cap is 5.
    { name: "capped at the owner's max lots", riskAmount: 10_000, stopDistance: 0.001, instrument: fx(0.00001, 1), maxLots: 5, lots: 5, lossPerLot: 100 },
    // An exact multiple: 30 / 100 = 0.3 lots, which floating point makes 29.999999999999996 steps; still 0.30.
    {
      name: 'an exact multiple of the step is not floored below it',
      riskAmount: 30,
      stopDistance: 0.001,
      instrument: fx(0.00001, 1),
      lots: 0.3,
      lossPerLot: 100,
    },
  ];

describe('sizing by risk: lots from the amount at risk, the stop distance and the tick value', () => {
  test.each(ROWS.map((r) => [r.name, r] as const))('%s', (_name, r) => {
    const sized = lotsForRisk({
      riskAmount: r.riskAmount,
      stopDistance: r.stopDistance,
      instrument: r.instrument,
      ...(r.maxLots ? { maxLots: r.maxLots } : {}),
    });
    expect(sized.ok).toBe(true);
    if (!sized.ok) return;
    expect(sized.lots).toBe(r.lots);
    expect(sized.lossPerLot).toBeCloseTo(r.lossPerLot, 3);
    // Never more than the amount at risk (unless capped lower anyway).
    expect(sized.lots * sized.lossPerLot).toBeLessThanOrEqual(r.riskAmount + 1e-6);
  });

  test('when the risk is below one minimum lot, then the entry is refused, never sized up to the minimum', () => {
    // 0.5 % of 500 = 2.5 USD; a 50-pip SL on EURUSD loses 500 USD a lot: 0.005 lots, below 0.01.
    expect(lotsForRisk({ riskAmount: 2.5, stopDistance: 0.005, instrument: fx(0.00001, 1) })).toEqual({ ok: false, reason: 'risk_volume_below_minimum' });
  });

  test('when the amount at risk sits a hair below a step, then the epsilon that keeps exact multiples whole does not add that step', () => {
    // 7,749.9999999225 JPY at 155,000 JPY a lot (USDJPY, a 1.55 stop) is 0.04999999999950 lots: 0.04, since 0.05 would
    // lose 7,750.
    const sized = lotsForRisk({ riskAmount: 7749.9999999225, stopDistance: 1.55, instrument: fx(0.001, 1) });
    expect(sized).toMatchObject({ ok: true, lots: 0.04 });
  });

  test('when there is no stop distance, then the entry is refused risk_stop_loss_required', () => {
    expect(lotsForRisk({ riskAmount: 100, stopDistance: 0, instrument: fx(0.00001, 1) })).toEqual({ ok: false, reason: 'risk_stop_loss_required' });
    expect(lotsForRisk({ riskAmount: 100, stopDistance: Number.NaN, instrument: fx(0.00001, 1) })).toEqual({ ok: false, reason: 'risk_stop_loss_required' });
  });

  test('the amount at risk: a percentage of equity or of balance, or a fixed amount', () => {
    const figures = { balance: 10_000, equity: 9_500 };
    expect(riskAmountOf({ kind: 'equity_percent', value: 1 }, figures)).toBe(95);
    expect(riskAmountOf({ kind: 'balance_percent', value: 1 }, figures)).toBe(100);
    expect(riskAmountOf({ kind: 'fixed_amount', value: 40 }, figures)).toBe(40);
  });

  test('for 2,000 random inputs, the loss at the stop never exceeds the amount at risk and the lots are a multiple of the step', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 2000; n++) {
      const step = [0.01, 0.1, 1][Math.floor(rnd() * 3)]!;
      const instrument = { tickSize: 10 ** -Math.floor(1 + rnd() * 5), tickValue: 0.01 + rnd() * 20, volumeMin: step, volumeStep: step, volumeMax: 100 };
      const sized = lotsForRisk({ riskAmount: rnd() * 5000, stopDistance: instrument.tickSize * (1 + Math.floor(rnd() * 5000)), instrument });
      if (!sized.ok) continue;
      expect(sized.lots * sized.lossPerLot).toBeLessThanOrEqual(sized.riskAmount * (1 + 1e-9));
      expect(Math.abs(sized.lots / step - Math.round(sized.lots / step))).toBeLessThan(1e-6);
    }
  });
});
