import { planOrder, withinTradingHours } from '../../src/risk/rules';
import { riskSettingsSchema } from '../../src/domain/risk-settings';
import type { SignalInstruction } from '../../src/domain/workflow-input';
import { WED_NOON, at, snapshot, times, buy, expectRefused, expectOrder } from '../helpers/risk-rules';

/** The account owner's risk rules (src/risk/rules.ts) and symbol mapping (src/risk/symbols.ts), on parsed settings. */

describe('planOrder: expiry', () => {
  test('when now is past the command expiry, then an entry is refused as signal_expired', () => {
    expectRefused(planOrder(buy(), snapshot(), times(WED_NOON, WED_NOON + 30_001, WED_NOON + 30_000)), 'signal_expired');
  });

  test('when now equals the command expiry, then the entry still runs', () => {
    expectOrder(planOrder(buy(), snapshot(), times(WED_NOON, WED_NOON + 30_000, WED_NOON + 30_000)), { symbol: 'EURUSD', volume: 0.1 });
  });

  test('when a close arrives after its expiry, then it is refused as signal_expired too', () => {
    expectRefused(planOrder({ action: 'close', positionId: 'p1' }, snapshot(), times(WED_NOON, WED_NOON + 1, WED_NOON)), 'signal_expired');
  });

  test('when an expired signal also breaks other rules, then signal_expired is the reason (checked first)', () => {
    const account = snapshot({ closeOnly: true, blockedSymbols: ['EURUSD'] });
    expectRefused(planOrder(buy(), account, times(WED_NOON, WED_NOON + 2, WED_NOON + 1)), 'signal_expired');
  });
});

describe('planOrder: close-only', () => {
  test.each(['buy', 'sell', 'buy_limit', 'sell_stop', 'buy_stop_limit'] as const)('when the account is close-only, then the entry %s is refused', (action) => {
    expectRefused(planOrder(buy({ action, price: 1.1, stopLimitPrice: 1.2 }), snapshot({ closeOnly: true }), times()), 'risk_close_only');
  });

  test.each([
    { action: 'close', positionId: 'p1' },
    { action: 'close', symbol: 'EURUSD', side: 'buy' },
    { action: 'close_all' },
    { action: 'partial_close', positionId: 'p1', partialVolume: 0.1 },
    { action: 'cancel_pending', orderId: 'o1' },
    { action: 'modify_sl', positionId: 'p1', sl: 1.05 },
    { action: 'modify_tp', positionId: 'p1', tp: 1.2 },
    { action: 'modify_pending', orderId: 'o1', price: 1.1 },
    { action: 'breakeven', positionId: 'p1' },
  ] as SignalInstruction[])('when the account is close-only, then the exit/management action $action is allowed', (signal) => {
    const plan = planOrder(signal, snapshot({ closeOnly: true, blockedSymbols: ['EURUSD'], requireStopLoss: true }), times());
    expect(plan.ok).toBe(true);
  });

  test('when a filtered close names a symbol, then the symbol is mapped to the broker symbol and no volume is set', () => {
    const plan = planOrder({ action: 'close', symbol: 'EURUSD' }, snapshot({ closeOnly: true }, { suffix: '.m' }), times());
    expectOrder(plan, { symbol: 'EURUSD.m', volume: undefined });
  });

  test('when an exit carries no symbol, then the order has no symbol', () => {
    expectOrder(planOrder({ action: 'close_all' }, snapshot(), times()), { symbol: undefined });
  });
});

