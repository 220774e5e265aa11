import {
  DEFAULT_SYMBOLS,
  ManualFeed,
  PaperBroker,
  RISK_MAX_OPEN_POSITIONS,
  SyntheticFeed,
  baselineQuote,
  type BrokerCommand,
  type BrokerOptions,
  type Platform,
} from '../../src/paper/broker';

// Wednesday noon UTC: every market is open.
const WEDNESDAY = Date.parse('2024-06-12T12:00:00Z');
const SATURDAY = Date.parse('2024-06-15T12:00:00Z');

function setup(platform: Platform = 'mt5', options: Partial<BrokerOptions> = {}) {
  let now = WEDNESDAY;
  const feed = new ManualFeed();
  feed.set('EURUSD', 1.085, 1.0851);
  feed.set('USDJPY', 150.0, 150.012);
  feed.set('XAUUSD', 2350.0, 2350.3);
  feed.set('US30', 39000, 39002);
  const broker = new PaperBroker({ platform, clock: () => now, feed, ...options });
  let n = 0;
  const run = (cmd: BrokerCommand) => broker.execute({ commandId: `cmd-${++n}`, ...cmd });
  return {
    broker,
    feed,
    run,
    at: (ms: number) => {
      now = ms;
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Opens a position and returns its ticket. */
function open(run: ReturnType<typeof setup>['run'], cmd: Partial<BrokerCommand> & { action?: 'buy' | 'sell' } = {}): string {
  const { result } = run({ action: 'buy', symbol: 'EURUSD', volume: 1, ...cmd });
  expect(result.status).toBe('filled');
  return result.ticket!;
}

describe('paper broker: symbols', () => {
  test('when the command names a known symbol, a suffixed or prefixed one, or an alias, then it resolves to the table entry', () => {
    const { broker } = setup('mt5', { naming: { prefixes: ['m.'] } });
    expect(broker.resolveSymbol('EURUSD')?.name).toBe('EURUSD');
    expect(broker.resolveSymbol('EURUSD.m')?.name).toBe('EURUSD');
    expect(broker.resolveSymbol('EURUSD-pro')?.name).toBe('EURUSD');
    expect(broker.resolveSymbol('eurusd')?.name).toBe('EURUSD');
    expect(broker.resolveSymbol('m.GBPUSD')?.name).toBe('GBPUSD');
    expect(broker.resolveSymbol('GOLD')?.name).toBe('XAUUSD');
    expect(broker.resolveSymbol('GOLD.m')?.name).toBe('XAUUSD');
    expect(broker.resolveSymbol('EURUSD.x')).toBeUndefined();
    expect(broker.resolveSymbol('.m')).toBeUndefined();
  });

  test('when the symbol table is listed, then it has digits, pip size and volume rules for each symbol', () => {
    const byName = Object.fromEntries(DEFAULT_SYMBOLS.map((s) => [s.name, s]));
    expect(byName.EURUSD).toMatchObject({ digits: 5, pip: 0.0001, volumeStep: 0.01, minVolume: 0.01, maxVolume: 100 });
    expect(byName.USDJPY).toMatchObject({ digits: 3, pip: 0.01 });
    expect(byName.XAUUSD).toMatchObject({ digits: 2, pip: 0.1 });
    expect(byName.US30).toMatchObject({ session: 'weekdays', volumeStep: 0.1, minVolume: 0.1 });
  });

  test('when an MT5 command names an unknown symbol, then it is rejected with 10013 Invalid request', () => {
    const { run } = setup('mt5');
    expect(run({ action: 'buy', symbol: 'FOOBAR', volume: 1 }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
    expect(run({ action: 'buy', symbol: 'FOOBAR', volume: 1 }).result.message).toMatch(/^Invalid request: unknown symbol FOOBAR/);
  });

  test('when a cTrader command names an unknown symbol, then it is rejected with SYMBOL_NOT_FOUND', () => {
    const { run } = setup('ctrader');
    expect(run({ action: 'sell_limit', symbol: 'FOOBAR', volume: 1, price: 2 }).result).toMatchObject({ status: 'rejected', retcode: 'SYMBOL_NOT_FOUND' });
  });

  test('when an entry has no symbol or no volume, then it is rejected as an invalid request', () => {
    const mt5 = setup('mt5');
    expect(mt5.run({ action: 'buy', volume: 1 }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
    expect(mt5.run({ action: 'buy', symbol: 'EURUSD' }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
    expect(setup('ctrader').run({ action: 'buy', symbol: 'EURUSD' }).result).toMatchObject({ status: 'rejected', retcode: 'INVALID_REQUEST' });
  });
});

describe('paper broker: price feed', () => {
  test('when the synthetic feed is asked twice for the same instant, then it gives the same quote with the symbol spread and digits', () => {
    const feed = new SyntheticFeed();
    const spec = DEFAULT_SYMBOLS.find((s) => s.name === 'EURUSD')!;
    const a = feed.quote(spec, WEDNESDAY);
    expect(feed.quote(spec, WEDNESDAY)).toEqual(a);
    expect(a.ask - a.bid).toBeCloseTo(0.0001, 8);
    expect(Number(a.bid.toFixed(5))).toBe(a.bid);
    expect(Math.abs(a.bid - spec.basePrice)).toBeLessThan(spec.basePrice * 0.001);
  });

  test('when time passes, then the synthetic feed moves slowly', () => {
    const feed = new SyntheticFeed();
    const spec = DEFAULT_SYMBOLS.find((s) => s.name === 'XAUUSD')!;
    const prices = [0, 60_000, 120_000, 300_000].map((dt) => feed.quote(spec, WEDNESDAY + dt).bid);
    expect(new Set(prices).size).toBeGreaterThan(1);
    expect(Math.abs(prices[1]! - prices[0]!)).toBeLessThan(spec.basePrice * 0.001);
  });

  test('when the manual feed has no quote for a symbol, then it quotes the baseline', () => {
    const { broker } = setup();
    expect(broker.quote('GBPUSD')).toEqual(baselineQuote(DEFAULT_SYMBOLS.find((s) => s.name === 'GBPUSD')!));
    expect(broker.quote('EURUSD.m')).toEqual({ bid: 1.085, ask: 1.0851 });
  });
});

describe('paper broker: market entries', () => {
  test('when buying at market, then it fills at the ask with a new ticket and an open in the ops', () => {
    const { run, broker } = setup();
    const { result, ops } = run({ commandId: 'c1', action: 'buy', symbol: 'EURUSD.m', volume: 0.5 });
    expect(result).toEqual({ status: 'filled', ticket: '1000001', price: 1.0851, volume: 0.5 });
    expect(ops).toEqual([
      expect.objectContaining({
        commandId: 'c1',
        action: 'buy',
        op: 'open',
        ticket: '1000001',
        symbol: 'EURUSD.m',
        side: 'buy',
        volume: 0.5,
        price: 1.0851,
        cause: 'command',
      }),
    ]);
    expect(broker.positions()).toEqual([expect.objectContaining({ ticket: '1000001', side: 'buy', volume: 0.5, openPrice: 1.0851, sl: null, tp: null })]);
  });

  test('when selling at market twice, then each fills at the bid with increasing tickets', () => {
    const { run } = setup();
    const first = run({ action: 'sell', symbol: 'EURUSD', volume: 1 }).result;
    const second = run({ action: 'sell', symbol: 'EURUSD', volume: 1 }).result;
    expect(first).toMatchObject({ status: 'filled', price: 1.085 });
    expect(Number(second.ticket)).toBeGreaterThan(Number(first.ticket));
  });

  test('when a market order carries sl and tp prices, then the position has them (rounded to digits)', () => {
    const { run, broker } = setup();
    open(run, { sl: 1.080004, tp: 1.09 });
    expect(broker.positions()[0]).toMatchObject({ sl: 1.08, tp: 1.09 });
  });

  test('when a buy carries slPips and tpPips, then they are converted from the fill price with the pip size', () => {
    const { run, broker } = setup();
    open(run, { slPips: 20, tpPips: 35.5 });
    expect(broker.positions()[0]).toMatchObject({ openPrice: 1.0851, sl: 1.0831, tp: 1.08865 });
  });

  test('when a sell carries slPips and tpPips, then they are mirrored around the fill price', () => {
    const { run, broker } = setup();
    open(run, { action: 'sell', slPips: 20, tpPips: 40 });
    expect(broker.positions()[0]).toMatchObject({ openPrice: 1.085, sl: 1.087, tp: 1.081 });
  });

  test('when slPips are given on USDJPY and XAUUSD, then their pip sizes (0.01 and 0.1) apply', () => {
    const { run, broker } = setup();
    open(run, { symbol: 'USDJPY', slPips: 25 });
    open(run, { symbol: 'GOLD', volume: 0.1, slPips: 50, tpPips: 100 });
    const [jpy, gold] = broker.positions();
    expect(jpy).toMatchObject({ openPrice: 150.012, sl: 149.762 });
    expect(gold).toMatchObject({ symbol: 'GOLD', openPrice: 2350.3, sl: 2345.3, tp: 2360.3 });
  });

  test('when a buy has its sl above the bid, then MT5 rejects it with 10016 Invalid stops', () => {
    const { run, broker } = setup();
    const { result, ops } = run({ action: 'buy', symbol: 'EURUSD', volume: 1, sl: 1.086 });
    expect(result).toMatchObject({ status: 'rejected', retcode: 10016 });
    expect(result.message).toMatch(/^Invalid stops: sl 1.08600 must be below the bid 1.08500/);
    expect(ops).toEqual([]);
    expect(broker.positions()).toEqual([]);
  });

  test('when a buy has its sl between bid and ask (slPips inside the spread), then it is rejected with invalid stops', () => {
    const { run } = setup();
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 1, slPips: 0.5 }).result).toMatchObject({ status: 'rejected', retcode: 10016 });
  });

  test('when a buy has its tp below the bid, then it is rejected with invalid stops', () => {
    const { run } = setup();
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 1, tp: 1.08 }).result).toMatchObject({ status: 'rejected', retcode: 10016 });
  });

  test('when a cTrader sell has its sl below the ask or its tp above, then it is rejected with TRADING_BAD_STOPS', () => {
    const { run } = setup('ctrader');
    expect(run({ action: 'sell', symbol: 'EURUSD', volume: 1, sl: 1.0851 }).result).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_STOPS' });
    expect(run({ action: 'sell', symbol: 'EURUSD', volume: 1, tp: 1.09 }).result).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_STOPS' });
  });

  test('when the volume is below the minimum, above the maximum or not a multiple of the step, then MT5 rejects it with 10014', () => {
    const { run } = setup();
    for (const volume of [0.001, 0.015, 150]) {
      expect(run({ action: 'buy', symbol: 'EURUSD', volume }).result).toMatchObject({ status: 'rejected', retcode: 10014 });
    }
    expect(run({ action: 'buy', symbol: 'US30', volume: 0.05 }).result).toMatchObject({ status: 'rejected', retcode: 10014 });
    expect(run({ action: 'buy', symbol: 'XAUUSD', volume: 60 }).result.message).toMatch(/above the maximum 50/);
  });

  test('when a cTrader volume is invalid, then it is rejected with TRADING_BAD_VOLUME', () => {
    const { run } = setup('ctrader');
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 0.013 }).result).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_VOLUME' });
  });

  test('when the volume is a multiple of the step within float error (0.07, 0.3), then it fills', () => {
    const { run } = setup();
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 0.07 }).result).toMatchObject({ status: 'filled', volume: 0.07 });
    expect(run({ action: 'buy', symbol: 'US30', volume: 0.3 }).result).toMatchObject({ status: 'filled', volume: 0.3 });
  });

  test('when US30 is traded on a Saturday, then MT5 rejects it with 10018 Market is closed and cTrader with MARKET_CLOSED', () => {
    const mt5 = setup('mt5');
    mt5.at(SATURDAY);
    expect(mt5.run({ action: 'buy', symbol: 'US30', volume: 1 }).result).toMatchObject({
      status: 'rejected',
      retcode: 10018,
      message: 'Market is closed: US30',
    });
    expect(mt5.run({ action: 'buy', symbol: 'EURUSD', volume: 1 }).result.status).toBe('filled');
    const ct = setup('ctrader');
    ct.at(SATURDAY);
    expect(ct.run({ action: 'buy', symbol: 'US30', volume: 1 }).result).toMatchObject({ status: 'rejected', retcode: 'MARKET_CLOSED' });
  });

  test('when a market is toggled closed and then back to its schedule, then entries are refused and then filled', () => {
    const { run, broker } = setup();
    broker.setMarketOpen('EURUSD.m', false);
    expect(broker.isMarketOpen('EURUSD')).toBe(false);
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 1 }).result).toMatchObject({ status: 'rejected', retcode: 10018 });
    broker.setMarketOpen('EURUSD', undefined);
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 1 }).result.status).toBe('filled');
  });

  test('when the margin exceeds the free margin, then MT5 rejects with 10019 No money and cTrader with NOT_ENOUGH_MONEY', () => {
    // 1 lot EURUSD at 1.0851 with leverage 100 needs 1085.10 USD.
    const mt5 = setup('mt5', { balance: 1000 });
    expect(mt5.run({ action: 'buy', symbol: 'EURUSD', volume: 1 }).result).toMatchObject({ status: 'rejected', retcode: 10019 });
    expect(mt5.run({ action: 'buy', symbol: 'EURUSD', volume: 0.9 }).result.status).toBe('filled');
    expect(mt5.run({ action: 'buy', symbol: 'EURUSD', volume: 0.1 }).result).toMatchObject({ status: 'rejected', retcode: 10019 });
    const ct = setup('ctrader', { balance: 1000, leverage: 10 });
    expect(ct.run({ action: 'buy', symbol: 'EURUSD', volume: 0.1 }).result).toMatchObject({ status: 'rejected', retcode: 'NOT_ENOUGH_MONEY' });
  });

  test('when the command carries maxOpenPositions and the account has that many open, then it is rejected with risk_max_open_positions', () => {
    const { run } = setup();
    open(run);
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 1, maxOpenPositions: 2 }).result.status).toBe('filled');
    const { result } = run({ action: 'sell_limit', symbol: 'EURUSD', volume: 1, price: 1.09, maxOpenPositions: 2 });
    expect(result).toMatchObject({ status: 'rejected', retcode: RISK_MAX_OPEN_POSITIONS });
    expect(result.message).toMatch(/2 open position\(s\); the maximum is 2/);
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 1 }).result.status).toBe('filled');
  });

  test('when the symbol holds maxOpenPositionsPerSymbol, then an entry in it is refused; one in another symbol runs', () => {
    const { run } = setup();
    open(run);
    const { result } = run({ action: 'sell', symbol: 'EURUSD', volume: 1, maxOpenPositionsPerSymbol: 1 });
    expect(result).toMatchObject({ status: 'rejected', retcode: RISK_MAX_OPEN_POSITIONS });
    expect(result.message).toMatch(/1 open position\(s\) in EURUSD; the maximum per symbol is 1/);
    expect(run({ action: 'buy', symbol: 'GBPUSD', volume: 1, maxOpenPositionsPerSymbol: 1 }).result.status).toBe('filled');
  });

  test('when maxOpenPositions is 0, then every entry is refused with the same retcode on cTrader', () => {
    const { run } = setup('ctrader');
    expect(run({ action: 'buy', symbol: 'EURUSD', volume: 1, maxOpenPositions: 0 }).result).toMatchObject({
      status: 'rejected',
      retcode: 'risk_max_open_positions',
    });
  });
});

