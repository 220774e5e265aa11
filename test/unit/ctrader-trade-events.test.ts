import {
  ExecutionType,
  OrderStatus,
  OrderType,
  PositionStatus,
  TradeSide,
  type Deal,
  type ExecutionEvent,
  type Order,
  type Position,
} from '../../src/ctrader/messages';
import { eventsOfExecution, type TradeContext } from '../../src/ctrader/trade-events';
import { bookSchema, tradeEventSchema } from '../../src/domain/trade-events';
import { bookOf, eventsOfHistory } from '../../src/ctrader/trade-history';

/**
 * ProtoOAExecutionEvent, ProtoOADealListRes and ProtoOAReconcileRes → protocol 1.5 trade events and book, one case per
 * cause (docs/ctrader-connector.md, "Trade events").
 */

const T0 = Date.parse('2026-11-26T10:00:00Z');

/** Every event and book the mapping makes is checked against the service's schemas (the contract), in every test. */
const valid = <T>(made: T[], schema: { parse: (v: unknown) => unknown }): T[] => {
  for (const m of made) expect(() => schema.parse(m)).not.toThrow();
  return made;
};

const mapExecution = (...a: Parameters<typeof eventsOfExecution>) => valid(eventsOfExecution(...a), tradeEventSchema);
const mapHistory = (...a: Parameters<typeof eventsOfHistory>) => valid(eventsOfHistory(...a), tradeEventSchema);
const mapBook = (...a: Parameters<typeof bookOf>) => valid([bookOf(...a)], bookSchema)[0]!;
const EURUSD = { name: 'EURUSD', lotSize: 10_000_000, digits: 5 };
const ctx = (over: Partial<TradeContext> = {}): TradeContext => ({
  symbolById: (id) => (id === 1 ? EURUSD : undefined),
  commandOfLabel: (label) => (label === 'es-abc' ? 'signal/s1/account/acc-1' : undefined),
  ...over,
});
const byCommand = ctx({ causedBy: { kind: 'command', commandId: 'signal/s2/account/acc-1' } });
const tradeData = { symbolId: 1, volume: 1_000_000, tradeSide: TradeSide.BUY, openTimestamp: T0, label: 'es-abc' };

const position = (over: Partial<Position> = {}): Position => ({
  positionId: 11,
  tradeData,
  positionStatus: PositionStatus.POSITION_STATUS_OPEN,
  swap: 0,
  price: 1.1,
  stopLoss: 1.09,
  takeProfit: 1.12,
  moneyDigits: 2,
  ...over,
});
const order = (over: Partial<Order> = {}): Order => ({
  orderId: 10,
  tradeData,
  orderType: OrderType.MARKET,
  orderStatus: OrderStatus.ORDER_STATUS_FILLED,
  ...over,
});
const openingDeal = (over: Partial<Deal> = {}): Deal => ({
  dealId: 12,
  orderId: 10,
  positionId: 11,
  volume: 1_000_000,
  filledVolume: 1_000_000,
  symbolId: 1,
  createTimestamp: T0,
  executionTimestamp: T0,
  executionPrice: 1.1,
  tradeSide: TradeSide.BUY,
  dealStatus: 2,
  ...over,
});
const closingDeal = (price: number, over: Partial<Deal> = {}): Deal => ({
  ...openingDeal({ dealId: 22, orderId: 20, executionPrice: price, tradeSide: TradeSide.SELL, executionTimestamp: T0 + 60_000 }),
  closePositionDetail: { entryPrice: 1.1, grossProfit: -10_000, swap: -150, commission: -700, balance: 9_000_000, closedVolume: 1_000_000, moneyDigits: 2 },
  ...over,
});
const exec = (executionType: number, parts: Partial<ExecutionEvent>): ExecutionEvent => ({ ctidTraderAccountId: 7, executionType, ...parts });
const closedPosition = position({ positionStatus: PositionStatus.POSITION_STATUS_CLOSED });
const closeBy = (o: Partial<Order>, price: number, c = ctx()) =>
  mapExecution(
    exec(ExecutionType.ORDER_FILLED, {
      order: order({ orderId: 20, closingOrder: true, positionId: 11, ...o }),
      position: closedPosition,
      deal: closingDeal(price),
    }),
    c,
  );

