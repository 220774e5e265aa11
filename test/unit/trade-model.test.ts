/**
 * The dashboard's words for the trade (dashboard/trade-model.js), in node: a pending entry's order reads "placed" and
 * never "filled", a closed trade says why it closed and its net P&L, the guards read as text (not colour only), and the
 * charts' geometry stays inside the plot with a gain above the zero line and a loss below it.
 */
// The module is the browser's own file, plain JavaScript: jest compiles it (jest.config.js) and it has no types.
const model = jest.requireActual('../../dashboard/trade-model.js');

const trade = (over: object) => ({
  tradeId: '1000003',
  accountId: 'acc-1',
  symbol: 'EURUSD',
  side: 'buy',
  status: 'closed',
  origin: 'signal',
  signalId: 'sig-1',
  openedAt: '2026-11-26T10:00:00.000Z',
  openPrice: 1.1,
  volume: 0,
  closedVolume: 0.1,
  sl: 1.09,
  tp: 1.11,
  realizedProfit: 100,
  commission: -0.7,
  swap: -0.3,
  closedAt: '2026-11-26T11:00:00.000Z',
  closeCause: 'take_profit',
  closePrice: 1.11,
  linkedSignals: [],
  ...over,
});

describe("an entry's outcome in the signal log", () => {
  test.each(['buy_limit', 'sell_limit', 'buy_stop', 'sell_stop', 'buy_stop_limit', 'sell_stop_limit'])(
    'a %s that the broker took reads "placed", never "filled"',
    (action) => {
      const shown = model.outcomeText(action, { outcome: 'filled', ticket: '1000003', reason: null });
      expect(shown).toEqual({ text: 'placed · order 1000003', kind: 'placed' });
      expect(shown.text).not.toMatch(/fill/);
    },
  );

  test("the poll's entry field decides when present (an order is placed, a position filled)", () => {
    expect(model.outcomeText('buy', { outcome: 'filled', ticket: '7', entry: 'order' }).text).toBe('placed · order 7');
    expect(model.outcomeText('buy_limit', { outcome: 'filled', ticket: '7', entry: 'position' }).text).toBe('filled · ticket 7');
  });

  test.each([
    ['buy', { outcome: 'filled', ticket: '1000001' }, 'filled · ticket 1000001', 'filled'],
    ['buy', { outcome: 'filled', ticket: null }, 'filled', 'filled'],
    ['close', { outcome: 'done', ticket: null }, 'done', 'done'],
    ['buy_limit', { outcome: 'rejected', reason: 'market_closed' }, 'rejected · market_closed', 'rejected'],
    ['buy_limit', { outcome: 'pending' }, 'pending', 'pending'],
    ['buy_limit', { outcome: 'filled', ticket: null }, 'placed', 'placed'],
  ])('%s %j reads %s', (action, item, text, kind) => {
    expect(model.outcomeText(action, item)).toEqual({ text, kind });
  });
});