describe('planOrder: allowed and blocked symbols', () => {
  test('when allowedSymbols lists the symbol in another case, then the entry runs', () => {
    expect(planOrder(buy({ symbol: 'eurusd' }), snapshot({ allowedSymbols: ['EURUSD', 'GBPUSD'] }), times()).ok).toBe(true);
    expect(planOrder(buy({ symbol: 'EURUSD' }), snapshot({ allowedSymbols: ['eurUSD'] }), times()).ok).toBe(true);
  });

  test('when allowedSymbols does not list the symbol, then the entry is refused as risk_symbol_not_allowed', () => {
    expectRefused(planOrder(buy({ symbol: 'USDJPY' }), snapshot({ allowedSymbols: ['EURUSD'] }), times()), 'risk_symbol_not_allowed');
  });

  test('when allowedSymbols is an empty list, then every entry is refused', () => {
    expectRefused(planOrder(buy(), snapshot({ allowedSymbols: [] }), times()), 'risk_symbol_not_allowed');
  });

  test('when allowedSymbols is not set, then any symbol may be traded', () => {
    expect(planOrder(buy({ symbol: 'XAUUSD' }), snapshot(), times()).ok).toBe(true);
  });

  test('when blockedSymbols lists the symbol in any case, then the entry is refused as risk_symbol_blocked', () => {
    expectRefused(planOrder(buy({ symbol: 'xauusd' }), snapshot({ blockedSymbols: ['XAUUSD'] }), times()), 'risk_symbol_blocked');
    expectRefused(planOrder(buy({ symbol: 'XAUUSD' }), snapshot({ blockedSymbols: ['XauUsd'] }), times()), 'risk_symbol_blocked');
  });

  test('when a symbol is both allowed and blocked, then it is blocked', () => {
    expectRefused(planOrder(buy(), snapshot({ allowedSymbols: ['EURUSD'], blockedSymbols: ['EURUSD'] }), times()), 'risk_symbol_blocked');
  });

  test('when the lists name the trader symbol and an alias maps it to a broker symbol, then the lists are checked on the trader symbol', () => {
    const account = snapshot({ allowedSymbols: ['XAUUSD'] }, { aliases: { XAUUSD: 'GOLD' } });
    expectOrder(planOrder(buy({ symbol: 'XAUUSD' }), account, times()), { symbol: 'GOLD', volume: 0.1 });
    expectRefused(planOrder(buy({ symbol: 'GOLD' }), account, times()), 'risk_symbol_not_allowed');
  });
});

describe('withinTradingHours (UTC)', () => {
  const weekdays = [{ days: [1, 2, 3, 4, 5], from: '08:00', to: '17:00' }];

  test.each([
    ['2024-06-12T08:00:00Z', true], // from is inclusive
    ['2024-06-12T12:00:00Z', true],
    ['2024-06-12T16:59:59Z', true],
    ['2024-06-12T17:00:00Z', false], // to is exclusive
    ['2024-06-12T07:59:59Z', false],
    ['2024-06-15T12:00:00Z', false], // Saturday
    ['2024-06-16T12:00:00Z', false], // Sunday
    ['2024-06-17T08:00:00Z', true], // Monday
    ['2024-06-14T16:59:00Z', true], // Friday
  ])('when a Mon-Fri 08:00-17:00 window is checked at %s, then within is %s', (iso, expected) => {
    expect(withinTradingHours(weekdays, at(iso))).toBe(expected);
  });

  test('when the time is given with an offset, then the check uses UTC (10:00+02:00 is 08:00Z)', () => {
    expect(withinTradingHours(weekdays, at('2024-06-12T09:30:00+02:00'))).toBe(false); // 07:30Z
    expect(withinTradingHours(weekdays, at('2024-06-12T10:00:00+02:00'))).toBe(true); // 08:00Z
  });

  // Friday 22:00 to 02:00 runs into Saturday morning.
  const overMidnight = [{ days: [5], from: '22:00', to: '02:00' }];
  test.each([
    ['2024-06-14T22:00:00Z', true], // Friday evening, from inclusive
    ['2024-06-14T23:59:59Z', true],
    ['2024-06-15T00:00:00Z', true], // Saturday after midnight belongs to Friday's window
    ['2024-06-15T01:59:59Z', true],
    ['2024-06-15T02:00:00Z', false], // to exclusive
    ['2024-06-14T01:00:00Z', false], // Friday early morning belongs to Thursday, not listed
    ['2024-06-14T21:59:59Z', false],
    ['2024-06-15T23:00:00Z', false], // Saturday evening: Saturday is not listed
  ])('when a Friday 22:00-02:00 window is checked at %s, then within is %s', (iso, expected) => {
    expect(withinTradingHours(overMidnight, at(iso))).toBe(expected);
  });

  test('when a Saturday window runs over midnight, then it reaches into Sunday early morning (week wrap)', () => {
    const sat = [{ days: [6], from: '23:00', to: '01:00' }];
    expect(withinTradingHours(sat, at('2024-06-16T00:30:00Z'))).toBe(true); // Sunday 00:30
    expect(withinTradingHours(sat, at('2024-06-16T23:30:00Z'))).toBe(false); // Sunday 23:30
    expect(withinTradingHours(sat, at('2024-06-15T00:30:00Z'))).toBe(false); // Saturday 00:30 belongs to Friday
  });

  test('when a Sunday-evening-to-Friday-night forex week is written as windows, then Sunday 22:00 and Friday 21:59 are inside, Saturday is not', () => {
    const forex = [
      { days: [0], from: '22:00', to: '24:00' },
      { days: [1, 2, 3, 4], from: '00:00', to: '24:00' },
      { days: [5], from: '00:00', to: '22:00' },
    ];
    expect(withinTradingHours(forex, at('2024-06-16T21:59:00Z'))).toBe(false);
    expect(withinTradingHours(forex, at('2024-06-16T22:00:00Z'))).toBe(true);
    expect(withinTradingHours(forex, at('2024-06-16T23:59:59Z'))).toBe(true);
    expect(withinTradingHours(forex, at('2024-06-17T00:00:00Z'))).toBe(true);
    expect(withinTradingHours(forex, at('2024-06-20T23:59:59Z'))).toBe(true); // Thursday
    expect(withinTradingHours(forex, at('2024-06-21T21:59:00Z'))).toBe(true); // Friday
    expect(withinTradingHours(forex, at('2024-06-21T22:00:00Z'))).toBe(false);
    expect(withinTradingHours(forex, at('2024-06-22T12:00:00Z'))).toBe(false); // Saturday
  });

  test('when several windows are given, then being inside any one is enough', () => {
    const split = [
      { days: [3], from: '08:00', to: '10:00' },
      { days: [3], from: '14:00', to: '16:00' },
    ];
    expect(withinTradingHours(split, at('2024-06-12T09:00:00Z'))).toBe(true);
    expect(withinTradingHours(split, at('2024-06-12T12:00:00Z'))).toBe(false);
    expect(withinTradingHours(split, at('2024-06-12T15:00:00Z'))).toBe(true);
  });

  test('when no windows are given, then no time is within trading hours', () => {
    expect(withinTradingHours([], WED_NOON)).toBe(false);
  });

  test('when the window settings are parsed, then a bad HH:MM or weekday is refused by the schema', () => {
    expect(() => riskSettingsSchema.parse({ tradingHours: [{ days: [7], from: '08:00', to: '17:00' }] })).toThrow();
    expect(() => riskSettingsSchema.parse({ tradingHours: [{ days: [1], from: '8:00', to: '17:00' }] })).toThrow();
    expect(() => riskSettingsSchema.parse({ tradingHours: [{ days: [1], from: '08:00', to: '24:01' }] })).toThrow();
    expect(() => riskSettingsSchema.parse({ tradingHours: [{ days: [], from: '08:00', to: '17:00' }] })).toThrow();
  });
});