describe('cTrader execution events → trade events', () => {
  test('when a market order fills, then position_opened carries the fill, the SL/TP and the command behind its label', () => {
    const events = mapExecution(exec(ExecutionType.ORDER_FILLED, { order: order(), position: position(), deal: openingDeal() }), ctx());
    expect(events).toEqual([
      {
        eventId: 'deal:12',
        type: 'position_opened',
        at: '2026-11-26T10:00:00.000Z',
        ticket: '11',
        symbol: 'EURUSD',
        commandId: 'signal/s1/account/acc-1',
        side: 'buy',
        volume: 0.1,
        price: 1.1,
        sl: 1.09,
        tp: 1.12,
      },
    ]);
  });

  test('when a market order is accepted, then nothing is reported until it fills', () => {
    expect(mapExecution(exec(ExecutionType.ORDER_ACCEPTED, { order: order({ orderStatus: OrderStatus.ORDER_STATUS_ACCEPTED }) }), ctx())).toEqual([]);
  });

  test('when the broker closes at the stop loss, then position_closed says stop_loss with P&L, commission and swap in money', () => {
    const [e] = closeBy({ orderType: OrderType.STOP_LOSS_TAKE_PROFIT, stopLoss: 1.09, takeProfit: 1.12 }, 1.0899);
    expect(e).toEqual({
      eventId: 'deal:22',
      type: 'position_closed',
      at: '2026-11-26T10:01:00.000Z',
      ticket: '11',
      symbol: 'EURUSD',
      volume: 0.1,
      remainingVolume: 0,
      price: 1.0899,
      profit: -100,
      commission: -7,
      swap: -1.5,
      cause: 'stop_loss',
    });
  });

  test('when the broker closes at the take profit, then the cause is take_profit (levels from the position when the order has none)', () => {
    expect(closeBy({ orderType: OrderType.STOP_LOSS_TAKE_PROFIT }, 1.1201)[0]).toMatchObject({ cause: 'take_profit' });
  });

  test('when the SL/TP order closes a position that has only a stop loss, then it is the stop loss', () => {
    const c = mapExecution(
      exec(ExecutionType.ORDER_FILLED, {
        order: order({ orderId: 20, orderType: OrderType.STOP_LOSS_TAKE_PROFIT, closingOrder: true }),
        position: position({ positionStatus: PositionStatus.POSITION_STATUS_CLOSED, takeProfit: undefined, stopLoss: 1.105 }),
        deal: closingDeal(1.1049),
      }),
      ctx(),
    );
    expect(c[0]).toMatchObject({ cause: 'stop_loss' });
  });

  test('when the server stops the account out, then the cause is margin_call', () => {
    expect(closeBy({ isStopOut: true }, 1.08)[0]).toMatchObject({ cause: 'margin_call' });
  });

  test("when a close answers the connector's own command or stop-out, then the cause is command (with its id) or stop_out", () => {
    expect(closeBy({}, 1.1, byCommand)[0]).toMatchObject({ cause: 'command', commandId: 'signal/s2/account/acc-1' });
    expect(closeBy({}, 1.1, ctx({ causedBy: { kind: 'stop_out' } }))[0]).toMatchObject({ cause: 'stop_out' });
  });

  test("when a close answers the connector's trade management or an entry's reverse, then the cause is take_profit_level, or close_opposite with the entry's command", () => {
    expect(closeBy({}, 1.11, ctx({ causedBy: { kind: 'management', cause: 'take_profit_level' } }))[0]).toMatchObject({ cause: 'take_profit_level' });
    expect(closeBy({}, 1.11, ctx({ causedBy: { kind: 'management', cause: 'take_profit_level' } }))[0]).not.toHaveProperty('commandId');
    expect(closeBy({}, 1.1, ctx({ causedBy: { kind: 'close_opposite', commandId: 'signal/s3/account/acc-1' } }))[0]).toMatchObject({
      cause: 'close_opposite',
      commandId: 'signal/s3/account/acc-1',
    });
  });

  test('when trade management moves a stop, then position_modified says trailing_stop (with trailActiveAt) or breakeven_trigger, no command', () => {
    const p = position({ stopLoss: 1.105, utcLastUpdateTimestamp: T0 + 9_000 });
    const moved = (causedBy: TradeContext['causedBy']) => mapExecution(exec(ExecutionType.ORDER_REPLACED, { position: p }), ctx({ causedBy }))[0];
    expect(moved({ kind: 'management', cause: 'trailing_stop', trailActiveAt: 1.106 })).toMatchObject({
      cause: 'trailing_stop',
      trailActiveAt: 1.106,
      sl: 1.105,
    });
    const breakeven = moved({ kind: 'management', cause: 'breakeven_trigger' });
    expect(breakeven).toMatchObject({ cause: 'breakeven_trigger' });
    expect(breakeven).not.toHaveProperty('trailActiveAt');
    expect(breakeven).not.toHaveProperty('commandId');
  });

  test("when a market order closes a position and the connector sent none, then it was the trader's hand: manual", () => {
    expect(closeBy({}, 1.1)[0]).toMatchObject({ cause: 'manual' });
  });

  test('when part of a position is closed, then remainingVolume is what stays open', () => {
    const deal = closingDeal(1.1, { filledVolume: 400_000, closePositionDetail: { ...closingDeal(1.1).closePositionDetail!, closedVolume: 400_000 } });
    const [e] = mapExecution(
      exec(ExecutionType.ORDER_FILLED, {
        order: order({ orderId: 20, closingOrder: true }),
        position: position({ tradeData: { ...tradeData, volume: 600_000 } }),
        deal,
      }),
      byCommand,
    );
    expect(e).toMatchObject({ type: 'position_closed', volume: 0.04, remainingVolume: 0.06 });
  });

  const pending = order({
    orderId: 30,
    orderType: OrderType.STOP_LIMIT,
    orderStatus: OrderStatus.ORDER_STATUS_ACCEPTED,
    stopPrice: 1.1,
    slippageInPoints: 20,
    stopLoss: 1.09,
    expirationTimestamp: T0 + 3_600_000,
    positionId: 31,
  });

  test('when a pending order is accepted, then order_placed with its type, limit price, stop-limit trigger and expiry', () => {
    expect(mapExecution(exec(ExecutionType.ORDER_ACCEPTED, { order: pending }), ctx())).toEqual([
      {
        eventId: 'order:30:placed',
        type: 'order_placed',
        at: '2026-11-26T10:00:00.000Z',
        ticket: '30',
        symbol: 'EURUSD',
        commandId: 'signal/s1/account/acc-1',
        side: 'buy',
        orderType: 'stop_limit',
        volume: 0.1,
        price: 1.0998,
        stopLimitPrice: 1.1,
        sl: 1.09,
        expiresAt: '2026-11-26T11:00:00.000Z',
      },
    ]);
  });

  test('when a pending order fills, then order_triggered then position_opened from it', () => {
    const events = mapExecution(
      exec(ExecutionType.ORDER_FILLED, {
        order: { ...pending, orderStatus: OrderStatus.ORDER_STATUS_FILLED },
        position: position({ positionId: 31 }),
        deal: openingDeal({ dealId: 32, orderId: 30, positionId: 31, executionPrice: 1.1001 }),
      }),
      ctx(),
    );
    expect(events.map((e) => [e.type, e.eventId, e.ticket])).toEqual([
      ['order_triggered', 'order:30:triggered', '30'],
      ['position_opened', 'deal:32', '31'],
    ]);
    expect(events[0]).toMatchObject({ positionTicket: '31', price: 1.1001 });
    expect(events[1]).toMatchObject({ fromOrder: '30' });
  });

  test('when a pending order expires or is cancelled, then order_expired or order_cancelled with who cancelled it', () => {
    const gone = (type: number, c: TradeContext, isServerEvent?: boolean) =>
      mapExecution(exec(type, { order: { ...pending, utcLastUpdateTimestamp: T0 + 5_000 }, ...(isServerEvent ? { isServerEvent } : {}) }), c);
    expect(gone(ExecutionType.ORDER_EXPIRED, ctx())).toEqual([
      { eventId: 'order:30:expired', type: 'order_expired', at: '2026-11-26T10:00:05.000Z', ticket: '30', symbol: 'EURUSD' },
    ]);
    expect(gone(ExecutionType.ORDER_CANCELLED, byCommand)[0]).toMatchObject({
      eventId: 'order:30:cancelled',
      cause: 'command',
      commandId: 'signal/s2/account/acc-1',
    });
    expect(gone(ExecutionType.ORDER_CANCELLED, ctx({ causedBy: { kind: 'stop_out' } }))[0]).toMatchObject({ cause: 'stop_out' });
    expect(gone(ExecutionType.ORDER_CANCELLED, ctx(), true)[0]).toMatchObject({ cause: 'broker' });
    expect(gone(ExecutionType.ORDER_CANCELLED, ctx())[0]).toMatchObject({ cause: 'manual' });
  });

  test('when SL/TP of a position or a pending order change, then *_modified with the new levels (null = none) and a stable id per change', () => {
    const p = position({ stopLoss: 1.095, takeProfit: undefined, utcLastUpdateTimestamp: T0 + 9_000 });
    expect(mapExecution(exec(ExecutionType.ORDER_REPLACED, { position: p }), byCommand)).toEqual([
      {
        eventId: `position:11:modified:${T0 + 9_000}`,
        type: 'position_modified',
        at: '2026-11-26T10:00:09.000Z',
        ticket: '11',
        symbol: 'EURUSD',
        commandId: 'signal/s2/account/acc-1',
        sl: 1.095,
        tp: null,
        cause: 'command',
      },
    ]);
    const o = mapExecution(exec(ExecutionType.ORDER_REPLACED, { order: { ...pending, stopLoss: undefined } }), ctx());
    expect(o[0]).toMatchObject({ eventId: 'order:30:modified:1.1/none/none', type: 'order_modified', price: 1.0998, sl: null, tp: null, cause: 'broker' });
  });

  test('when a pending order changes, then order_modified says the order as it is: its trigger, its type and its expiry (null: good till cancelled)', () => {
    const changed = (over: Partial<Order>) => mapExecution(exec(ExecutionType.ORDER_REPLACED, { order: { ...pending, ...over } }), byCommand)[0]!;
    const expiry = T0 + 7_200_000;
    expect(changed({ expirationTimestamp: expiry, utcLastUpdateTimestamp: T0 + 9_000 })).toEqual({
      eventId: `order:30:modified:${T0 + 9_000}`,
      type: 'order_modified',
      at: '2026-11-26T10:00:09.000Z',
      ticket: '30',
      symbol: 'EURUSD',
      commandId: 'signal/s2/account/acc-1',
      price: 1.0998,
      stopLimitPrice: 1.1,
      orderType: 'stop_limit',
      sl: 1.09,
      tp: null,
      expiresAt: new Date(expiry).toISOString(),
      cause: 'command',
    });
    expect(changed({ expirationTimestamp: undefined })).toMatchObject({ expiresAt: null });
  });

  test('when the event is a swap, a deposit, a rejection or a deal that only adds to a position, then no trade event', () => {
    expect(mapExecution(exec(ExecutionType.SWAP, { position: position() }), ctx())).toEqual([]);
    expect(mapExecution(exec(ExecutionType.DEPOSIT_WITHDRAW, {}), ctx())).toEqual([]);
    expect(mapExecution(exec(ExecutionType.ORDER_REJECTED, { order: order() }), ctx())).toEqual([]);
    const added = exec(ExecutionType.ORDER_FILLED, {
      order: order(),
      position: position({ tradeData: { ...tradeData, volume: 2_000_000 } }),
      deal: openingDeal(),
    });
    expect(mapExecution(added, ctx())).toEqual([]);
  });
});

