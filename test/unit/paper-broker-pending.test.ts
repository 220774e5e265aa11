import { WEDNESDAY, setup, open } from '../helpers/paper-broker';

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