describe('how a trade ended', () => {
  test.each([
    [{ status: 'pending', volume: 0.1, closedVolume: 0 }, 'placed (waiting for its price)'],
    [{ status: 'expired' }, 'placed · expired'],
    [{ status: 'cancelled', closeCause: 'command' }, 'placed · cancelled (by a signal)'],
    [{ status: 'cancelled', closeCause: 'broker' }, 'placed · cancelled (by the broker)'],
    [{ status: 'cancelled', closeCause: 'unknown' }, 'placed · gone (unknown)'],
    [{ status: 'open', volume: 0.1, closedVolume: 0 }, 'open'],
    [{ status: 'open', volume: 0.05, closedVolume: 0.05 }, 'open (0.05 lots closed so far)'],
    [{ status: 'open', volume: 0.2, closedVolume: 0.1 }, 'open (0.10 lots closed so far)'],
    [{ status: 'open', volume: 1, closedVolume: 1 }, 'open (1 lot closed so far)'],
    [{ status: 'open', volume: 0.1, closedVolume: 0, orderTicket: '55' }, 'order 55 triggered · open'],
    [{ status: 'closed', closeCause: 'stop_loss', orderTicket: '55' }, 'order 55 triggered · stop loss hit'],
    [{ status: 'pending', volume: 0.1, closedVolume: 0, orderTicket: '55' }, 'placed (waiting for its price)'],
    [{ status: 'closed', closeCause: 'take_profit' }, 'take profit hit'],
    [{ status: 'closed', closeCause: 'stop_loss' }, 'stop loss hit'],
    [{ status: 'closed', closeCause: 'stop_out' }, 'stop-out (drawdown guard)'],
    [{ status: 'closed', closeCause: 'margin_call' }, "broker's stop-out / margin call"],
    [{ status: 'closed', closeCause: 'manual' }, 'closed by hand in the terminal'],
    [{ status: 'closed', closeCause: 'command' }, 'closed by a signal'],
    [{ status: 'closed', closeCause: 'unknown' }, 'gone without a report (unknown)'],
    [{ status: 'closed', closeCause: 'take_profit_level' }, 'closed by its last take-profit level'],
    [{ status: 'closed', closeCause: 'close_opposite' }, 'closed by a reverse (close opposite)'],
    [{ status: 'closed', closeCause: 'something_new' }, 'closed (something_new)'],
  ])('%j: %s', (over, text) => {
    expect(model.tradeStatusText(trade(over))).toBe(text);
  });

  test('a closed trade shows its lots closed and its P&L net of commission and swap, signed', () => {
    const cells = model.tradeCells(trade({}), 'USD');
    expect(cells).toEqual(['1000003', 'EURUSD', 'buy', '0.10 lots', '1.1', 'take profit hit', '2026-11-26T11:00:00.000Z', '1.11', '+99.00 USD', '—']);
    expect(model.tradeCells(trade({ realizedProfit: -50 }), 'USD')[8]).toBe('−51.00 USD');
  });

  test('a pending order shows its order price, and has no P&L and no close time yet', () => {
    const pending = {
      status: 'pending',
      volume: 0.1,
      closedVolume: 0,
      realizedProfit: 0,
      closedAt: undefined,
      closePrice: undefined,
      closeCause: undefined,
      openPrice: undefined,
    };
    const cells = model.tradeCells(trade({ ...pending, tradeId: 'order:7001', orderTicket: '7001', orderType: 'limit', orderPrice: 1.075 }), 'USD');
    expect(cells).toEqual(['order:7001', 'EURUSD', 'buy', '0.10 lots', 'limit at 1.075', 'placed (waiting for its price)', null, '—', '—', '—']);
  });

  test('a trade opened outside the service says so', () => {
    expect(model.originText(trade({ origin: 'outside', signalId: undefined }))).toBe('opened outside the service');
  });
});

describe("the bridge's trade management, in one line", () => {
  const m = { trailActiveAt: 1.0862, stopMoves: 3, breakevenAt: '2026-11-26T12:03:40.000Z', levelsHit: 2, closedOpposite: false };

  test('each part it did, in the order it happens; the breakeven time in UTC unless the page gives its clock', () => {
    expect(model.managementText(m)).toBe('trail active at 1.0862 · stop moved 3 times · breakeven at 12:03 UTC · take-profit levels hit: 2');
    expect(model.managementText(m, { time: () => 'noon' })).toMatch(/breakeven at noon/);
  });

  test('only what happened is said: one move is "once", a reverse says so; nothing done is null, shown as a dash', () => {
    expect(model.managementText({ trailActiveAt: null, stopMoves: 1, breakevenAt: null, levelsHit: 0, closedOpposite: false })).toBe('stop moved once');
    expect(model.managementText({ trailActiveAt: null, stopMoves: 0, breakevenAt: null, levelsHit: 0, closedOpposite: true })).toBe('closed by a reverse');
    expect(model.managementText({ trailActiveAt: null, stopMoves: 0, breakevenAt: null, levelsHit: 0, closedOpposite: false })).toBeNull();
    expect(model.managementText(undefined)).toBeNull();
    expect(model.tradeCells(trade({ management: m }), 'USD', () => '12:03')[9]).toBe(
      'trail active at 1.0862 · stop moved 3 times · breakeven at 12:03 · take-profit levels hit: 2',
    );
  });
});

