/**
 * The account's day on the dashboard (dashboard/trade-day.js), in node: the realized P&L says what it is and that the
 * daily loss guard counts equity instead; today's closes list partial closes and add up to the day's realized P&L (or
 * say what is missing); each gauge says what it counts and what each percentage is of.
 */
// The module is the browser's own file, plain JavaScript: jest compiles it (jest.config.js) and it has no types.
const day = jest.requireActual('../../dashboard/trade-day.js');

const close = (over: object) => ({
  tradeId: '5003',
  symbol: 'EURUSD',
  side: 'buy',
  at: '2026-12-02T10:05:00.000Z',
  volume: 0.1,
  remainingVolume: 0,
  price: 1.086,
  profit: 1.5,
  cause: 'take_profit',
  ...over,
});

describe("today's closes", () => {
  test('a partial close is listed, says what is still open, and how it came about', () => {
    expect(day.closeCells(close({ remainingVolume: 0.2, cause: 'take_profit_level' }), 'USD')).toEqual([
      '2026-12-02T10:05:00.000Z',
      '5003',
      'EURUSD',
      'buy',
      '0.10 lots',
      '1.086',
      'partial close (a take-profit level): 0.20 lots still open',
      '+1.50 USD',
    ]);
    expect(day.closeCells(close({ profit: -19.9, cause: 'stop_loss' }), 'USD').slice(6)).toEqual(['stop loss hit', '−19.90 USD']);
  });

  test("the closes' total is the day's realized P&L, partial closes included", () => {
    const closes = [close({ profit: -19.9, cause: 'stop_loss' }), close({ tradeId: '5004', remainingVolume: 0.2, profit: 1.5, cause: 'take_profit_level' })];
    expect(day.closesTotalText({ realizedProfit: -18.4, closes, closesTruncated: false }, 'USD')).toBe(
      "2 closes (1 partial) today, total −18.40 USD: the day's realized P&L.",
    );
    expect(day.closesTotalText({ realizedProfit: 0, closes: [], closesTruncated: false }, 'USD')).toBe(
      "0 closes today, total 0.00 USD: the day's realized P&L.",
    );
  });

  test('when a close is not listed, the line says how much and why, so the figures still reconcile', () => {
    const closes = [close({ profit: -19.9, cause: 'stop_loss' })];
    expect(day.closesTotalText({ realizedProfit: -18.4, closes, closesTruncated: false }, 'USD')).toBe(
      "1 close listed, total −19.90 USD; with +1.50 USD from closes no longer in their trade's record (a trade keeps its last 200 events), the day's realized P&L −18.40 USD.",
    );
    expect(day.closesTotalText({ realizedProfit: -18.4, closes, closesTruncated: true }, 'USD')).toMatch(/with \+1\.50 USD from closes past the 200 listed,/);
  });

  test('the realized line says it is not what the daily loss guard counts', () => {
    expect(day.realizedText({ day: '2026-12-02', timeZone: 'UTC', realizedProfit: -18.4 }, 'USD')).toEqual({
      lead: 'Realized today (2026-12-02, UTC): ',
      amount: '−18.40 USD',
      note:
        ', commission and swap included: the closes listed under Closed trades, partial ones too. The daily loss guard counts equity, ' +
        'which adds the open positions’ floating P&L to it (below).',
    });
  });
});

describe('the guards as gauges, readable without colour, saying what they count', () => {
  const limit = (over: object) => ({ basis: 'amount', amount: 50, percent: 0.05, used: 0, loss: 0, dayOpenEquity: 100000, ...over });

  test('an amount limit: the equity from the opening to now, the limit, and what its percent is of', () => {
    const g = day.dailyLossGauge({ equity: 100008, dailyLossLimit: limit({}) }, 'USD');
    expect(g).toMatchObject({ value: 0, percent: 0, level: 'ok', label: "Today's equity loss against the daily loss limit" });
    expect(g.text).toBe(
      "Counts the fall of equity since the day opened, open positions' floating P&L included: opened at 100,000.00 USD, 100,008.00 USD now: " +
        "8.00 USD above the opening, nothing lost. Limit 50.00 USD (0.05 % of the day's opening equity): 0 % of it used.",
    );
  });

  test('a percent limit: the percent of the opening first, then the amount it makes; a loss and the share used', () => {
    const g = day.dailyLossGauge(
      { equity: 9850, dailyLossLimit: limit({ basis: 'percent', amount: 300, percent: 3, used: 0.5, loss: 150, dayOpenEquity: 10000 }) },
      'USD',
    );
    expect(g).toMatchObject({ value: 0.5, percent: 50, level: 'ok' });
    expect(g.text).toBe(
      "Counts the fall of equity since the day opened, open positions' floating P&L included: opened at 10,000.00 USD, 9,850.00 USD now: " +
        "150.00 USD lost. Limit 3 % of the day's opening equity, 300.00 USD: 50 % of it used.",
    );
  });

  test('near and past the limit are said, and the meter stops at full', () => {
    expect(
      day.dailyLossGauge({ equity: null, dailyLossLimit: limit({ amount: 300, percent: null, used: 0.85, loss: 255, dayOpenEquity: null }) }, 'USD').text,
    ).toBe(
      "Counts the fall of equity since the day opened, open positions' floating P&L included: 255.00 USD lost. Limit 300.00 USD: 85 % of it used — near the limit.",
    );
    const over = day.drawdownGauge({ drawdown: { current: 12, max: 10, used: 1.2, peakEquity: 10100 } }, 'USD');
    expect(over).toMatchObject({ value: 1, percent: 120, level: 'reached' });
    expect(over.text).toBe('Equity 12 % below its peak 10,100.00 USD; max drawdown 10 %: 120 % of it used — limit reached: new entries are refused.');
  });

  test('a guard not measured yet (no figures today) says so and shows no meter', () => {
    for (const g of [
      day.dailyLossGauge({ dailyLossLimit: limit({ amount: null, percent: 3, used: null, loss: null }) }, 'USD'),
      day.drawdownGauge({ drawdown: { current: null, max: 10, used: null } }),
    ])
      expect(g).toMatchObject({ value: null, level: 'unknown', text: 'not measured yet: no account figures from the bridge today' });
  });

  test('no guard set: no gauge', () => {
    expect(day.dailyLossGauge({ dailyLossLimit: null }, 'USD')).toBeNull();
    expect(day.drawdownGauge({ drawdown: null })).toBeNull();
  });
});
