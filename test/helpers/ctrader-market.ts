import {
  ErrorCode,
  ExecutionType,
  OrderStatus,
  OrderType,
  PositionStatus,
  TimeInForce,
  TradeSide,
  type Order,
  type Position,
} from '../../src/ctrader/messages';
import { assetsOf, toDepositCurrency } from './ctrader-assets';
import type { DoubleSymbol } from './ctrader-symbols';

/**
 * The trading side of the cTrader Open API double: one trader account's positions and pending orders, and the checks
 * behind each trading request, answering with the execution types and error code names of Spotware's published
 * definitions (OpenApiModelMessages.proto: ProtoOAExecutionType, ProtoOAErrorCode; OpenApiMessages.proto for the
 * request fields). Prices are doubles, volumes are in cents of units, as the definitions say.
 */

export class Refusal extends Error {
  constructor(
    readonly errorCode: string,
    readonly description: string,
    readonly ids: { orderId?: number; positionId?: number } = {},
  ) {
    super(`${errorCode} ${description}`);
  }
}

/** What a request did: the execution events to send, in order. */
export type Executions = { executionType: number; order?: Order; position?: Position; deal?: Record<string, unknown>; isServerEvent?: boolean }[];

const r = (v: number, d: number) => Number(v.toFixed(d));

export class DoubleAccount {
  positions = new Map<number, Position>();
  /** Every order of any status, by orderId (what ProtoOAOrderListReq answers from). */
  history = new Map<number, Order>();
  /** Every entry ever accepted, oldest first: a market order's position or a pending order. */
  entries: { kind: 'position' | 'order'; id: number; symbolId: number; tradeSide: number; volume: number }[] = [];
  orders = new Map<number, Order>();
  /** The deals (ProtoOADeal) that filled each order, by orderId (what ProtoOAOrderDetailsReq answers with). */
  readonly deals = new Map<number, Record<string, unknown>[]>();
  /** in cents of the deposit currency (moneyDigits 2) */
  balance: number;
  private nextId: number;

  constructor(
    readonly ctid: number,
    private readonly symbols: Map<number, DoubleSymbol>,
    balance = 100_000,
    firstId = 5_000_001,
    /** The account's currency (ProtoOATrader.depositAssetId): balances and P&L are in it. */
    readonly depositAsset = 'USD',
  ) {
    this.balance = Math.round(balance * 100);
    this.nextId = firstId;
  }

  /** The next id of an order, position or deal (one sequence, as the double numbers them). */
  takeId(): number {
    return this.nextId++;
  }

  quoteOf(symbolId: number): { bid: number; ask: number } {
    return this.symbol(symbolId);
  }

  private symbol(id: unknown): DoubleSymbol {
    const s = typeof id === 'number' ? this.symbols.get(id) : undefined;
    if (!s) throw new Refusal(ErrorCode.SYMBOL_NOT_FOUND, `Symbol ${String(id)} not found`);
    return s;
  }

  private requireOpen(s: DoubleSymbol): void {
    if (s.open === false) throw new Refusal(ErrorCode.MARKET_CLOSED, `Market is closed for ${s.symbolName}`);
  }

  private checkVolume(s: DoubleSymbol, volume: unknown): number {
    if (typeof volume !== 'number' || !Number.isInteger(volume)) throw new Refusal(ErrorCode.INVALID_REQUEST, 'volume is required');
    if (volume < s.minVolume || volume > s.maxVolume || volume % s.stepVolume !== 0) {
      throw new Refusal(ErrorCode.TRADING_BAD_VOLUME, `Invalid volume ${volume}: min ${s.minVolume}, step ${s.stepVolume}, max ${s.maxVolume}`);
    }
    return volume;
  }

  /** SL below / TP above the reference for a buy, mirrored for a sell. */
  private checkStops(side: number, reference: number, sl: number | undefined, tp: number | undefined, what: string): void {
    const buy = side === TradeSide.BUY;
    if (sl !== undefined && (buy ? sl >= reference : sl <= reference))
      throw new Refusal(ErrorCode.TRADING_BAD_STOPS, `Invalid stop loss ${sl} against the ${what} ${reference}`);
    if (tp !== undefined && (buy ? tp <= reference : tp >= reference))
      throw new Refusal(ErrorCode.TRADING_BAD_STOPS, `Invalid take profit ${tp} against the ${what} ${reference}`);
  }