describe('the book', () => {
  test('a position row: floating P&L includes swap and commission', () => {
    const p = {
      ticket: '9',
      symbol: 'XAUUSD',
      side: 'sell',
      volume: 1.76,
      openPrice: 2000.5,
      sl: null,
      tp: 1990,
      openedAt: '2026-11-26T10:00:00Z',
      profit: 12.5,
      swap: -1,
      commission: -0.5,
    };
    expect(model.positionCells(p, 'USD')).toEqual(['9', 'XAUUSD', 'sell', '1.76 lots', '2000.5', '—', '1990', '2026-11-26T10:00:00Z', '+11.00 USD', '—']);
  });

  test('a position the book has not listed yet (an event alone) has no floating P&L', () => {
    const p = {
      ticket: '9',
      symbol: 'EURUSD',
      side: 'buy',
      volume: 0.1,
      openPrice: 1.1,
      sl: null,
      tp: null,
      openedAt: null,
      profit: null,
      swap: 0,
      commission: 0,
    };
    expect(model.positionCells(p, 'USD')[8]).toBe('—');
    expect(
      model.positionCells({ ...p, management: { trailActiveAt: 1.1, stopMoves: 2, breakevenAt: null, levelsHit: 0, closedOpposite: false } }, 'USD')[9],
    ).toBe('trail active at 1.1 · stop moved 2 times');
  });

  test("an order row: its type, and a stop-limit's trigger (stopLimitPrice) first, then the limit it places (price)", () => {
    const o = {
      ticket: '10',
      symbol: 'EURUSD',
      side: 'buy',
      orderType: 'stop_limit',
      volume: 0.1,
      price: 1.0935,
      stopLimitPrice: 1.095,
      sl: null,
      tp: null,
      placedAt: '2026-11-26T10:00:00Z',
      expiresAt: null,
    };
    expect(model.orderCells(o)).toEqual([
      '10',
      'EURUSD',
      'buy stop-limit',
      '0.10 lots',
      'trigger 1.095 → limit 1.0935',
      '—',
      '—',
      '2026-11-26T10:00:00Z',
      'good till cancelled',
    ]);
    expect(model.orderCells({ ...o, expiresAt: '2026-11-26T18:00:00Z' })[8]).toBe('2026-11-26T18:00:00Z');
    // The trade of a stop-limit not yet triggered says both too; once triggered it is a limit order at its price.
    const pending = { status: 'pending', volume: 0.1, closedVolume: 0, openPrice: undefined, orderType: 'stop_limit', orderPrice: 1.0935 };
    expect(model.tradeCells(trade({ ...pending, stopLimitPrice: 1.095 }), 'USD')[4]).toBe('stop-limit trigger 1.095 → limit 1.0935');
    expect(model.tradeCells(trade({ ...pending, orderType: 'limit' }), 'USD')[4]).toBe('limit at 1.0935');
  });

  test.each([
    [0, 'just now', false],
    [42, '42 s ago', false],
    [150, '2 min ago', false],
    [151, '2 min ago', true],
    [3 * 3600 + 5, '3 h ago', true],
    [null, 'never reported', true],
  ])('data %s s old reads "%s" (stale: %s)', (seconds, text, stale) => {
    expect(model.ageText(seconds)).toEqual({ text, stale });
  });
});

describe('numbers as a trader reads them', () => {
  test.each([
    [100008, 'USD', false, '100,008.00 USD'],
    [99981.6, 'USD', false, '99,981.60 USD'],
    [1234567.891, '', false, '1,234,567.89'],
    [-18.4, 'USD', true, '−18.40 USD'],
    [1.5, 'USD', true, '+1.50 USD'],
    [-1012.5, '', true, '−1,012.50'],
    [0, 'USD', true, '0.00 USD'],
    [-0.001, '', true, '0.00'],
    [999.999, '', false, '1,000.00'],
    [Number.NaN, 'USD', true, '—'],
  ])('money %p %p (signed %p) reads %p', (n, currency, signed, text) => {
    expect(model.money(n, currency, signed)).toBe(text);
  });

  test.each([
    [1, '1 lot'],
    [2, '2 lots'],
    [0.1, '0.10 lots'],
    [0.01, '0.01 lots'],
    [1.5, '1.50 lots'],
    [0.125, '0.125 lots'],
    [null, '—'],
  ])('%p lots read %p', (n, text) => {
    expect(model.lots(n)).toBe(text);
  });

  test('a chart title names only what is known: no currency before any figures', () => {
    expect(model.chartTitle('Daily P&L', 'USD', 'UTC')).toBe('Daily P&L (USD, UTC)');
    expect(model.chartTitle('Daily P&L', '', 'UTC')).toBe('Daily P&L (UTC)');
    expect(model.chartTitle('Equity curve', '')).toBe('Equity curve');
  });

  test.each([
    [100005, '100,005'],
    [0.5, '0.5'],
    [-20, '−20'],
    [1.08620000001, '1.0862'],
  ])('an axis figure %p reads %p', (v, text) => {
    expect(model.tickText(v)).toBe(text);
  });
});

