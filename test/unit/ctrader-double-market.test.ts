import { ExecutionType, OrderType, PayloadType, TradeSide, type ExecutionEvent } from '../../src/ctrader/messages';
import { eventsOfExecution } from '../../src/ctrader/trade-events';
import { eventsOfHistory } from '../../src/ctrader/trade-history';
import { CtraderDouble } from '../helpers/ctrader-double';
import { closeByHand, marketMoved, stopOutByBroker } from '../helpers/ctrader-pending';
import { checkPayload } from '../helpers/ctrader-proto';

/**
 * The Open API double's market (test/helpers/ctrader-pending.ts): a quote move closes positions at their SL/TP and
 * fills or expires pending orders as the server would, and every execution and history answer it gives is a valid
 * instance of the published messages; the connector's mapping reads the cause back from those fields alone.
 */

const CTID = 77;
const T0 = Date.now();
const double = () => CtraderDouble.create({ clientId: 'c', clientSecret: 's', accounts: [{ ctid: CTID, accessToken: 'a', refreshToken: 'r' }] });
const ctx = { symbolById: (id: number) => (id === 1 ? { name: 'EURUSD', lotSize: 10_000_000, digits: 5 } : undefined), commandOfLabel: () => undefined };

function published(executions: { executionType: number }[]): ExecutionEvent[] {
  return executions.map((e) => {
    const payload = JSON.parse(JSON.stringify({ ctidTraderAccountId: CTID, ...e })) as Record<string, unknown>;
    expect(checkPayload(PayloadType.PROTO_OA_EXECUTION_EVENT, payload)).toBeUndefined();
    return payload as unknown as ExecutionEvent;
  });
}

function buyWithStops(d: CtraderDouble) {
  const account = d.account(CTID);
  // Relative levels in 1/100000 of a price: SL 20 pips below, TP 30 above the fill at the ask 1.0851.
  account.newOrder(
    { symbolId: 1, tradeSide: TradeSide.BUY, volume: 1_000_000, orderType: OrderType.MARKET, relativeStopLoss: 200, relativeTakeProfit: 300 },
    T0,
  );
  return [...account.positions.values()][0]!;
}

const quote = (bid: number) => ({ symbolId: 1, bid, ask: Number((bid + 0.0001).toFixed(5)) });

describe('the cTrader Open API double moves the market as the server would', () => {
  test("when the bid reaches a buy position's take profit, then the broker closes it with its SL/TP order and the connector reads take_profit", () => {
    const d = double();
    const p = buyWithStops(d);
    expect(marketMoved(d.account(CTID), quote(1.088), T0 + 1)).toEqual([]);
    const executions = published(marketMoved(d.account(CTID), quote(1.0881), T0 + 2));
    expect(executions.map((e) => [e.executionType, e.order?.orderType, e.order?.closingOrder, e.isServerEvent])).toEqual([
      [ExecutionType.ORDER_ACCEPTED, OrderType.STOP_LOSS_TAKE_PROFIT, true, true],
      [ExecutionType.ORDER_FILLED, OrderType.STOP_LOSS_TAKE_PROFIT, true, true],
    ]);
    const events = executions.flatMap((e) => eventsOfExecution(e, ctx));
    expect(events).toEqual([
      expect.objectContaining({ type: 'position_closed', ticket: String(p.positionId), cause: 'take_profit', price: 1.0881, profit: 30, remainingVolume: 0 }),
    ]);
    expect(d.account(CTID).positions.size).toBe(0);
  });

  test('when the bid falls to the stop loss, then stop_loss with the loss', () => {
    const d = double();
    buyWithStops(d);
    const events = published(marketMoved(d.account(CTID), quote(1.083), T0 + 1)).flatMap((e) => eventsOfExecution(e, ctx));
    expect(events).toEqual([expect.objectContaining({ type: 'position_closed', cause: 'stop_loss', price: 1.083, profit: -21 })]);
  });

  test('when the trader closes by hand or the broker stops the account out, then manual and margin_call', () => {
    const d = double();
    const p = buyWithStops(d);
    const half = published(closeByHand(d.account(CTID), p.positionId, 500_000, T0 + 1)).flatMap((e) => eventsOfExecution(e, ctx));
    expect(half).toEqual([expect.objectContaining({ cause: 'manual', volume: 0.05, remainingVolume: 0.05 })]);
    const rest = published(stopOutByBroker(d.account(CTID), p.positionId, T0 + 2)).flatMap((e) => eventsOfExecution(e, ctx));
    expect(rest).toEqual([expect.objectContaining({ cause: 'margin_call', remainingVolume: 0 })]);
  });

  test('when the ask reaches a buy limit, then it fills (order_triggered, position_opened); a GTD order past its time expires', () => {
    const d = double();
    const account = d.account(CTID);
    account.newOrder({ symbolId: 1, tradeSide: TradeSide.BUY, volume: 1_000_000, orderType: OrderType.LIMIT, limitPrice: 1.08 }, T0);
    account.newOrder(
      {
        symbolId: 1,
        tradeSide: TradeSide.SELL,
        volume: 1_000_000,
        orderType: OrderType.LIMIT,
        limitPrice: 1.09,
        timeInForce: 1,
        expirationTimestamp: T0 + 1_000,
      },
      T0,
    );
    const events = published(marketMoved(account, quote(1.0799), T0 + 2_000)).flatMap((e) => eventsOfExecution(e, ctx));
    expect(events.map((e) => e.type)).toEqual(['order_expired', 'order_triggered', 'position_opened']);
  });

  test('when ProtoOADealListReq asks for a window, then ProtoOADealListRes holds its deals per the definitions, and read back they give the live eventIds', () => {
    const d = double();
    const p = buyWithStops(d);
    const live = published(marketMoved(d.account(CTID), quote(1.083), T0 + 5)).flatMap((e) => eventsOfExecution(e, ctx));
    const [res] = d.answer(d.account(CTID), {
      payloadType: PayloadType.PROTO_OA_DEAL_LIST_REQ,
      payload: { ctidTraderAccountId: CTID, fromTimestamp: T0 - 1, toTimestamp: T0 + 10 },
    });
    expect(res!.payloadType).toBe(PayloadType.PROTO_OA_DEAL_LIST_RES);
    const payload = JSON.parse(JSON.stringify(res!.payload)) as { deal: never[]; hasMore: boolean };
    expect(checkPayload(PayloadType.PROTO_OA_DEAL_LIST_RES, payload)).toBeUndefined();
    expect([payload.deal.length, payload.hasMore]).toEqual([2, false]);
    const [orders] = d.answer(d.account(CTID), {
      payloadType: PayloadType.PROTO_OA_ORDER_LIST_REQ,
      payload: { ctidTraderAccountId: CTID, fromTimestamp: T0 - 1, toTimestamp: T0 + 10 },
    });
    const back = eventsOfHistory({ deals: payload.deal, orders: (orders!.payload as { order: never[] }).order, positions: [], from: T0 - 1 }, ctx);
    expect(back.map((e) => [e.eventId, e.type])).toEqual([
      [expect.stringMatching(/^deal:/), 'position_opened'],
      [live[0]!.eventId, 'position_closed'],
    ]);
    expect(back[1]).toMatchObject({ cause: 'stop_loss', ticket: String(p.positionId) });
  });
});