  private checkEntry(s: DoubleSymbol, side: number, orderType: number, price: number): void {
    const buy = side === TradeSide.BUY;
    const ok = orderType === OrderType.LIMIT ? (buy ? price < s.ask : price > s.bid) : buy ? price > s.ask : price < s.bid;
    if (!ok)
      throw new Refusal(
        ErrorCode.TRADING_BAD_PRICES,
        `Invalid ${orderType === OrderType.LIMIT ? 'limit' : 'stop'} price ${price} (bid ${s.bid}, ask ${s.ask})`,
      );
  }

  /** Margin in USD at 1:100: units × the base's USD price / 100 (a USD-based pair's base is 1 USD). */
  private marginOf(s: DoubleSymbol, volume: number, price: number): number {
    return ((volume / 100) * (s.symbolName.startsWith('USD') ? 1 : price)) / 100;
  }

  /** An amount in an asset → the deposit currency (the double's stand-in for the broker's conversion). */
  toDeposit(amount: number, asset: string): number {
    return toDepositCurrency(this.symbols.values(), this.depositAsset, amount, asset);
  }

  /** The profit of `volume` (cents of units) of a position closed at `price`, in cents of the deposit currency. */
  private profitCents(p: Position, price: number, volume: number): number {
    const s = this.symbols.get(p.tradeData.symbolId)!;
    const buy = p.tradeData.tradeSide === TradeSide.BUY;
    return Math.round(this.toDeposit(((buy ? price - p.price! : p.price! - price) * volume) / 100, assetsOf(s).quote) * 100);
  }

  private checkMargin(s: DoubleSymbol, volume: number, price: number): void {
    // A simple stand-in for the broker's margin rules, in the USD deposit currency.
    const needed = this.marginOf(s, volume, price);
    const used = [...this.positions.values()].reduce(
      (sum, p) => sum + this.marginOf(this.symbols.get(p.tradeData.symbolId)!, p.tradeData.volume, p.price ?? 0),
      0,
    );
    if (needed + used > this.balance / 100) throw new Refusal(ErrorCode.NOT_ENOUGH_MONEY, `Not enough money: margin ${needed.toFixed(2)} needed`);
  }

