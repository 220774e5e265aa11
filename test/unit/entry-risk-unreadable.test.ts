import { checkLossGuards, sizeEntry } from '../../src/risk/entry-risk';
import { EquityMarks } from '../../src/risk/equity-marks';
import { lotsForRisk } from '../../src/risk/sizing';

/**
 * An unreadable figure (NaN, from a terminal or an API that answered nonsense) must refuse, never pass: every
 * comparison with NaN is false, so a guard written as "refuse when down this much" lets the entry through on it.
 */
const EURUSD = { tickSize: 0.00001, tickValue: 1, volumeMin: 0.01, volumeStep: 0.01, volumeMax: 100 };
const NOW = Date.parse('2026-11-25T12:00:00Z');

describe('loss guards and sizing on an unreadable account figure', () => {
  test('when equity is NaN, then a guarded entry is refused risk_figures_unavailable and the marks keep what they had', () => {
    const marks = new EquityMarks();
    expect(checkLossGuards({ maxDrawdownPercent: 10, timezone: 'UTC' }, marks, { balance: 10_000, equity: 10_000, currency: 'USD' }, NOW)).toBeUndefined();
    const refusal = checkLossGuards(
      { maxDrawdownPercent: 10, dailyLossPercent: 3, timezone: 'UTC' },
      marks,
      { balance: 10_000, equity: NaN, currency: 'USD' },
      NOW,
    );
    expect(refusal).toMatchObject({ retcode: 'risk_figures_unavailable' });
    expect(marks.state()).toMatchObject({ dayOpen: 10_000, peak: 10_000 });
  });

  test('when the figure a risk sizing rests on is NaN, then it is refused; a fixed amount needs neither and is sized', () => {
    const account = { balance: 10_000, equity: NaN, currency: 'USD' };
    const input = { account, stopDistance: 0.002, digits: 5, instrument: EURUSD };
    expect(sizeEntry({ ...input, sizing: { basis: 'equity_percent', value: 1 } })).toEqual({
      refusal: expect.objectContaining({ retcode: 'risk_figures_unavailable' }),
    });
    expect(sizeEntry({ ...input, sizing: { basis: 'balance_percent', value: 1 } })).toMatchObject({ lots: 0.5 });
    expect(sizeEntry({ ...input, account: { ...account, balance: Number.POSITIVE_INFINITY }, sizing: { basis: 'balance_percent', value: 1 } })).toEqual({
      refusal: expect.objectContaining({ retcode: 'risk_figures_unavailable' }),
    });
    expect(sizeEntry({ ...input, sizing: { basis: 'fixed_amount', value: 100 } })).toMatchObject({ lots: 0.5 });
  });

  test('when any input of the lots is NaN, then no lots: refused, never NaN lots', () => {
    expect(lotsForRisk({ riskAmount: NaN, stopDistance: 0.002, instrument: EURUSD })).toEqual({ ok: false, reason: 'risk_volume_below_minimum' });
    expect(lotsForRisk({ riskAmount: 100, stopDistance: 0.002, instrument: { ...EURUSD, tickValue: NaN } })).toEqual({
      ok: false,
      reason: 'risk_volume_below_minimum',
    });
  });
});