describe('cTrader deal and order history → the events missed while away', () => {
  test('when the history holds a fill, an SL close and an expired order, then the same eventIds as live, in time order', () => {
    const expired = { ...pending(), orderStatus: OrderStatus.ORDER_STATUS_EXPIRED, utcLastUpdateTimestamp: T0 + 120_000 };
    const slOrder = order({ orderId: 20, orderType: OrderType.STOP_LOSS_TAKE_PROFIT, closingOrder: true, stopLoss: 1.09, takeProfit: 1.12 });
    const events = mapHistory({ deals: [closingDeal(1.0899), openingDeal()], orders: [order(), slOrder, expired], positions: [], from: T0 - 1 }, ctx());
    expect(events.map((e) => [e.eventId, e.type, 'cause' in e ? e.cause : undefined])).toEqual([
      ['deal:12', 'position_opened', undefined],
      ['order:30:placed', 'order_placed', undefined],
      ['deal:22', 'position_closed', 'stop_loss'],
      ['order:30:expired', 'order_expired', undefined],
    ]);
  });

  test('when a market close is read back, then its author is unknown (other) and what remained counts the later closes', () => {
    const first = closingDeal(1.1, {
      dealId: 40,
      filledVolume: 400_000,
      closePositionDetail: { ...closingDeal(1.1).closePositionDetail!, closedVolume: 400_000 },
    });
    const second = closingDeal(1.1, {
      dealId: 41,
      executionTimestamp: T0 + 90_000,
      filledVolume: 300_000,
      closePositionDetail: { ...closingDeal(1.1).closePositionDetail!, closedVolume: 300_000 },
    });
    const open = position({ tradeData: { ...tradeData, volume: 300_000 } });
    const events = mapHistory({ deals: [second, first], orders: [order({ orderId: 20, closingOrder: true })], positions: [open], from: T0 }, ctx());
    expect(events.map((e) => [e.eventId, 'remainingVolume' in e ? e.remainingVolume : null, 'cause' in e ? e.cause : null])).toEqual([
      ['deal:40', 0.06, 'other'],
      ['deal:41', 0.03, 'other'],
    ]);
  });

  function pending(): Order {
    return order({
      orderId: 30,
      orderType: OrderType.LIMIT,
      orderStatus: OrderStatus.ORDER_STATUS_ACCEPTED,
      limitPrice: 1.08,
      tradeData: { ...tradeData, openTimestamp: T0 + 30_000 },
    });
  }
});