describe('paper broker: pending entries', () => {
  test('when a buy_limit is placed below the ask, then it is "filled" with the order ticket and the entry price, and no position opens', () => {
    const { run, broker } = setup();
    const { result, ops } = run({ commandId: 'p1', action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 });
    expect(result).toEqual({ status: 'filled', ticket: '1000001', price: 1.08, volume: 1 });
    expect(ops).toEqual([expect.objectContaining({ commandId: 'p1', op: 'place', orderType: 'limit', ticket: '1000001', price: 1.08 })]);
    expect(broker.positions()).toEqual([]);
    expect(broker.orders()).toEqual([expect.objectContaining({ ticket: '1000001', type: 'limit', side: 'buy', price: 1.08 })]);
  });

  test.each([
    ['buy_limit', 1.0851, /buy limit 1.08510 must be below the ask 1.08510/],
    ['sell_limit', 1.085, /sell limit 1.08500 must be above the bid/],
    ['buy_stop', 1.084, /buy stop 1.08400 must be above the ask/],
    ['sell_stop', 1.09, /sell stop 1.09000 must be below the bid/],
  ] as const)('when a %s is on the wrong side of the market (%s), then MT5 rejects it with 10015 Invalid price', (action, price, message) => {
    const { run } = setup();
    const { result } = run({ action, symbol: 'EURUSD', volume: 1, price });
    expect(result).toMatchObject({ status: 'rejected', retcode: 10015 });
    expect(result.message).toMatch(message);
  });

  test('when a cTrader pending price is on the wrong side, then it is rejected with TRADING_BAD_PRICES', () => {
    const { run } = setup('ctrader');
    expect(run({ action: 'buy_stop', symbol: 'EURUSD', volume: 1, price: 1.08 }).result).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_PRICES' });
  });

  test('when a pending entry has no price, then it is an invalid request', () => {
    const { run } = setup();
    expect(run({ action: 'buy_stop', symbol: 'EURUSD', volume: 1 }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
  });

  test('when a pending entry carries slPips and tpPips, then they are converted from the entry price', () => {
    const { run, broker } = setup();
    run({ action: 'sell_stop', symbol: 'EURUSD', volume: 1, price: 1.08, slPips: 30, tpPips: 60 });
    expect(broker.orders()[0]).toMatchObject({ price: 1.08, sl: 1.083, tp: 1.074 });
  });

  test('when a pending entry has its sl beyond the entry (buy_limit sl above the price), then it is rejected with invalid stops', () => {
    const { run } = setup();
    const { result } = run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08, sl: 1.081 });
    expect(result).toMatchObject({ status: 'rejected', retcode: 10016 });
    expect(result.message).toMatch(/sl 1.08100 must be below the entry 1.08000/);
  });

  test('when the ask falls to a buy_limit, then it triggers into a position with the order ticket, its stops and a trigger op', () => {
    const { run, broker, feed } = setup();
    const { result } = run({ commandId: 'p1', action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08, sl: 1.07, tp: 1.09 });
    feed.set('EURUSD', 1.0805, 1.0806);
    expect(broker.tick()).toEqual([]);
    feed.set('EURUSD', 1.0798, 1.0799);
    const ops = broker.tick();
    expect(ops).toEqual([
      expect.objectContaining({
        commandId: 'p1',
        action: 'buy_limit',
        op: 'trigger',
        cause: 'price',
        ticket: result.ticket,
        price: 1.0799,
        orderType: 'limit',
      }),
    ]);
    expect(broker.orders()).toEqual([]);
    expect(broker.positions()).toEqual([expect.objectContaining({ ticket: result.ticket, side: 'buy', openPrice: 1.0799, sl: 1.07, tp: 1.09 })]);
  });

  test('when the price crosses a buy_stop, a sell_limit and a sell_stop, then each triggers on its own side of the quote', () => {
    const { run, broker, feed } = setup();
    run({ action: 'buy_stop', symbol: 'EURUSD', volume: 1, price: 1.086 });
    run({ action: 'sell_limit', symbol: 'EURUSD', volume: 1, price: 1.0865 });
    run({ action: 'sell_stop', symbol: 'EURUSD', volume: 1, price: 1.084 });
    feed.set('EURUSD', 1.0859, 1.086); // ask reaches the buy stop
    expect(broker.tick().map((o) => o.ticket)).toEqual(['1000001']);
    feed.set('EURUSD', 1.0865, 1.0866); // bid reaches the sell limit
    expect(broker.tick().map((o) => o.ticket)).toEqual(['1000002']);
    feed.set('EURUSD', 1.0839, 1.084); // bid falls through the sell stop
    expect(broker.tick().map((o) => o.ticket)).toEqual(['1000003']);
    expect(broker.positions().map((p) => [p.ticket, p.side, p.openPrice])).toEqual([
      ['1000001', 'buy', 1.086],
      ['1000002', 'sell', 1.0865],
      ['1000003', 'sell', 1.0839],
    ]);
  });

  test('when a buy_stop_limit reaches its trigger, then a limit order at its price is placed, which later fills as a limit', () => {
    const { run, broker, feed } = setup();
    const { result } = run({ action: 'buy_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.0855, stopLimitPrice: 1.087, slPips: 10 });
    expect(result).toMatchObject({ status: 'filled', price: 1.0855 });
    expect(broker.orders()[0]).toMatchObject({ type: 'stop_limit', price: 1.0855, stopLimitPrice: 1.087, sl: 1.0845 });
    feed.set('EURUSD', 1.0852, 1.0853); // below the limit price, but the trigger has not been reached
    expect(broker.tick()).toEqual([]);
    feed.set('EURUSD', 1.0869, 1.087);
    expect(broker.tick()).toEqual([expect.objectContaining({ op: 'stop_limit_trigger', ticket: result.ticket, orderType: 'limit' })]);
    expect(broker.orders()[0]).toMatchObject({ type: 'limit', stopLimitPrice: null, price: 1.0855 });
    feed.set('EURUSD', 1.0854, 1.0855);
    expect(broker.tick()).toEqual([expect.objectContaining({ op: 'trigger', ticket: result.ticket, price: 1.0855 })]);
    expect(broker.positions()[0]).toMatchObject({ ticket: result.ticket, openPrice: 1.0855, sl: 1.0845 });
  });

  test('when a sell_stop_limit gaps through its trigger and its limit in one tick, then it triggers and fills in the same tick', () => {
    const { run, broker, feed } = setup();
    run({ action: 'sell_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.0845, stopLimitPrice: 1.084 });
    feed.set('EURUSD', 1.0846, 1.0847); // above both: nothing
    expect(broker.tick()).toEqual([]);
    feed.set('EURUSD', 1.0838, 1.0839);
    expect(broker.tick().map((o) => o.op)).toEqual(['stop_limit_trigger']);
    feed.set('EURUSD', 1.0846, 1.0847);
    expect(broker.tick().map((o) => o.op)).toEqual(['trigger']);
  });

  test('when a stop-limit trigger is on the wrong side or its limit is beyond its trigger, then it is rejected with invalid price', () => {
    const { run } = setup();
    expect(run({ action: 'buy_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.08, stopLimitPrice: 1.085 }).result).toMatchObject({ retcode: 10015 });
    expect(run({ action: 'buy_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.088, stopLimitPrice: 1.087 }).result).toMatchObject({ retcode: 10015 });
    expect(run({ action: 'sell_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.08, stopLimitPrice: 1.083 }).result).toMatchObject({ retcode: 10015 });
    expect(run({ action: 'sell_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.083 }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
  });

  test('when a pending order with an expiry reaches it, then it expires with an expire op', () => {
    const { run, broker, advance } = setup();
    run({ commandId: 'p1', action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08, expiry: new Date(WEDNESDAY + 60_000).toISOString() });
    advance(59_999);
    expect(broker.tick()).toEqual([]);
    advance(1);
    expect(broker.tick()).toEqual([expect.objectContaining({ op: 'expire', cause: 'expiry', commandId: 'p1', ticket: '1000001' })]);
    expect(broker.orders()).toEqual([]);
  });

  test('when a pending expiry is in the past, then MT5 rejects it with 10022 and cTrader with TRADING_BAD_EXPIRATION_DATE', () => {
    const past = new Date(WEDNESDAY - 1).toISOString();
    expect(setup('mt5').run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08, expiry: past }).result).toMatchObject({ retcode: 10022 });
    expect(setup('ctrader').run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08, expiry: past }).result).toMatchObject({
      retcode: 'TRADING_BAD_EXPIRATION_DATE',
    });
  });

  test('when a pending order triggers without enough free margin, then it is cancelled for lack of money instead of filling', () => {
    const { run, broker, feed } = setup('mt5', { balance: 1100 });
    run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 });
    open(run, { volume: 0.5 });
    feed.set('EURUSD', 1.0798, 1.0799);
    const ops = broker.tick();
    expect(ops).toEqual([expect.objectContaining({ op: 'cancel', cause: 'no_money', ticket: '1000001' })]);
    expect(broker.positions()).toHaveLength(1);
  });

  test('when a pending entry needs more margin than is free, then it is rejected with no money', () => {
    const { run } = setup('mt5', { balance: 100 });
    expect(run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }).result).toMatchObject({ status: 'rejected', retcode: 10019 });
  });
});

describe('paper broker: the market closes positions at SL and TP', () => {
  test('when the bid falls to a buy position SL, then it closes at the bid with the loss booked', () => {
    const { run, broker, feed } = setup();
    const ticket = open(run, { commandId: 'o1', sl: 1.08 });
    feed.set('EURUSD', 1.0799, 1.08);
    const ops = broker.tick();
    expect(ops).toEqual([expect.objectContaining({ op: 'close', cause: 'sl', ticket, commandId: 'o1', price: 1.0799, profit: -520 })]);
    expect(broker.positions()).toEqual([]);
    expect(broker.account().balance).toBe(100_000 - 520);
  });

  test('when the ask falls to a sell position TP, then it closes at the ask with the profit booked', () => {
    const { run, broker, feed } = setup();
    open(run, { action: 'sell', tp: 1.08, volume: 0.1 });
    feed.set('EURUSD', 1.0799, 1.08);
    expect(broker.tick()).toEqual([expect.objectContaining({ op: 'close', cause: 'tp', price: 1.08, profit: 50 })]);
  });

  test('when the market of a position is closed, then its SL does not trigger until it opens', () => {
    const { run, broker, feed } = setup();
    open(run, { sl: 1.08 });
    broker.setMarketOpen('EURUSD', false);
    feed.set('EURUSD', 1.07, 1.0701);
    expect(broker.tick()).toEqual([]);
    broker.setMarketOpen('EURUSD', true);
    expect(broker.tick()).toEqual([expect.objectContaining({ op: 'close', cause: 'sl', price: 1.07 })]);
  });
});

describe('paper broker: closing', () => {
  test('when closing by positionId, then it closes at the bid, books the profit and reports done with the ticket', () => {
    const { run, broker, feed } = setup();
    const ticket = open(run);
    feed.set('EURUSD', 1.0861, 1.0862);
    expect(broker.account()).toMatchObject({ balance: 100_000, equity: 100_100 });
    const { result, ops } = run({ commandId: 'c9', action: 'close', positionId: ticket });
    expect(result).toEqual({ status: 'done', ticket, price: 1.0861, volume: 1 });
    expect(ops).toEqual([expect.objectContaining({ commandId: 'c9', action: 'close', op: 'close', cause: 'command', ticket, profit: 100, balance: 100_100 })]);
    expect(broker.positions()).toEqual([]);
  });

  test('when closing a USDJPY position, then the profit is converted from JPY to USD', () => {
    const { run, feed } = setup();
    const ticket = open(run, { symbol: 'USDJPY' });
    feed.set('USDJPY', 150.512, 150.524);
    const { ops } = run({ action: 'close', positionId: ticket });
    expect(ops[0]!.profit).toBeCloseTo(50_000 / 150.518, 2);
  });

  test('when the position does not exist, then MT5 rejects with 10036 and cTrader with POSITION_NOT_FOUND', () => {
    expect(setup('mt5').run({ action: 'close', positionId: '42' }).result).toMatchObject({
      status: 'rejected',
      retcode: 10036,
      message: "Position doesn't exist: position 42",
    });
    expect(setup('ctrader').run({ action: 'close', positionId: '42' }).result).toMatchObject({ status: 'rejected', retcode: 'POSITION_NOT_FOUND' });
  });

  test('when closing while the market is closed, then it is rejected with market closed', () => {
    const { run, broker } = setup();
    const ticket = open(run);
    broker.setMarketOpen('EURUSD', false);
    expect(run({ action: 'close', positionId: ticket }).result).toMatchObject({ status: 'rejected', retcode: 10018 });
  });

  test('when a filtered close names a symbol, then only that symbol positions close (broker suffixes match)', () => {
    const { run, broker } = setup();
    open(run);
    open(run, { symbol: 'EURUSD.m' });
    const jpy = open(run, { symbol: 'USDJPY' });
    const { result } = run({ action: 'close', symbol: 'EURUSD-pro' });
    expect(result).toMatchObject({ status: 'done', ticket: null, message: 'closed 2 position(s) 1000001,1000002' });
    expect(broker.positions().map((p) => p.ticket)).toEqual([jpy]);
  });

  test('when a filtered close names a side, then only that side closes', () => {
    const { run, broker } = setup();
    open(run);
    const sell = open(run, { action: 'sell' });
    expect(run({ action: 'close', side: 'buy' }).result).toMatchObject({ status: 'done', ticket: '1000001' });
    expect(broker.positions().map((p) => p.ticket)).toEqual([sell]);
  });

  test('when a filtered close asks for profit or loss, then positions are chosen by their floating P&L', () => {
    const { run, broker, feed } = setup();
    const buy = open(run);
    const sell = open(run, { action: 'sell' });
    feed.set('EURUSD', 1.0861, 1.0862); // the buy is in profit, the sell at a loss
    expect(run({ action: 'close', pnl: 'loss' }).result).toMatchObject({ status: 'done', ticket: sell });
    expect(broker.positions().map((p) => p.ticket)).toEqual([buy]);
    expect(run({ action: 'close', pnl: 'loss' }).result).toMatchObject({ status: 'done', ticket: null, message: 'nothing to close' });
    expect(run({ action: 'close', symbol: 'EURUSD', side: 'buy', pnl: 'profit' }).result).toMatchObject({ status: 'done', ticket: buy });
  });

  test('when a filtered close names an unknown symbol, then it is rejected as an unknown symbol', () => {
    const { run } = setup('ctrader');
    expect(run({ action: 'close', symbol: 'NOPE' }).result).toMatchObject({ status: 'rejected', retcode: 'SYMBOL_NOT_FOUND' });
  });

  test('when every matching position is on a closed market, then the filtered close is rejected with market closed', () => {
    const { run, broker, at } = setup();
    open(run, { symbol: 'US30' });
    at(SATURDAY);
    expect(run({ action: 'close', symbol: 'US30' }).result).toMatchObject({ status: 'rejected', retcode: 10018 });
    expect(broker.positions()).toHaveLength(1);
  });

  test('when close_all runs, then every position closes and every pending order is cancelled', () => {
    const { run, broker } = setup();
    open(run);
    open(run, { action: 'sell', symbol: 'XAUUSD', volume: 0.1 });
    run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 });
    const { result, ops } = run({ action: 'close_all' });
    expect(result).toMatchObject({ status: 'done', ticket: null, message: 'closed 2 position(s) 1000001,1000002; cancelled 1 order(s) 1000003' });
    expect(ops.map((o) => o.op)).toEqual(['close', 'close', 'cancel']);
    expect(broker.positions()).toEqual([]);
    expect(broker.orders()).toEqual([]);
  });

  test('when close_all meets a closed market, then it closes the rest and says which market it skipped', () => {
    const { run, broker, at } = setup();
    open(run);
    open(run, { symbol: 'US30' });
    at(SATURDAY);
    expect(run({ action: 'close_all' }).result).toMatchObject({
      status: 'done',
      ticket: '1000001',
      message: 'closed 1 position(s) 1000001; market closed: US30',
    });
    expect(broker.positions().map((p) => p.symbol)).toEqual(['US30']);
  });

  test('when close_all finds nothing, then it is done with nothing to close', () => {
    expect(setup().run({ action: 'close_all' }).result).toEqual({ status: 'done', ticket: null, message: 'nothing to close' });
  });
});

describe('paper broker: partial close', () => {
  test('when part of a position is closed, then the rest stays open under the same ticket', () => {
    const { run, broker, feed } = setup();
    const ticket = open(run, { volume: 0.3 });
    feed.set('EURUSD', 1.0861, 1.0862);
    const { result, ops } = run({ action: 'partial_close', positionId: ticket, partialVolume: 0.1 });
    expect(result).toEqual({ status: 'done', ticket, price: 1.0861, volume: 0.1 });
    expect(ops).toEqual([expect.objectContaining({ op: 'partial_close', ticket, volume: 0.1, profit: 10 })]);
    expect(broker.positions()).toEqual([expect.objectContaining({ ticket, volume: 0.2 })]);
  });

  test('when partialVolume is at least the position volume, then the whole position closes', () => {
    const { run, broker } = setup();
    const ticket = open(run, { volume: 0.2 });
    expect(run({ action: 'partial_close', positionId: ticket, partialVolume: 0.5 }).result).toMatchObject({
      status: 'done',
      ticket,
      volume: 0.2,
      message: 'closed in full',
    });
    expect(broker.positions()).toEqual([]);
  });

  test('when partialVolume is not a multiple of the volume step, then it is rejected with invalid volume', () => {
    const { run, broker } = setup();
    const ticket = open(run, { volume: 0.3 });
    expect(run({ action: 'partial_close', positionId: ticket, partialVolume: 0.015 }).result).toMatchObject({ status: 'rejected', retcode: 10014 });
    expect(setup('ctrader').run({ action: 'partial_close', positionId: '1', partialVolume: 0.1 }).result).toMatchObject({ retcode: 'POSITION_NOT_FOUND' });
    expect(broker.positions()[0]!.volume).toBe(0.3);
  });

  test('when the remaining volume would be below the minimum, then it is rejected with invalid volume', () => {
    const { run } = setup('mt5', { symbols: DEFAULT_SYMBOLS.map((s) => (s.name === 'EURUSD' ? { ...s, minVolume: 0.1 } : s)) });
    const ticket = open(run, { volume: 0.15 });
    expect(run({ action: 'partial_close', positionId: ticket, partialVolume: 0.1 }).result).toMatchObject({ status: 'rejected', retcode: 10014 });
    expect(run({ action: 'partial_close', positionId: ticket, partialVolume: 0.01 }).result).toMatchObject({ status: 'rejected', retcode: 10014 });
  });
});

describe('paper broker: pending order management', () => {
  test('when cancel_pending names an order, then it is removed with a cancel op', () => {
    const { run, broker } = setup();
    const { result: placed } = run({ action: 'sell_limit', symbol: 'EURUSD', volume: 1, price: 1.09 });
    const { result, ops } = run({ commandId: 'x', action: 'cancel_pending', orderId: placed.ticket! });
    expect(result).toEqual({ status: 'done', ticket: placed.ticket });
    expect(ops).toEqual([expect.objectContaining({ commandId: 'x', action: 'cancel_pending', op: 'cancel', cause: 'command', ticket: placed.ticket })]);
    expect(broker.orders()).toEqual([]);
  });

  test('when the order does not exist, then MT5 rejects with 4754 Order not found and cTrader with ORDER_NOT_FOUND', () => {
    expect(setup('mt5').run({ action: 'cancel_pending', orderId: '9' }).result).toMatchObject({ status: 'rejected', retcode: 4754 });
    expect(setup('ctrader').run({ action: 'modify_pending', orderId: '9', price: 1 }).result).toMatchObject({ status: 'rejected', retcode: 'ORDER_NOT_FOUND' });
    expect(setup('mt5').run({ action: 'modify_pending_expiry', orderId: '9', expiry: new Date(WEDNESDAY + 1000).toISOString() }).result).toMatchObject({
      retcode: 4754,
    });
  });

  test('when a position ticket is given as an orderId, then it is not found (positions and orders are apart)', () => {
    const { run } = setup();
    const ticket = open(run);
    expect(run({ action: 'cancel_pending', orderId: ticket }).result).toMatchObject({ status: 'rejected', retcode: 4754 });
  });

  test('when modify_pending changes price, sl, tp and expiry, then the order has them and a modify_order op is written', () => {
    const { run, broker } = setup();
    const { result: placed } = run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 });
    const expiry = new Date(WEDNESDAY + 3_600_000).toISOString();
    const { result, ops } = run({ action: 'modify_pending', orderId: placed.ticket!, price: 1.081, sl: 1.075, tp: 1.09, expiry });
    expect(result).toEqual({ status: 'done', ticket: placed.ticket });
    expect(ops).toEqual([expect.objectContaining({ op: 'modify_order', price: 1.081, sl: 1.075, tp: 1.09, expiry })]);
    expect(broker.orders()[0]).toMatchObject({ price: 1.081, sl: 1.075, tp: 1.09, expiry });
  });

  test('when modify_pending moves the price to the wrong side of the market, then it is rejected with invalid price', () => {
    const { run, broker } = setup();
    const { result: placed } = run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 });
    expect(run({ action: 'modify_pending', orderId: placed.ticket!, price: 1.09 }).result).toMatchObject({ status: 'rejected', retcode: 10015 });
    expect(broker.orders()[0]!.price).toBe(1.08);
  });

  test('when modify_pending moves only the sl beyond the entry, then it is rejected with invalid stops', () => {
    const { run } = setup();
    const { result: placed } = run({ action: 'sell_stop', symbol: 'EURUSD', volume: 1, price: 1.08 });
    expect(run({ action: 'modify_pending', orderId: placed.ticket!, sl: 1.079 }).result).toMatchObject({ status: 'rejected', retcode: 10016 });
  });

  test('when modify_pending changes the trigger of a stop-limit, then it is checked and kept; on a plain limit it is an invalid request', () => {
    const { run, broker } = setup();
    const sl = run({ action: 'buy_stop_limit', symbol: 'EURUSD', volume: 1, price: 1.086, stopLimitPrice: 1.087 }).result;
    expect(run({ action: 'modify_pending', orderId: sl.ticket!, stopLimitPrice: 1.0875 }).result.status).toBe('done');
    expect(broker.orders()[0]).toMatchObject({ stopLimitPrice: 1.0875 });
    expect(run({ action: 'modify_pending', orderId: sl.ticket!, stopLimitPrice: 1.0855 }).result).toMatchObject({ retcode: 10015 });
    const limit = run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }).result;
    expect(run({ action: 'modify_pending', orderId: limit.ticket!, stopLimitPrice: 1.09 }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
  });

  test('when modify_pending changes nothing, then MT5 answers done with 10025 No changes and cTrader done', () => {
    const mt5 = setup('mt5');
    const a = mt5.run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }).result;
    expect(mt5.run({ action: 'modify_pending', orderId: a.ticket!, price: 1.08 })).toEqual({
      result: { status: 'done', ticket: a.ticket, retcode: 10025, message: 'No changes' },
      ops: [],
    });
    const ct = setup('ctrader');
    const b = ct.run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }).result;
    expect(ct.run({ action: 'modify_pending', orderId: b.ticket!, price: 1.08 }).result).toEqual({ status: 'done', ticket: b.ticket, message: 'No changes' });
  });

  test('when modify_pending has nothing to modify, then it is an invalid request', () => {
    const { run } = setup();
    const a = run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }).result;
    expect(run({ action: 'modify_pending', orderId: a.ticket! }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
  });

  test('when modify_pending_expiry sets a future expiry, then the order expires then; a past one is rejected with invalid expiration', () => {
    const { run, broker, advance } = setup();
    const a = run({ action: 'sell_limit', symbol: 'EURUSD', volume: 1, price: 1.09 }).result;
    const expiry = new Date(WEDNESDAY + 10_000).toISOString();
    expect(run({ action: 'modify_pending_expiry', orderId: a.ticket!, expiry }).result).toEqual({ status: 'done', ticket: a.ticket });
    expect(run({ action: 'modify_pending_expiry', orderId: a.ticket!, expiry: new Date(WEDNESDAY - 10_000).toISOString() }).result).toMatchObject({
      status: 'rejected',
      retcode: 10022,
    });
    expect(run({ action: 'modify_pending_expiry', orderId: a.ticket! }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
    advance(10_000);
    expect(broker.tick()).toEqual([expect.objectContaining({ op: 'expire', ticket: a.ticket })]);
  });

  test('when a pending order is modified or cancelled while its market is closed, then it is rejected with market closed', () => {
    const { run, broker } = setup('ctrader');
    const a = run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 }).result;
    broker.setMarketOpen('EURUSD', false);
    expect(run({ action: 'cancel_pending', orderId: a.ticket! }).result).toMatchObject({ retcode: 'MARKET_CLOSED' });
    expect(run({ action: 'modify_pending', orderId: a.ticket!, price: 1.079 }).result).toMatchObject({ retcode: 'MARKET_CLOSED' });
  });
});