  newOrder(p: Record<string, unknown>, now: number): Executions {
    const s = this.symbol(p.symbolId);
    const side = p.tradeSide;
    if (side !== TradeSide.BUY && side !== TradeSide.SELL) throw new Refusal(ErrorCode.INVALID_REQUEST, 'tradeSide is required');
    const orderType = p.orderType as number;
    if (![OrderType.MARKET, OrderType.LIMIT, OrderType.STOP, OrderType.STOP_LIMIT].includes(orderType as 1))
      throw new Refusal(ErrorCode.INVALID_REQUEST, `orderType ${String(orderType)} is not supported`);
    const volume = this.checkVolume(s, p.volume);
    this.requireOpen(s);
    const buy = side === TradeSide.BUY;
    const relSl = typeof p.relativeStopLoss === 'number' ? p.relativeStopLoss / 100_000 : undefined;
    const relTp = typeof p.relativeTakeProfit === 'number' ? p.relativeTakeProfit / 100_000 : undefined;
    const tradeData = {
      symbolId: s.symbolId,
      volume,
      tradeSide: side,
      openTimestamp: now,
      label: p.label as string | undefined,
      comment: p.comment as string | undefined,
    };
    if (orderType === OrderType.MARKET) {
      if (p.stopLoss !== undefined || p.takeProfit !== undefined) {
        throw new Refusal(ErrorCode.INVALID_REQUEST, 'absolute stopLoss/takeProfit are not supported for MARKET orders');
      }
      const fill = buy ? s.ask : s.bid;
      this.checkMargin(s, volume, fill);
      const sl = relSl !== undefined ? r(buy ? fill - relSl : fill + relSl, s.digits) : undefined;
      const tp = relTp !== undefined ? r(buy ? fill + relTp : fill - relTp, s.digits) : undefined;
      this.checkStops(side, buy ? s.bid : s.ask, sl, tp, buy ? 'bid' : 'ask');
      const orderId = this.nextId++;
      const position: Position = {
        positionId: this.nextId++,
        tradeData,
        positionStatus: PositionStatus.POSITION_STATUS_OPEN,
        swap: 0,
        price: fill,
        stopLoss: sl,
        takeProfit: tp,
        usedMargin: Math.round(this.marginOf(s, volume, fill) * 100),
        moneyDigits: 2,
      };
      const order: Order = {
        orderId,
        tradeData,
        orderType,
        orderStatus: OrderStatus.ORDER_STATUS_ACCEPTED,
        clientOrderId: p.clientOrderId as string | undefined,
        positionId: position.positionId,
      };
      this.positions.set(position.positionId, position);
      this.entries.push({ kind: 'position', id: position.positionId, symbolId: s.symbolId, tradeSide: side, volume });
      const deal = {
        dealId: this.nextId++,
        orderId,
        positionId: position.positionId,
        volume,
        filledVolume: volume,
        symbolId: s.symbolId,
        createTimestamp: now,
        executionTimestamp: now,
        executionPrice: fill,
        tradeSide: side,
        dealStatus: 2,
      };
      const filled: Order = {
        ...order,
        orderStatus: OrderStatus.ORDER_STATUS_FILLED,
        executionPrice: fill,
        executedVolume: volume,
        utcLastUpdateTimestamp: now,
      };
      this.history.set(orderId, filled);
      this.deals.set(orderId, [deal]);
      return [
        { executionType: ExecutionType.ORDER_ACCEPTED, order, position: { ...position, positionStatus: 3 } },
        { executionType: ExecutionType.ORDER_FILLED, order: filled, position, deal },
      ];
    }
    const entry = orderType === OrderType.LIMIT ? p.limitPrice : p.stopPrice;
    if (typeof entry !== 'number')
      throw new Refusal(ErrorCode.INVALID_REQUEST, orderType === OrderType.LIMIT ? 'limitPrice is required' : 'stopPrice is required');
    if (orderType === OrderType.STOP_LIMIT && typeof p.slippageInPoints !== 'number')
      throw new Refusal(ErrorCode.INVALID_REQUEST, 'slippageInPoints is required for STOP_LIMIT');
    this.checkEntry(s, side, orderType === OrderType.LIMIT ? OrderType.LIMIT : OrderType.STOP, entry);
    const tif = (p.timeInForce as number | undefined) ?? TimeInForce.GOOD_TILL_CANCEL;
    const expiry = p.expirationTimestamp as number | undefined;
    if (tif === TimeInForce.GOOD_TILL_DATE && !(typeof expiry === 'number' && expiry > now))
      throw new Refusal(ErrorCode.TRADING_BAD_EXPIRATION_DATE, 'expirationTimestamp must be in the future');
    const sl = typeof p.stopLoss === 'number' ? p.stopLoss : relSl !== undefined ? r(buy ? entry - relSl : entry + relSl, s.digits) : undefined;
    const tp = typeof p.takeProfit === 'number' ? p.takeProfit : relTp !== undefined ? r(buy ? entry + relTp : entry - relTp, s.digits) : undefined;
    this.checkStops(side, entry, sl, tp, 'entry price');
    this.checkMargin(s, volume, entry);
    const order: Order = {
      orderId: this.nextId++,
      tradeData,
      orderType,
      orderStatus: OrderStatus.ORDER_STATUS_ACCEPTED,
      expirationTimestamp: tif === TimeInForce.GOOD_TILL_DATE ? expiry : undefined,
      limitPrice: orderType === OrderType.LIMIT ? entry : undefined,
      stopPrice: orderType !== OrderType.LIMIT ? entry : undefined,
      slippageInPoints: orderType === OrderType.STOP_LIMIT ? (p.slippageInPoints as number) : undefined,
      stopLoss: sl,
      takeProfit: tp,
      clientOrderId: p.clientOrderId as string | undefined,
      timeInForce: tif,
      positionId: this.nextId++,
    };
    this.orders.set(order.orderId, order);
    this.history.set(order.orderId, { ...order, utcLastUpdateTimestamp: now });
    this.entries.push({ kind: 'order', id: order.orderId, symbolId: s.symbolId, tradeSide: side, volume });
    return [{ executionType: ExecutionType.ORDER_ACCEPTED, order, position: { positionId: order.positionId!, tradeData, positionStatus: 3, swap: 0 } }];
  }

