import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lotsForRisk, riskAmountOf, tickValueOf } from '../../src/risk/sizing';

/**
 * Sizing by risk over the shared table (test/fixtures/risk-sizing-cases.json), which the MT5 bridge's Python mirror
 * (bridges/mt5/tests/test_sizing.py) checks too: both sides size every case the same. Then property checks over
 * random inputs: never more than the risk, a multiple of the step, never above the caps.
 */

interface Case {
  name: string;
  instrument: { contractSize: number; tickSize: number; quoteCurrency: string; volumeMin: number; volumeStep: number; volumeMax: number };
  account: { currency: string; balance: number; equity: number };
  quoteToAccountRate: number;
  mode: { basis: 'equity_percent' | 'balance_percent' | 'fixed_amount'; value: number };
  entry: number;
  stop: { sl: number } | { slPips: number; pipSize: number };
  maxLot?: number;
  expect: { tickValue: number; riskAmount: number; stopDistance: number; lossPerLot?: number; lots?: number; capped?: boolean; reason?: string };
  check: string;
}

const TABLE = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'risk-sizing-cases.json'), 'utf8')) as { cases: Case[] };

/** |entry − sl|, or slPips × pipSize: what a bridge measures the stop with (src/paper/risk.ts). */
const stopDistanceOf = (entry: number, stop: Case['stop']) => ('sl' in stop ? Math.abs(entry - stop.sl) : stop.slPips * stop.pipSize);

/** Relative closeness for figures the table rounds (tickValue to 10 decimals, lossPerLot to 8). */
const close = (actual: number, expected: number) => expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));

describe('sizing by risk: the shared table of real instruments on USD, EUR and JPY accounts', () => {
  test('the table has the cases the issue asks for', () => {
    const names = TABLE.cases.map((c) => c.name).join('\n');
    expect(TABLE.cases.length).toBeGreaterThanOrEqual(15);
    for (const symbol of ['EURUSD', 'USDJPY', 'XAUUSD', 'US30', 'BTCUSD']) expect(names).toContain(symbol);
    for (const ccy of ['USD', 'EUR', 'JPY']) expect(TABLE.cases.some((c) => c.account.currency === ccy)).toBe(true);
    for (const basis of ['equity_percent', 'balance_percent', 'fixed_amount']) expect(TABLE.cases.some((c) => c.mode.basis === basis)).toBe(true);
    expect(TABLE.cases.some((c) => c.expect.capped === true && c.maxLot !== undefined)).toBe(true);
    expect(TABLE.cases.some((c) => c.expect.reason === 'risk_volume_below_minimum')).toBe(true);
    expect(TABLE.cases.some((c) => 'slPips' in c.stop)).toBe(true);
  });

  test.each(TABLE.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const tickValue = tickValueOf(c.instrument.tickSize, c.instrument.contractSize, c.quoteToAccountRate);
    close(tickValue, c.expect.tickValue);
    const riskAmount = riskAmountOf({ kind: c.mode.basis, value: c.mode.value }, c.account);
    close(riskAmount, c.expect.riskAmount);
    const stopDistance = stopDistanceOf(c.entry, c.stop);
    close(stopDistance, c.expect.stopDistance);

    const sized = lotsForRisk({
      riskAmount,
      stopDistance,
      instrument: {
        tickSize: c.instrument.tickSize,
        tickValue,
        volumeMin: c.instrument.volumeMin,
        volumeStep: c.instrument.volumeStep,
        volumeMax: c.instrument.volumeMax,
      },
      ...(c.maxLot !== undefined ? { maxLots: c.maxLot } : {}),
    });
    if (c.expect.reason !== undefined) {
      expect(sized).toEqual({ ok: false, reason: c.expect.reason });
      return;
    }
    if (!sized.ok) throw new Error(`${c.name}: refused ${sized.reason}; expected ${c.expect.lots} lots (${c.check})`);
    expect(sized.lots).toBe(c.expect.lots);
    expect(sized.capped).toBe(c.expect.capped);
    close(sized.lossPerLot, c.expect.lossPerLot!);
    expect(sized.lots * sized.lossPerLot).toBeLessThanOrEqual(riskAmount + 1e-9);
  });
});