describe('paper broker: position SL/TP and breakeven', () => {
  test('when modify_sl sets a valid SL, then the position has it and a modify op is written', () => {
    const { run, broker } = setup();
    const ticket = open(run);
    const { result, ops } = run({ commandId: 'm', action: 'modify_sl', positionId: ticket, sl: 1.08 });
    expect(result).toEqual({ status: 'done', ticket });
    expect(ops).toEqual([expect.objectContaining({ commandId: 'm', action: 'modify_sl', op: 'modify', ticket, sl: 1.08, tp: null })]);
    expect(broker.positions()[0]!.sl).toBe(1.08);
  });

  test('when modify_sl puts a buy SL above the bid, then MT5 rejects with 10016 and cTrader with TRADING_BAD_STOPS', () => {
    const mt5 = setup('mt5');
    expect(mt5.run({ action: 'modify_sl', positionId: open(mt5.run), sl: 1.0855 }).result).toMatchObject({ status: 'rejected', retcode: 10016 });
    const ct = setup('ctrader');
    expect(ct.run({ action: 'modify_sl', positionId: open(ct.run, { action: 'sell' }), sl: 1.085 }).result).toMatchObject({ retcode: 'TRADING_BAD_STOPS' });
  });

  test('when modify_tp sets a valid TP, then the position has it; a TP on the wrong side is rejected', () => {
    const { run, broker } = setup();
    const ticket = open(run, { action: 'sell', sl: 1.09 });
    expect(run({ action: 'modify_tp', positionId: ticket, tp: 1.08 }).result).toEqual({ status: 'done', ticket });
    expect(broker.positions()[0]).toMatchObject({ sl: 1.09, tp: 1.08 });
    expect(run({ action: 'modify_tp', positionId: ticket, tp: 1.0852 }).result).toMatchObject({ status: 'rejected', retcode: 10016 });
    expect(run({ action: 'modify_tp', positionId: ticket }).result).toMatchObject({ status: 'rejected', retcode: 10013 });
  });

  test('when modify_sl sets the SL it already has, then MT5 answers done with 10025 No changes', () => {
    const { run } = setup();
    const ticket = open(run, { sl: 1.08 });
    expect(run({ action: 'modify_sl', positionId: ticket, sl: 1.08 }).result).toEqual({ status: 'done', ticket, retcode: 10025, message: 'No changes' });
  });

  test('when modify_sl or modify_tp names an unknown position, then it is rejected as not found', () => {
    const { run } = setup();
    expect(run({ action: 'modify_sl', positionId: '7', sl: 1 }).result).toMatchObject({ retcode: 10036 });
    expect(setup('ctrader').run({ action: 'modify_tp', positionId: '7', tp: 1 }).result).toMatchObject({ retcode: 'POSITION_NOT_FOUND' });
  });

  test('when breakeven runs on a buy in profit, then its SL moves to the entry price', () => {
    const { run, broker, feed } = setup();
    const ticket = open(run, { sl: 1.08 });
    feed.set('EURUSD', 1.0861, 1.0862);
    expect(run({ action: 'breakeven', positionId: ticket }).result).toEqual({ status: 'done', ticket });
    expect(broker.positions()[0]).toMatchObject({ sl: 1.0851 });
    expect(run({ action: 'breakeven', positionId: ticket }).result).toMatchObject({ status: 'done', retcode: 10025 });
  });

  test('when breakeven runs on a sell in profit, then its SL moves to the entry price', () => {
    const { run, broker, feed } = setup();
    const ticket = open(run, { action: 'sell' });
    feed.set('EURUSD', 1.084, 1.0841);
    expect(run({ action: 'breakeven', positionId: ticket }).result.status).toBe('done');
    expect(broker.positions()[0]).toMatchObject({ sl: 1.085 });
  });

  test('when breakeven runs on a position not beyond its entry (the spread not yet earned), then it is rejected with invalid stops', () => {
    const mt5 = setup('mt5');
    const buy = open(mt5.run); // bought at the ask 1.0851, the bid is 1.0850
    expect(mt5.run({ action: 'breakeven', positionId: buy }).result).toMatchObject({ status: 'rejected', retcode: 10016 });
    const ct = setup('ctrader');
    const sell = open(ct.run, { action: 'sell' });
    ct.feed.set('EURUSD', 1.0851, 1.0852);
    expect(ct.run({ action: 'breakeven', positionId: sell }).result).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_STOPS' });
    expect(setup('ctrader').run({ action: 'breakeven', positionId: '5' }).result).toMatchObject({ retcode: 'POSITION_NOT_FOUND' });
  });

  test('when a position is modified while its market is closed, then it is rejected with market closed', () => {
    const { run, broker, feed } = setup();
    const ticket = open(run);
    feed.set('EURUSD', 1.0861, 1.0862);
    broker.setMarketOpen('EURUSD', false);
    expect(run({ action: 'breakeven', positionId: ticket }).result).toMatchObject({ retcode: 10018 });
    expect(run({ action: 'modify_sl', positionId: ticket, sl: 1.08 }).result).toMatchObject({ retcode: 10018 });
    expect(run({ action: 'partial_close', positionId: ticket, partialVolume: 0.5 }).result).toMatchObject({ retcode: 10018 });
  });
});

