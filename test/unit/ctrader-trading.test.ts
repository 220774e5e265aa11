import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import { NotSentInTime, refusalOf, type Completion } from '../../src/ctrader/connection';
import { PayloadType, type Envelope, type Order, type Position } from '../../src/ctrader/messages';
import { executeCommand, labelOf, type TradingAccount } from '../../src/ctrader/trading';
import { symbolSpec, type SymbolSpec } from '../../src/ctrader/units';
import type { Action } from '../../src/domain/actions';
import { CtraderDouble } from '../helpers/ctrader-double';
import { checkPayload } from '../helpers/ctrader-proto';

/**
 * The 17 actions → Open API requests, against the double's broker side in-process (no socket): every request the
 * mapping builds is checked against the published message definitions, and every answer is the double's.
 */

const CTID = 4242;

function harness() {
  const double = CtraderDouble.create({ clientId: 'c', clientSecret: 's', accounts: [{ ctid: CTID, accessToken: 'a', refreshToken: 'r' }] });
  const sent: Envelope[] = [];
  const specs = new Map<number, SymbolSpec>();
  for (const s of double.symbols.values()) specs.set(s.symbolId, symbolSpec(s.symbolName, s)!);
  const account: TradingAccount = {
    async call(payloadType: number, payload: Record<string, unknown>, opts: { done?: Completion } = {}) {
      const env = { payloadType, payload: { ctidTraderAccountId: CTID, ...payload } };
      const invalid = checkPayload(payloadType, env.payload);
      if (invalid) throw new Error(`the mapping built an invalid ${payloadType}: ${invalid}`);
      sent.push(env);
      for (const answer of double.answer(double.account(CTID), env)) {
        const refusal = refusalOf(answer);
        if (refusal) throw refusal;
        if (!opts.done || opts.done(answer)) return answer;
      }
      throw new Error(`no completing answer to ${payloadType}`);
    },
    async reconcile() {
      const a = double.account(CTID);
      return {
        positions: JSON.parse(JSON.stringify([...a.positions.values()])) as Position[],
        orders: JSON.parse(JSON.stringify([...a.orders.values()])) as Order[],
      };
    },
    symbol: (name) => [...specs.values()].find((s) => s.name === name.toUpperCase()),
    symbolById: (id) => specs.get(id),
    async unrealizedPnl() {
      return new Map(
        double
          .account(CTID)
          .unrealized()
          .map((u) => [u.positionId, u.netUnrealizedPnL / 100]),
      );
    },
    async quote(symbolId) {
      const s = double.symbols.get(symbolId)!;
      return { bid: s.bid, ask: s.ask };
    },
  };
  let seq = 0;
  const exec = (action: Action, fields: Partial<BridgeCommand> = {}) => {
    const commandId = `signal/sig_${++seq}/account/acc-1`;
    const cmd: BridgeCommand = {
      commandId,
      seq,
      signalId: `sig_${seq}`,
      accountId: 'acc-1',
      action,
      acceptedAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      ...fields,
    };
    return executeCommand(account, cmd, labelOf(commandId), Date.now() + 60_000);
  };
  const last = () => sent[sent.length - 1]!;
  return { double, exec, sent, last, a: () => double.account(CTID) };
}

