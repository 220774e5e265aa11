import { DEFAULT_SYMBOLS, RISK_MAX_OPEN_POSITIONS, SyntheticFeed, baselineQuote } from '../../src/paper/broker';
import { WEDNESDAY, SATURDAY, setup, open } from '../helpers/paper-broker';

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