describe('paper broker: account and state', () => {
  test('when positions float, then equity, margin and free margin follow the quotes', () => {
    const { run, broker, feed } = setup();
    open(run);
    feed.set('EURUSD', 1.0841, 1.0842);
    const account = broker.account();
    expect(account).toMatchObject({ balance: 100_000, equity: 99_900, currency: 'USD', leverage: 100 });
    expect(account.margin).toBeCloseTo(1085.1, 2);
    expect(account.freeMargin).toBeCloseTo(99_900 - 1085.1, 2);
    expect(broker.profitOf('1000001')).toBe(-100);
  });

  test('when a broker is built from a snapshot, then it continues with the same positions, orders and ticket numbers', () => {
    const { run, broker, feed } = setup();
    open(run);
    run({ action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.08 });
    const restored = new PaperBroker({ platform: 'mt5', clock: () => WEDNESDAY, feed, state: broker.snapshot() });
    expect(restored.positions()).toEqual(broker.positions());
    expect(restored.orders()).toEqual(broker.orders());
    expect(restored.execute({ action: 'sell', symbol: 'EURUSD', volume: 1 }).result.ticket).toBe('1000003');
    expect(broker.positions()).toHaveLength(1);
  });

  test('when a command runs, then the market first catches up (a due SL closes before the new order)', () => {
    const { run, feed } = setup();
    open(run, { sl: 1.08 });
    feed.set('EURUSD', 1.0799, 1.08);
    const { ops } = run({ action: 'buy', symbol: 'EURUSD', volume: 1 });
    expect(ops.map((o) => `${o.op}:${o.cause}`)).toEqual(['close:sl', 'open:command']);
  });
});