  private position(id: unknown): Position {
    const p = typeof id === 'number' ? this.positions.get(id) : undefined;
    if (!p) throw new Refusal(ErrorCode.POSITION_NOT_FOUND, `Position ${String(id)} not found`, { positionId: id as number });
    return p;
  }

  private order(id: unknown): Order {
    const o = typeof id === 'number' ? this.orders.get(id) : undefined;
    if (!o) throw new Refusal(ErrorCode.ORDER_NOT_FOUND, `Order ${String(id)} not found`, { orderId: id as number });
    return o;
  }

  /** ProtoOAAmendPositionSLTPReq: the request's stopLoss/takeProfit are the position's new levels (absent = none). */
  amendPosition(p: Record<string, unknown>, now = Date.now()): Executions {
    const pos = this.position(p.positionId);
    const s = this.symbol(pos.tradeData.symbolId);
    this.requireOpen(s);
    const sl = p.stopLoss as number | undefined;
    const tp = p.takeProfit as number | undefined;
    const buy = pos.tradeData.tradeSide === TradeSide.BUY;
    this.checkStops(pos.tradeData.tradeSide, buy ? s.bid : s.ask, sl, tp, buy ? 'bid' : 'ask');
    pos.stopLoss = sl;
    pos.takeProfit = tp;
    pos.utcLastUpdateTimestamp = now;
    return [{ executionType: ExecutionType.ORDER_REPLACED, position: pos }];
  }

  amendOrder(p: Record<string, unknown>, now: number): Executions {
    const o = this.order(p.orderId);
    const s = this.symbol(o.tradeData.symbolId);
    this.requireOpen(s);
    const next: Order = { ...o };
    if (p.volume !== undefined) next.tradeData = { ...o.tradeData, volume: this.checkVolume(s, p.volume) };
    if (typeof p.limitPrice === 'number' && o.orderType === OrderType.LIMIT) next.limitPrice = p.limitPrice;
    if (typeof p.stopPrice === 'number' && o.orderType !== OrderType.LIMIT) next.stopPrice = p.stopPrice;
    if (typeof p.slippageInPoints === 'number' && o.orderType === OrderType.STOP_LIMIT) next.slippageInPoints = p.slippageInPoints;
    next.stopLoss = p.stopLoss as number | undefined;
    next.takeProfit = p.takeProfit as number | undefined;
    if (p.expirationTimestamp !== undefined) {
      if (!(typeof p.expirationTimestamp === 'number' && p.expirationTimestamp > now))
        throw new Refusal(ErrorCode.TRADING_BAD_EXPIRATION_DATE, 'expirationTimestamp must be in the future');
      next.expirationTimestamp = p.expirationTimestamp;
      next.timeInForce = TimeInForce.GOOD_TILL_DATE;
    }
    const entry = (next.orderType === OrderType.LIMIT ? next.limitPrice : next.stopPrice)!;
    if (entry !== (o.orderType === OrderType.LIMIT ? o.limitPrice : o.stopPrice))
      this.checkEntry(s, o.tradeData.tradeSide, o.orderType === OrderType.LIMIT ? OrderType.LIMIT : OrderType.STOP, entry);
    this.checkStops(o.tradeData.tradeSide, entry, next.stopLoss, next.takeProfit, 'entry price');
    next.utcLastUpdateTimestamp = now;
    this.orders.set(o.orderId, next);
    this.history.set(o.orderId, next);
    return [{ executionType: ExecutionType.ORDER_REPLACED, order: next }];
  }

  cancelOrder(p: Record<string, unknown>, now: number): Executions {
    const o = this.order(p.orderId);
    this.requireOpen(this.symbol(o.tradeData.symbolId));
    this.orders.delete(o.orderId);
    const cancelled: Order = { ...o, orderStatus: OrderStatus.ORDER_STATUS_CANCELLED, utcLastUpdateTimestamp: now };
    this.history.set(o.orderId, cancelled);
    return [{ executionType: ExecutionType.ORDER_CANCELLED, order: cancelled }];
  }