describe('cTrader reconcile → the book', () => {
  test('when positions and orders are open, then the book lists them oldest first with unrealized P&L, and truncates past 1,000', () => {
    const p2 = position({ positionId: 99, tradeData: { ...tradeData, openTimestamp: T0 - 1 }, swap: -250, commission: -300 });
    const limit = order({ orderId: 30, orderType: OrderType.LIMIT, orderStatus: OrderStatus.ORDER_STATUS_ACCEPTED, limitPrice: 1.08 });
    const book = mapBook(
      [position(), p2],
      [limit, order({ orderId: 20, orderType: OrderType.STOP_LOSS_TAKE_PROFIT })],
      new Map([[11, -1.5]]),
      ctx(),
      T0 + 1000,
    );
    expect(book.positions.map((p) => [p.ticket, p.profit, p.swap, p.commission])).toEqual([
      ['99', 0, -2.5, -3],
      ['11', -1.5, 0, 0],
    ]);
    expect(book.orders).toEqual([
      {
        ticket: '30',
        symbol: 'EURUSD',
        side: 'buy',
        orderType: 'limit',
        volume: 0.1,
        price: 1.08,
        stopLimitPrice: null,
        sl: null,
        tp: null,
        placedAt: '2026-11-26T10:00:00.000Z',
        expiresAt: null,
      },
    ]);
    expect(book.truncated).toBe(false);
    const many = Array.from({ length: 1001 }, (_, i) => position({ positionId: 1000 + i }));
    const big = mapBook(many, [], new Map(), ctx(), T0);
    expect([big.positions.length, big.truncated]).toEqual([1000, true]);
  });
});
