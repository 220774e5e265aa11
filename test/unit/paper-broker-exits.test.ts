import { DEFAULT_SYMBOLS, PaperBroker } from '../../src/paper/broker';
import { WEDNESDAY, SATURDAY, setup, open } from '../helpers/paper-broker';

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