  closePosition(p: Record<string, unknown>, now: number): Executions {
    const pos = this.position(p.positionId);
    const s = this.symbol(pos.tradeData.symbolId);
    const volume = p.volume;
    if (typeof volume !== 'number' || !Number.isInteger(volume) || volume <= 0 || volume % s.stepVolume !== 0 || volume > pos.tradeData.volume) {
      throw new Refusal(ErrorCode.TRADING_BAD_VOLUME, `Invalid volume ${String(volume)} to close of ${pos.tradeData.volume}`, { positionId: pos.positionId });
    }
    const rest = pos.tradeData.volume - volume;
    if (rest > 0 && rest < s.minVolume)
      throw new Refusal(ErrorCode.TRADING_BAD_VOLUME, `The remaining volume ${rest} would be below the minimum ${s.minVolume}`, { positionId: pos.positionId });
    this.requireOpen(s);
    return this.closeAt(pos, volume, pos.tradeData.tradeSide === TradeSide.BUY ? s.bid : s.ask, now, { orderType: OrderType.MARKET });
  }

  /**
   * `volume` of a position closed at `price` by a closing order: a MARKET one (a ProtoOAClosePositionReq, or the
   * trader's or the server's own), or the broker's STOP_LOSS_TAKE_PROFIT order at the position's levels. ORDER_ACCEPTED
   * then ORDER_FILLED with the deal and its ProtoOAClosePositionDetail, as the definitions describe them.
   */
  closeAt(pos: Position, volume: number, price: number, now: number, how: Pick<Order, 'orderType' | 'isStopOut' | 'stopLoss' | 'takeProfit'>): Executions {
    const s = this.symbol(pos.tradeData.symbolId);
    const rest = pos.tradeData.volume - volume;
    const buy = pos.tradeData.tradeSide === TradeSide.BUY;
    const gross = this.profitCents(pos, price, volume);
    this.balance += gross;
    const side = buy ? TradeSide.SELL : TradeSide.BUY;
    const order: Order = {
      orderId: this.nextId++,
      tradeData: { ...pos.tradeData, volume, tradeSide: side, openTimestamp: now },
      orderStatus: OrderStatus.ORDER_STATUS_FILLED,
      closingOrder: true,
      positionId: pos.positionId,
      executionPrice: price,
      ...how,
    };
    this.history.set(order.orderId, { ...order, utcLastUpdateTimestamp: now });
    if (rest === 0) this.positions.delete(pos.positionId);
    else {
      pos.tradeData = { ...pos.tradeData, volume: rest };
      pos.usedMargin = Math.round(this.marginOf(s, rest, pos.price!) * 100);
    }
    pos.utcLastUpdateTimestamp = now;
    const after: Position =
      rest === 0 ? { ...pos, positionStatus: PositionStatus.POSITION_STATUS_CLOSED, tradeData: { ...pos.tradeData, closeTimestamp: now } } : pos;
    const deal = {
      dealId: this.nextId++,
      orderId: order.orderId,
      positionId: pos.positionId,
      volume,
      filledVolume: volume,
      symbolId: s.symbolId,
      createTimestamp: now,
      executionTimestamp: now,
      executionPrice: price,
      tradeSide: side,
      dealStatus: 2,
      closePositionDetail: { entryPrice: pos.price, grossProfit: gross, swap: 0, commission: 0, balance: this.balance, closedVolume: volume, moneyDigits: 2 },
    };
    this.deals.set(order.orderId, [deal]);
    return [
      { executionType: ExecutionType.ORDER_ACCEPTED, order: { ...order, orderStatus: OrderStatus.ORDER_STATUS_ACCEPTED }, position: pos },
      { executionType: ExecutionType.ORDER_FILLED, order, position: after, deal },
    ];
  }

  /** ProtoOAOrderListReq: orders last updated within [from, to]. */
  orderList(from: number, to: number): Order[] {
    return [...this.history.values()].filter((o) => {
      const t = o.utcLastUpdateTimestamp ?? o.tradeData.openTimestamp ?? 0;
      return t >= from && t <= to;
    });
  }

  /** Net unrealized P&L in cents of the deposit currency (moneyDigits 2). */
  unrealized(): { positionId: number; grossUnrealizedPnL: number; netUnrealizedPnL: number }[] {
    return [...this.positions.values()].map((p) => {
      const s = this.symbols.get(p.tradeData.symbolId)!;
      const pnl = this.profitCents(p, p.tradeData.tradeSide === TradeSide.BUY ? s.bid : s.ask, p.tradeData.volume);
      return { positionId: p.positionId, grossUnrealizedPnL: pnl, netUnrealizedPnL: pnl };
    });
  }
}