describe('planOrder: trading hours', () => {
  const account = snapshot({ tradingHours: [{ days: [1, 2, 3, 4, 5], from: '08:00', to: '17:00' }] });

  test('when an entry was accepted outside trading hours, then it is refused as risk_outside_trading_hours', () => {
    expectRefused(planOrder(buy(), account, times(at('2024-06-15T12:00:00Z'))), 'risk_outside_trading_hours');
  });

  test('when an entry was accepted inside trading hours but runs after they close, then the acceptance time decides and it runs', () => {
    const accepted = at('2024-06-12T16:59:59Z');
    expect(planOrder(buy(), account, times(accepted, accepted + 2000, accepted + 30_000)).ok).toBe(true);
  });

  test('when an entry was accepted before trading hours but runs after they open, then it is refused', () => {
    const accepted = at('2024-06-12T07:59:59Z');
    expectRefused(planOrder(buy(), account, times(accepted, accepted + 2000, accepted + 30_000)), 'risk_outside_trading_hours');
  });

  test('when a close arrives outside trading hours, then it is allowed', () => {
    expect(planOrder({ action: 'close', positionId: 'p1' }, account, times(at('2024-06-15T12:00:00Z'))).ok).toBe(true);
  });
});

describe('planOrder: require stop loss', () => {
  const account = snapshot({ requireStopLoss: true });

  test('when a stop loss is required and the entry has none, then it is refused as risk_stop_loss_required', () => {
    expectRefused(planOrder(buy(), account, times()), 'risk_stop_loss_required');
    expectRefused(planOrder(buy({ tp: 1.2, tpPips: undefined }), account, times()), 'risk_stop_loss_required');
  });

  test('when a stop loss is required and the entry has an sl price, then it runs', () => {
    expect(planOrder(buy({ sl: 1.05 }), account, times()).ok).toBe(true);
  });

  test('when a stop loss is required and the entry has slPips, then it runs', () => {
    expect(planOrder(buy({ slPips: 15 }), account, times()).ok).toBe(true);
  });

  test('when a stop loss is required for a pending entry without one, then it is refused', () => {
    expectRefused(planOrder(buy({ action: 'sell_limit', price: 1.2 }), account, times()), 'risk_stop_loss_required');
  });

  test('when no stop loss is required, then an entry without one runs', () => {
    expect(planOrder(buy(), snapshot(), times()).ok).toBe(true);
  });
});