describe('the charts', () => {
  const { CHART } = model;
  const inside = (x: number, y: number) => x >= 0 && x <= CHART.width && y >= CHART.top - 0.1 && y <= CHART.height - CHART.bottom + 0.1;
  const coords = (d: string): Array<[number, number]> => [...d.matchAll(/[ML](-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);

  test('the equity curve: one point per sample, in time order, inside the plot; the highest equity is the highest point', () => {
    const points = [
      { at: '2026-11-26T10:02:00Z', balance: 10000, equity: 10050 },
      { at: '2026-11-26T10:00:00Z', balance: 10000, equity: 9990 },
      { at: '2026-11-26T10:01:00Z', balance: 10000, equity: 10000 },
    ];
    const c = model.equityChart(points);
    const eq = coords(c.equity);
    expect(eq).toHaveLength(3);
    expect(eq.map(([x]) => x)).toEqual([...eq.map(([x]) => x)].sort((a, b) => a - b));
    for (const [x, y] of [...eq, ...coords(c.balance)]) expect(inside(x, y)).toBe(true);
    expect(eq[2]?.[1]).toBe(Math.min(...eq.map(([, y]) => y)));
    expect(c.summary).toMatchObject({ first: 9990, last: 10050, low: 9990, high: 10050, count: 3 });
  });

  test('one sample or a flat line still draws inside the plot', () => {
    const c = model.equityChart([{ at: '2026-11-26T10:00:00Z', balance: 100, equity: 100 }]);
    for (const [x, y] of coords(c.equity)) expect(inside(x, y)).toBe(true);
    expect(inside(c.dot.x, c.dot.y)).toBe(true);
    expect(
      model.equityChart([
        { at: '2026-11-26T10:00:00Z', balance: 100, equity: 100 },
        { at: '2026-11-26T10:01:00Z', balance: 100, equity: 101 },
      ]).dot,
    ).toBeNull();
    expect(model.equityChart([])).toBeNull();
  });

  test('daily bars: a gain stands above the zero line, a loss hangs below, a flat day is a hairline', () => {
    const c = model.dailyChart([
      { day: '2026-11-24', profit: 120 },
      { day: '2026-11-25', profit: -80 },
      { day: '2026-11-26', profit: 0 },
    ]);
    interface Bar {
      kind: string;
      x: number;
      y: number;
      width: number;
      height: number;
    }
    const bars = c.bars as Bar[];
    const [gain, loss, flat] = bars as [Bar, Bar, Bar];
    expect(gain.kind).toBe('gain');
    expect(gain.y + gain.height).toBeCloseTo(c.zero, 0);
    expect(loss.kind).toBe('loss');
    expect(loss.y).toBeCloseTo(c.zero, 0);
    expect(gain.height / loss.height).toBeCloseTo(120 / 80, 1);
    expect(flat).toMatchObject({ kind: 'flat', height: 1 });
    for (const b of bars) expect(inside(b.x, b.y) && inside(b.x + b.width, b.y + b.height)).toBe(true);
    expect(model.dailyChart([])).toBeNull();
  });

  test.each([
    [0, 100, [0, 20, 40, 60, 80, 100]],
    [9990, 10050, [10000, 10020, 10040]],
    [-80, 120, [-50, 0, 50, 100]],
  ])('ticks for %s..%s are round numbers within the range', (lo, hi, ticks) => {
    expect(model.niceTicks(lo, hi)).toEqual(ticks);
  });
});