describe('sizing by risk: properties over random inputs', () => {
  // A fixed seed per test, so that a failure names its inputs and reproduces, run alone (-t) or after the others.
  let seed = 0;
  beforeEach(() => {
    seed = 20260117;
  });
  const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const isMultiple = (lots: number, step: number) => Math.abs(lots / step - Math.round(lots / step)) < 1e-6;

  const randomInstrument = () => {
    const volumeStep = pick([0.01, 0.1, 1] as const);
    const tickSize = pick([0.00001, 0.001, 0.01, 0.1, 1] as const);
    const tickValue = tickValueOf(tickSize, pick([1, 10, 100, 100_000] as const), pick([1, 1 / 1.16, 1.16, 155, 1 / 155, 1 / 179.8] as const));
    return { tickSize, tickValue, volumeMin: volumeStep * pick([1, 1, 10] as const), volumeStep, volumeMax: pick([10, 50, 100, 1000] as const) };
  };

  test('for 5,000 random inputs, the loss at the stop is at most the amount at risk, the lots a multiple of the step, within the caps', () => {
    // Each broken rule is collected with its inputs and asserted once: 5,000 cases, not 25,000 expect calls.
    let sizedCount = 0;
    const broken: { inputs: string; rule: string }[] = [];
    const check = (inputs: string, rule: string, holds: boolean) => {
      if (!holds) broken.push({ inputs, rule });
    };
    for (let n = 0; n < 5000; n++) {
      const instrument = randomInstrument();
      const riskAmount = rnd() * 10 ** (1 + rnd() * 5); // 1 to 1,000,000 of the account currency
      const stopDistance = instrument.tickSize * (1 + Math.floor(rnd() * 20_000));
      const maxLots = rnd() < 0.3 ? 0.05 + rnd() * 20 : undefined;
      const sized = lotsForRisk({ riskAmount, stopDistance, instrument, ...(maxLots !== undefined ? { maxLots } : {}) });
      const inputs = JSON.stringify({ riskAmount, stopDistance, instrument, maxLots });
      if (!sized.ok) {
        check(inputs, `refused ${sized.reason}, not risk_volume_below_minimum`, sized.reason === 'risk_volume_below_minimum');
        // Refused only when even one minimum lot would lose more than the risk (or the caps are below the minimum).
        const oneMin = instrument.volumeMin * (stopDistance / instrument.tickSize) * instrument.tickValue;
        check(
          inputs,
          'refused though one minimum lot fits',
          oneMin > riskAmount * (1 - 1e-9) || Math.min(instrument.volumeMax, maxLots ?? Infinity) < instrument.volumeMin,
        );
        continue;
      }
      sizedCount++;
      check(inputs, 'loses more than the risk', sized.lots * sized.lossPerLot <= riskAmount + 1e-9);
      check(inputs, 'not a multiple of the step', isMultiple(sized.lots, instrument.volumeStep));
      check(inputs, 'above a cap', sized.lots <= instrument.volumeMax && sized.lots <= (maxLots ?? Infinity));
      check(inputs, 'below the minimum', sized.lots >= instrument.volumeMin);
      // Floored, not more than needed: one more step would lose more than the risk, unless a cap stopped it.
      if (!sized.capped) check(inputs, 'one more step would still fit', (sized.lots + instrument.volumeStep) * sized.lossPerLot > riskAmount * (1 - 1e-9));
    }
    expect(broken).toEqual([]);
    expect(sizedCount).toBeGreaterThan(1000);
  });

  test('for 2,000 random exact multiples of the step, the lots are that multiple (floating point never loses a step)', () => {
    const lost: { inputs: string; want: number; got: number | string }[] = [];
    for (let n = 0; n < 2000; n++) {
      const instrument = randomInstrument();
      const stopDistance = instrument.tickSize * (1 + Math.floor(rnd() * 2000));
      const lossPerLot = (stopDistance / instrument.tickSize) * instrument.tickValue;
      const steps = Math.round(instrument.volumeMin / instrument.volumeStep) + Math.floor(rnd() * 500);
      const want = Number((steps * instrument.volumeStep).toFixed(2));
      if (want > instrument.volumeMax) continue;
      const riskAmount = want * lossPerLot;
      const sized = lotsForRisk({ riskAmount, stopDistance, instrument });
      if (!sized.ok || sized.lots !== want)
        lost.push({ inputs: JSON.stringify({ riskAmount, stopDistance, instrument }), want, got: sized.ok ? sized.lots : sized.reason });
    }
    expect(lost).toEqual([]);
  });

  test('no stop distance (zero, negative, NaN, infinite) is refused risk_stop_loss_required', () => {
    const instrument = { tickSize: 0.00001, tickValue: 1, volumeMin: 0.01, volumeStep: 0.01, volumeMax: 100 };
    for (const stopDistance of [0, -0.001, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(lotsForRisk({ riskAmount: 100, stopDistance, instrument })).toEqual({ ok: false, reason: 'risk_stop_loss_required' });
    }
  });
});