describe('the 17 actions as Open API requests', () => {
  test('when a market buy with pip stops runs, then one MARKET ProtoOANewOrderReq carries the volume in cents and relative stops, and the fill reports the positionId', async () => {
    const h = harness();
    const out = await h.exec('buy', { symbol: 'EURUSD', volume: 0.1, slPips: 20, tpPips: 40 });
    const req = h.sent.find((e) => e.payloadType === PayloadType.PROTO_OA_NEW_ORDER_REQ)!.payload!;
    expect(req).toMatchObject({
      ctidTraderAccountId: CTID,
      symbolId: 1,
      orderType: 1,
      tradeSide: 1,
      volume: 1_000_000,
      relativeStopLoss: 200,
      relativeTakeProfit: 400,
    });
    expect(req.label).toBe(labelOf('signal/sig_1/account/acc-1'));
    const pos = [...h.a().positions.values()][0]!;
    expect(out).toEqual({ status: 'filled', ticket: String(pos.positionId), price: 1.0851, volume: 0.1 });
    expect(pos).toMatchObject({ stopLoss: 1.0831, takeProfit: 1.0891 });
  });

  test("when a market sell carries absolute stops, then they travel as distances from the bid, and a level on the wrong side is the broker's TRADING_BAD_STOPS with nothing opened", async () => {
    const h = harness();
    const ok = await h.exec('sell', { symbol: 'EURUSD', volume: 0.2, sl: 1.087, tp: 1.083 });
    expect(ok.status).toBe('filled');
    expect(h.last().payload).toMatchObject({ orderType: 1, tradeSide: 2, volume: 2_000_000, relativeStopLoss: 200, relativeTakeProfit: 200 });
    expect(h.last().payload).not.toHaveProperty('stopLoss');
    const bad = await h.exec('sell', { symbol: 'EURUSD', volume: 0.1, tp: 1.0856 });
    expect(bad).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_STOPS' });
    expect(h.a().positions.size).toBe(1);
  });

  test('when limit, stop and stop-limit entries run, then the order types, prices, slippage in points and GTD expiry are set and the orderId is the ticket', async () => {
    const h = harness();
    const expiry = new Date(Date.now() + 3_600_000).toISOString();
    const limit = await h.exec('buy_limit', { symbol: 'EURUSD', volume: 0.1, price: 1.08, slPips: 30, expiry });
    // Pip stops of a pending entry count from its price: sent as the absolute level.
    expect(h.last().payload).toMatchObject({ orderType: 2, limitPrice: 1.08, stopLoss: 1.077, timeInForce: 1, expirationTimestamp: Date.parse(expiry) });
    expect(h.last().payload).not.toHaveProperty('relativeStopLoss');
    const stop = await h.exec('sell_stop', { symbol: 'USDJPY', volume: 0.3, price: 149.5, tp: 149.0 });
    expect(h.last().payload).toMatchObject({ orderType: 3, stopPrice: 149.5, takeProfit: 149, timeInForce: 2, volume: 3_000_000 });
    const sl = await h.exec('buy_stop_limit', { symbol: 'EURUSD', volume: 0.1, price: 1.0856, stopLimitPrice: 1.0861, slPips: 25 });
    expect(h.last().payload).toMatchObject({ orderType: 6, stopPrice: 1.0861, slippageInPoints: 50, stopLoss: 1.0831 });
    const ids = [...h.a().orders.keys()].map(String);
    expect([limit.ticket, stop.ticket, sl.ticket]).toEqual(ids);
    expect(limit).toMatchObject({ status: 'filled', price: 1.08, volume: 0.1 });
  });

  test('when modify_sl, modify_tp and breakeven run, then ProtoOAAmendPositionSLTPReq carries both levels (the unchanged one kept); the same level again sends nothing', async () => {
    const h = harness();
    const buy = await h.exec('buy', { symbol: 'EURUSD', volume: 0.1, tpPips: 50 });
    const id = Number(buy.ticket);
    expect(await h.exec('modify_sl', { positionId: buy.ticket!, sl: 1.08 })).toEqual({ status: 'done', ticket: buy.ticket });
    expect(h.last()).toMatchObject({
      payloadType: PayloadType.PROTO_OA_AMEND_POSITION_SLTP_REQ,
      payload: { positionId: id, stopLoss: 1.08, takeProfit: 1.0901 },
    });
    const before = h.sent.length;
    expect(await h.exec('modify_sl', { positionId: buy.ticket!, sl: 1.08 })).toEqual({ status: 'done', ticket: buy.ticket, message: 'No changes' });
    expect(h.sent.slice(before).map((e) => e.payloadType)).not.toContain(PayloadType.PROTO_OA_AMEND_POSITION_SLTP_REQ);
    expect(await h.exec('breakeven', { positionId: buy.ticket! })).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_STOPS' });
    h.double.setQuote('EURUSD', 1.087, 1.0871);
    expect(await h.exec('breakeven', { positionId: buy.ticket! })).toEqual({ status: 'done', ticket: buy.ticket });
    expect(h.a().positions.get(id)).toMatchObject({ stopLoss: 1.0851, takeProfit: 1.0901 });
  });

  test('when partial_close and close run, then ProtoOAClosePositionReq carries the part, then the whole rest; an unknown position is POSITION_NOT_FOUND', async () => {
    const h = harness();
    const buy = await h.exec('buy', { symbol: 'EURUSD', volume: 0.1 });
    expect(await h.exec('partial_close', { positionId: buy.ticket!, partialVolume: 0.04 })).toMatchObject({ status: 'done', ticket: buy.ticket, volume: 0.04 });
    expect(h.last().payload).toMatchObject({ positionId: Number(buy.ticket), volume: 400_000 });
    expect(await h.exec('partial_close', { positionId: buy.ticket!, partialVolume: 0.015 })).toMatchObject({
      status: 'rejected',
      retcode: 'TRADING_BAD_VOLUME',
    });
    expect(await h.exec('close', { positionId: buy.ticket! })).toMatchObject({ status: 'done', ticket: buy.ticket, volume: 0.06 });
    expect(h.a().positions.size).toBe(0);
    expect(await h.exec('close', { positionId: '123' })).toMatchObject({ status: 'rejected', retcode: 'POSITION_NOT_FOUND' });
  });

  test('when filtered closes run, then only positions matching symbol, side and P&L are closed', async () => {
    const h = harness();
    const b = await h.exec('buy', { symbol: 'EURUSD', volume: 0.1 });
    const s = await h.exec('sell', { symbol: 'EURUSD', volume: 0.1 });
    const j = await h.exec('sell', { symbol: 'USDJPY', volume: 0.1 });
    expect(await h.exec('close', { symbol: 'USDJPY', side: 'sell' })).toMatchObject({ status: 'done', ticket: j.ticket });
    h.double.setQuote('EURUSD', 1.087, 1.0871);
    expect(await h.exec('close', { symbol: 'EURUSD', pnl: 'loss' })).toMatchObject({ status: 'done', ticket: s.ticket });
    expect([...h.a().positions.keys()].map(String)).toEqual([b.ticket]);
    expect(await h.exec('close', { symbol: 'EURUSD', pnl: 'loss' })).toEqual({ status: 'done', ticket: null, message: 'nothing to close' });
  });

  test('when close_all runs, then every position is closed and every pending order cancelled', async () => {
    const h = harness();
    await h.exec('buy', { symbol: 'EURUSD', volume: 0.1 });
    await h.exec('sell', { symbol: 'USDJPY', volume: 0.1 });
    await h.exec('buy_limit', { symbol: 'EURUSD', volume: 0.1, price: 1.08 });
    const out = await h.exec('close_all');
    expect(out).toMatchObject({ status: 'done', ticket: null });
    expect(out.message).toMatch(/^closed 2 position\(s\) .*; cancelled 1 order\(s\) /);
    expect(h.a().positions.size + h.a().orders.size).toBe(0);
  });

  test('when modify_pending and modify_pending_expiry run, then ProtoOAAmendOrderReq carries every level of the order with the named ones new', async () => {
    const h = harness();
    const o = await h.exec('buy_limit', { symbol: 'EURUSD', volume: 0.1, price: 1.08, sl: 1.078, tp: 1.083 });
    expect(await h.exec('modify_pending', { orderId: o.ticket!, price: 1.0795 })).toEqual({ status: 'done', ticket: o.ticket });
    expect(h.last().payload).toEqual({ ctidTraderAccountId: CTID, orderId: Number(o.ticket), limitPrice: 1.0795, stopLoss: 1.078, takeProfit: 1.083 });
    const expiry = new Date(Date.now() + 7_200_000).toISOString();
    expect(await h.exec('modify_pending_expiry', { orderId: o.ticket!, expiry })).toEqual({ status: 'done', ticket: o.ticket });
    expect(h.a().orders.get(Number(o.ticket))).toMatchObject({
      limitPrice: 1.0795,
      stopLoss: 1.078,
      takeProfit: 1.083,
      expirationTimestamp: Date.parse(expiry),
    });
    expect(await h.exec('cancel_pending', { orderId: o.ticket! })).toEqual({ status: 'done', ticket: o.ticket });
    expect(await h.exec('cancel_pending', { orderId: o.ticket! })).toMatchObject({ status: 'rejected', retcode: 'ORDER_NOT_FOUND' });
  });

  test('when the broker refuses, then the report carries its ErrorCode name and description (mapped by the service to broker:<code> <description>)', async () => {
    const h = harness();
    h.double.setMarketOpen('EURUSD', false);
    expect(await h.exec('buy', { symbol: 'EURUSD', volume: 0.1 })).toEqual({
      status: 'rejected',
      retcode: 'MARKET_CLOSED',
      message: 'Market is closed for EURUSD',
    });
    expect(await h.exec('buy', { symbol: 'NOPE', volume: 0.1 })).toMatchObject({ status: 'rejected', retcode: 'SYMBOL_NOT_FOUND' });
    expect(await h.exec('buy', { symbol: 'XAUUSD', volume: 60 })).toMatchObject({ status: 'rejected', retcode: 'TRADING_BAD_VOLUME' });
    expect(await h.exec('buy', { symbol: 'XAUUSD', volume: 50 })).toMatchObject({ status: 'rejected', retcode: 'NOT_ENOUGH_MONEY' });
    expect(h.a().entries).toEqual([]);
  });

  test('when the owner limits open positions, then an entry beyond the limit is refused before any order is sent', async () => {
    const h = harness();
    await h.exec('buy', { symbol: 'EURUSD', volume: 0.1, maxOpenPositions: 1 });
    const before = h.sent.length;
    expect(await h.exec('buy', { symbol: 'EURUSD', volume: 0.1, maxOpenPositions: 1 })).toMatchObject({
      status: 'rejected',
      retcode: 'risk_max_open_positions',
    });
    expect(h.sent.length).toBe(before);
  });

  test('when a market order ends cancelled after a partial fill, then it is reported filled with the part that filled; with no fill at all, rejected', async () => {
    const spec = symbolSpec('EURUSD', {
      symbolId: 1,
      digits: 5,
      pipPosition: 4,
      lotSize: 10_000_000,
      minVolume: 100_000,
      stepVolume: 100_000,
      maxVolume: 1_000_000_000,
    })!;
    const answerWith = (executedVolume: number): TradingAccount => ({
      call: async () => ({
        payloadType: PayloadType.PROTO_OA_EXECUTION_EVENT,
        payload: {
          ctidTraderAccountId: CTID,
          executionType: 5,
          order: { orderId: 9, orderType: 1, orderStatus: 5, executedVolume, tradeData: { symbolId: 1, volume: 1_000_000, tradeSide: 1 } },
          ...(executedVolume > 0
            ? { position: { positionId: 77, positionStatus: 1, swap: 0, price: 1.0851, tradeData: { symbolId: 1, volume: executedVolume, tradeSide: 1 } } }
            : {}),
        },
      }),
      reconcile: async () => ({ positions: [], orders: [] }),
      symbol: () => spec,
      symbolById: () => spec,
      unrealizedPnl: async () => new Map(),
      quote: async () => ({ bid: 1.085, ask: 1.0851 }),
    });
    const cmd: BridgeCommand = {
      commandId: 'c',
      seq: 1,
      signalId: 's',
      accountId: 'acc-1',
      action: 'buy',
      symbol: 'EURUSD',
      volume: 0.1,
      acceptedAt: '',
      expiresAt: '',
    };
    expect(await executeCommand(answerWith(400_000), cmd, 'l', Date.now() + 1000)).toEqual({
      status: 'filled',
      ticket: '77',
      price: 1.0851,
      volume: 0.04,
      message: 'partially filled; the rest was cancelled by the broker',
    });
    expect(await executeCommand(answerWith(0), cmd, 'l', Date.now() + 1000)).toMatchObject({ status: 'rejected', retcode: 'ORDER_CANCELLED' });
  });

  test("when the connection cannot send before the command's expiresAt, then the command is reported expired, not rejected", async () => {
    const late: TradingAccount = {
      call: async () => Promise.reject(new NotSentInTime('past the deadline before it could be sent')),
      reconcile: async () => ({ positions: [], orders: [] }),
      symbol: () => undefined,
      symbolById: () => undefined,
      unrealizedPnl: async () => new Map(),
      quote: async () => ({ bid: 1, ask: 1 }),
    };
    const cmd: BridgeCommand = {
      commandId: 'c',
      seq: 1,
      signalId: 's',
      accountId: 'acc-1',
      action: 'cancel_pending',
      orderId: '5',
      acceptedAt: '',
      expiresAt: '2026-01-01T00:00:00.000Z',
    };
    expect(await executeCommand(late, cmd, 'l', 0)).toEqual({ status: 'expired', message: 'not executed: expired at 2026-01-01T00:00:00.000Z' });
  });
});
