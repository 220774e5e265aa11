import { createHash } from 'node:crypto';
import type { CommandOutcome } from '../bridge-kit/client';
import type { BridgeCommand } from '../domain/bridge-protocol';
import type { CtraderAccount } from './account';
import { ACCEPTED, CANCELLED, FILLED, MARKET_DONE, REPLACED } from './completions';
import { NotSentInTime, OpenApiError, OutcomeUnknown } from './connection';
import { ErrorCode, ExecutionType, OrderType, PayloadType, TimeInForce, TradeSide, type ExecutionEvent, type Order, type Position } from './messages';
import type { Attempt } from '../risk/stop-out-runner';
import { isTransientRefusal } from '../risk/transient-refusals';
import { lotsToVolume, pipSize, pipsToRelative, pointsBetween, roundPrice, volumeToLots, type SymbolSpec } from './units';

/**
 * The 17 actions of the spec, each built from Open API requests (the table is in docs/ctrader-connector.md).
 * A broker refusal is an outcome (`rejected` with the ErrorCode name and description); a lost answer throws
 * OutcomeUnknown, and the caller resolves the command from the broker's state instead of sending it again.
 */

export type Outcome = CommandOutcome;

/** ProtoOANewOrderReq.label (≤ 100) and clientOrderId (≤ 50): how a command's order is found again after a crash. */
export function labelOf(commandId: string): string {
  return `es-${createHash('sha256').update(commandId).digest('hex').slice(0, 32)}`;
}

/** What the actions need of an account (CtraderAccount; a unit test's stand-in). */
export type TradingAccount = Pick<CtraderAccount, 'call' | 'reconcile' | 'symbol' | 'symbolById' | 'unrealizedPnl' | 'quote'>;

class Refused extends Error {
  constructor(
    readonly retcode: string,
    readonly detail: string,
  ) {
    super(`${retcode} ${detail}`);
  }
}

const refuse = (retcode: string, detail: string): never => {
  throw new Refused(retcode, detail);
};

export async function executeCommand(acct: TradingAccount, cmd: BridgeCommand, label: string, notAfter: number): Promise<Outcome> {
  try {
    return await run(acct, cmd, label, notAfter);
  } catch (err) {
    if (err instanceof Refused) return { status: 'rejected', retcode: err.retcode, message: err.detail };
    if (err instanceof OpenApiError) return { status: 'rejected', retcode: err.errorCode, message: err.description || err.errorCode };
    if (err instanceof NotSentInTime) return { status: 'expired', message: `not executed: expired at ${cmd.expiresAt}` };
    throw err;
  }
}

function run(acct: TradingAccount, cmd: BridgeCommand, label: string, notAfter: number): Promise<Outcome> {
  switch (cmd.action) {
    case 'buy':
    case 'sell':
      return marketEntry(acct, cmd, label, notAfter);
    case 'buy_limit':
    case 'sell_limit':
      return pendingEntry(acct, cmd, label, notAfter, OrderType.LIMIT);
    case 'buy_stop':
    case 'sell_stop':
      return pendingEntry(acct, cmd, label, notAfter, OrderType.STOP);
    case 'buy_stop_limit':
    case 'sell_stop_limit':
      return pendingEntry(acct, cmd, label, notAfter, OrderType.STOP_LIMIT);
    case 'close':
      return cmd.positionId !== undefined ? closeOne(acct, cmd, notAfter) : closeMatching(acct, cmd, notAfter, false);
    case 'close_all':
      return closeMatching(acct, cmd, notAfter, true);
    case 'partial_close':
      return partialClose(acct, cmd, notAfter);
    case 'cancel_pending':
      return cancelPending(acct, cmd, notAfter);
    case 'modify_sl':
    case 'modify_tp':
    case 'breakeven':
      return modifyPosition(acct, cmd, notAfter);
    case 'modify_pending':
    case 'modify_pending_expiry':
      return modifyPending(acct, cmd, notAfter);
  }
}

// ---- entries ----------------------------------------------------------------------------------------------------

function sideOf(cmd: BridgeCommand): number {
  return cmd.action.startsWith('buy') ? TradeSide.BUY : TradeSide.SELL;
}

async function entryBasics(acct: TradingAccount, cmd: BridgeCommand, label: string): Promise<{ spec: SymbolSpec; base: Record<string, unknown> }> {
  if (cmd.symbol === undefined) refuse(ErrorCode.INVALID_REQUEST, 'symbol is required');
  const spec = acct.symbol(cmd.symbol!) ?? refuse(ErrorCode.SYMBOL_NOT_FOUND, `Symbol not found: ${cmd.symbol}`);
  if (cmd.volume === undefined) refuse(ErrorCode.INVALID_REQUEST, 'volume is required');
  if (typeof cmd.maxOpenPositions === 'number' || typeof cmd.maxOpenPositionsPerSymbol === 'number') {
    const { positions } = await acct.reconcile();
    if (typeof cmd.maxOpenPositions === 'number' && positions.length >= cmd.maxOpenPositions) {
      refuse('risk_max_open_positions', `the account already has ${positions.length} open position(s); the maximum is ${cmd.maxOpenPositions}`);
    }
    const inSymbol = positions.filter((p) => p.tradeData.symbolId === spec.symbolId).length;
    if (typeof cmd.maxOpenPositionsPerSymbol === 'number' && inSymbol >= cmd.maxOpenPositionsPerSymbol) {
      refuse(
        'risk_max_open_positions',
        `the account already has ${inSymbol} open position(s) in ${cmd.symbol!}; the maximum per symbol is ${cmd.maxOpenPositionsPerSymbol}`,
      );
    }
  }
  const base: Record<string, unknown> = {
    symbolId: spec.symbolId,
    tradeSide: sideOf(cmd),
    volume: lotsToVolume(cmd.volume!, spec),
    label,
    clientOrderId: label,
    comment: `signal ${cmd.signalId}`.slice(0, 512),
  };
  return { spec, base };
}

/**
 * MARKET order. Stops travel as relativeStopLoss/relativeTakeProfit (distances from the fill): absolute levels are
 * not accepted on MARKET orders (ProtoOANewOrderReq.stopLoss: "Not supported for the MARKER orders"), so an absolute
 * level becomes its distance from the current spot (ask for a buy, bid for a sell). A level on the wrong side gives a
 * negative distance, which the broker refuses (TRADING_BAD_STOPS) before anything is opened.
 */
async function marketEntry(acct: TradingAccount, cmd: BridgeCommand, label: string, notAfter: number): Promise<Outcome> {
  const { spec, base } = await entryBasics(acct, cmd, label);
  if (cmd.slPips !== undefined) base.relativeStopLoss = pipsToRelative(cmd.slPips, spec);
  if (cmd.tpPips !== undefined) base.relativeTakeProfit = pipsToRelative(cmd.tpPips, spec);
  if (cmd.sl !== undefined || cmd.tp !== undefined) {
    const q = await acct.quote(spec.symbolId);
    const buy = sideOf(cmd) === TradeSide.BUY;
    const entry = buy ? q.ask : q.bid;
    const distance = (level: number, towardsProfit: boolean) => Math.round((buy === towardsProfit ? level - entry : entry - level) * 100_000);
    if (cmd.sl !== undefined) base.relativeStopLoss = distance(cmd.sl, false);
    if (cmd.tp !== undefined) base.relativeTakeProfit = distance(cmd.tp, true);
  }
  const res = await acct.call(PayloadType.PROTO_OA_NEW_ORDER_REQ, { ...base, orderType: OrderType.MARKET }, { done: MARKET_DONE, notAfter });
  const ev = res.payload as unknown as ExecutionEvent;
  const executed = ev.order?.executedVolume ?? 0;
  if (ev.executionType !== ExecutionType.ORDER_FILLED && !(executed > 0 && ev.position)) {
    return { status: 'rejected', retcode: ev.errorCode ?? 'ORDER_CANCELLED', message: 'the market order ended without a fill' };
  }
  // A fill whose answer lacks the position: the broker did act, so find it by label rather than report a refusal.
  if (!ev.position) throw new OutcomeUnknown('ORDER_FILLED without a position');
  const position = ev.position;
  const partial = ev.executionType !== ExecutionType.ORDER_FILLED;
  return {
    status: 'filled',
    ticket: String(position.positionId),
    price: ev.deal?.executionPrice ?? position.price ?? null,
    // An order cancelled or expired after a partial fill still opened the position, with the part that filled.
    volume: volumeToLots(partial ? executed : (ev.deal?.filledVolume ?? position.tradeData.volume), spec),
    ...(partial ? { message: 'partially filled; the rest was cancelled by the broker' } : {}),
  };
}

async function pendingEntry(acct: TradingAccount, cmd: BridgeCommand, label: string, notAfter: number, orderType: number): Promise<Outcome> {
  const { spec, base } = await entryBasics(acct, cmd, label);
  if (cmd.price === undefined) refuse(ErrorCode.INVALID_REQUEST, 'price is required');
  const price = roundPrice(cmd.price!, spec.digits);
  // Pip stops of a pending entry count from its price (the limit price of a stop-limit): sent as absolute levels.
  const pip = pipSize(spec);
  const dir = sideOf(cmd) === TradeSide.BUY ? 1 : -1;
  const sl = cmd.sl ?? (cmd.slPips !== undefined ? price - dir * cmd.slPips * pip : undefined);
  const tp = cmd.tp ?? (cmd.tpPips !== undefined ? price + dir * cmd.tpPips * pip : undefined);
  const req: Record<string, unknown> = { ...base, orderType, ...stops(spec, sl, tp), ...expiryOf(cmd.expiry) };
  if (orderType === OrderType.LIMIT) req.limitPrice = price;
  if (orderType === OrderType.STOP) req.stopPrice = price;
  if (orderType === OrderType.STOP_LIMIT) {
    if (cmd.stopLimitPrice === undefined) refuse(ErrorCode.INVALID_REQUEST, 'stopLimitPrice is required');
    // The trigger is the STOP_LIMIT order's stopPrice; the limit is carried as the distance from it in points.
    req.stopPrice = roundPrice(cmd.stopLimitPrice!, spec.digits);
    req.slippageInPoints = pointsBetween(price, cmd.stopLimitPrice!, spec.digits);
  }
  const res = await acct.call(PayloadType.PROTO_OA_NEW_ORDER_REQ, req, { done: ACCEPTED, notAfter });
  const order = (res.payload as unknown as ExecutionEvent).order;
  if (!order) throw new OutcomeUnknown('ORDER_ACCEPTED without an order');
  return { status: 'filled', ticket: String(order.orderId), price, volume: volumeToLots(order.tradeData.volume, spec) };
}

function stops(spec: SymbolSpec, sl: number | undefined, tp: number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (sl !== undefined) out.stopLoss = roundPrice(sl, spec.digits);
  if (tp !== undefined) out.takeProfit = roundPrice(tp, spec.digits);
  return out;
}

function expiryOf(expiry: string | undefined): Record<string, number> {
  if (expiry === undefined) return { timeInForce: TimeInForce.GOOD_TILL_CANCEL };
  const at = Date.parse(expiry);
  if (!Number.isFinite(at)) refuse(ErrorCode.TRADING_BAD_EXPIRATION_DATE, `expiry ${expiry} is not a date-time`);
  return { timeInForce: TimeInForce.GOOD_TILL_DATE, expirationTimestamp: at };
}

// ---- positions ----------------------------------------------------------------------------------------------------

async function findPosition(acct: TradingAccount, positionId: string | undefined): Promise<{ position: Position; spec: SymbolSpec }> {
  if (positionId === undefined) refuse(ErrorCode.INVALID_REQUEST, 'positionId is required');
  const { positions } = await acct.reconcile();
  const position = positions.find((p) => String(p.positionId) === positionId) ?? refuse(ErrorCode.POSITION_NOT_FOUND, `Position not found: ${positionId}`);
  const spec = acct.symbolById(position.tradeData.symbolId) ?? refuse(ErrorCode.SYMBOL_NOT_FOUND, `Symbol not found: ${position.tradeData.symbolId}`);
  return { position, spec };
}

async function closeVolume(acct: TradingAccount, position: Position, volume: number, notAfter?: number): Promise<{ price: number | null }> {
  const res = await acct.call(PayloadType.PROTO_OA_CLOSE_POSITION_REQ, { positionId: position.positionId, volume }, { done: FILLED, notAfter });
  const ev = res.payload as unknown as ExecutionEvent;
  return { price: ev.deal?.executionPrice ?? null };
}

/**
 * The stop-out's close of one whole position at market and cancel of one order (docs/risk-sizing.md, "Stop-out"):
 * a broker refusal is a `failed` result; a lost answer throws OutcomeUnknown (the stop-out then reads what is open).
 */
export async function closeWholePosition(acct: TradingAccount, positionId: string): Promise<Attempt<'closed'>> {
  try {
    const { position } = await findPosition(acct, positionId);
    await closeVolume(acct, position, position.tradeData.volume);
    return { ticket: positionId, result: 'closed' };
  } catch (err) {
    return { ticket: positionId, result: 'failed', ...refusalOf(err) };
  }
}

export async function cancelOrderById(acct: TradingAccount, orderId: string): Promise<Attempt<'cancelled'>> {
  try {
    await acct.call(PayloadType.PROTO_OA_CANCEL_ORDER_REQ, { orderId: Number(orderId) }, { done: CANCELLED });
    return { ticket: orderId, result: 'cancelled' };
  } catch (err) {
    return { ticket: orderId, result: 'failed', ...refusalOf(err) };
  }
}

/** The refusal's words, and whether it is one that may pass in a moment (the stop-out tries those again). */
function refusalOf(err: unknown): { message: string; transient?: true } {
  const transient = (code: string) => (isTransientRefusal(code) ? { transient: true as const } : {});
  if (err instanceof Refused) return { message: `${err.retcode} ${err.detail}`, ...transient(err.retcode) };
  if (err instanceof OpenApiError) return { message: `${err.errorCode} ${err.description}`.trim(), ...transient(err.errorCode) };
  throw err;
}

async function closeOne(acct: TradingAccount, cmd: BridgeCommand, notAfter: number): Promise<Outcome> {
  const { position, spec } = await findPosition(acct, cmd.positionId);
  const { price } = await closeVolume(acct, position, position.tradeData.volume, notAfter);
  return { status: 'done', ticket: String(position.positionId), price, volume: volumeToLots(position.tradeData.volume, spec) };
}

async function partialClose(acct: TradingAccount, cmd: BridgeCommand, notAfter: number): Promise<Outcome> {
  if (cmd.partialVolume === undefined) refuse(ErrorCode.INVALID_REQUEST, 'partialVolume is required');
  const { position, spec } = await findPosition(acct, cmd.positionId);
  const wanted = lotsToVolume(cmd.partialVolume!, spec);
  const full = wanted >= position.tradeData.volume;
  const volume = full ? position.tradeData.volume : wanted;
  const { price } = await closeVolume(acct, position, volume, notAfter);
  return { status: 'done', ticket: String(position.positionId), price, volume: volumeToLots(volume, spec), ...(full ? { message: 'closed in full' } : {}) };
}

/** Filtered close (symbol / side / pnl) or close_all (every position and every pending order). One request each. */
async function closeMatching(acct: TradingAccount, cmd: BridgeCommand, notAfter: number, all: boolean): Promise<Outcome> {
  if (Date.now() > notAfter) throw new NotSentInTime('expired');
  const { positions, orders } = await acct.reconcile();
  let targets = positions;
  if (!all) {
    if (cmd.symbol !== undefined) {
      const spec = acct.symbol(cmd.symbol);
      targets = spec ? targets.filter((p) => p.tradeData.symbolId === spec.symbolId) : [];
    }
    if (cmd.side !== undefined) targets = targets.filter((p) => p.tradeData.tradeSide === (cmd.side === 'buy' ? TradeSide.BUY : TradeSide.SELL));
    if (cmd.pnl !== undefined && targets.length > 0) {
      const pnl = await acct.unrealizedPnl();
      targets = targets.filter((p) => {
        const v = pnl.get(p.positionId) ?? 0;
        return cmd.pnl === 'profit' ? v > 0 : v < 0;
      });
    }
  }
  const pending = all ? orders : [];
  if (targets.length === 0 && pending.length === 0) return { status: 'done', ticket: null, message: 'nothing to close' };
  const closed: string[] = [];
  const cancelled: string[] = [];
  const failed: { id: string; err: OpenApiError }[] = [];
  for (const p of targets) {
    try {
      await closeVolume(acct, p, p.tradeData.volume);
      closed.push(String(p.positionId));
    } catch (err) {
      if (!(err instanceof OpenApiError)) throw err;
      failed.push({ id: String(p.positionId), err });
    }
  }
  for (const o of pending) {
    try {
      await acct.call(PayloadType.PROTO_OA_CANCEL_ORDER_REQ, { orderId: o.orderId }, { done: CANCELLED });
      cancelled.push(String(o.orderId));
    } catch (err) {
      if (!(err instanceof OpenApiError)) throw err;
      failed.push({ id: String(o.orderId), err });
    }
  }
  if (closed.length + cancelled.length === 0 && failed.length > 0) {
    return {
      status: 'rejected',
      retcode: failed[0]!.err.errorCode,
      message: failed.map((f) => `${f.id}: ${f.err.errorCode} ${f.err.description}`.trim()).join('; '),
    };
  }
  const parts = [`closed ${closed.length} position(s)${closed.length ? ` ${closed.join(',')}` : ''}`];
  if (all) parts.push(`cancelled ${cancelled.length} order(s)${cancelled.length ? ` ${cancelled.join(',')}` : ''}`);
  if (failed.length) parts.push(`refused: ${failed.map((f) => `${f.id} ${f.err.errorCode}`).join(', ')}`);
  const only = closed.length + cancelled.length === 1 ? (closed[0] ?? cancelled[0])! : null;
  return { status: 'done', ticket: only, message: parts.join('; ') };
}

/** modify_sl, modify_tp, breakeven: ProtoOAAmendPositionSLTPReq with both levels (the one not changed is kept). */
async function modifyPosition(acct: TradingAccount, cmd: BridgeCommand, notAfter: number): Promise<Outcome> {
  const { position, spec } = await findPosition(acct, cmd.positionId);
  let sl = position.stopLoss;
  let tp = position.takeProfit;
  if (cmd.action === 'modify_sl') sl = cmd.sl ?? refuse(ErrorCode.INVALID_REQUEST, 'sl is required');
  if (cmd.action === 'modify_tp') tp = cmd.tp ?? refuse(ErrorCode.INVALID_REQUEST, 'tp is required');
  if (cmd.action === 'breakeven') sl = position.price ?? refuse(ErrorCode.INVALID_REQUEST, `position ${position.positionId} has no entry price`);
  const next = stops(spec, sl, tp);
  const ticket = String(position.positionId);
  if (next.stopLoss === position.stopLoss && next.takeProfit === position.takeProfit) return { status: 'done', ticket, message: 'No changes' };
  await acct.call(PayloadType.PROTO_OA_AMEND_POSITION_SLTP_REQ, { positionId: position.positionId, ...next }, { done: REPLACED, notAfter });
  return { status: 'done', ticket };
}

// ---- pending orders -----------------------------------------------------------------------------------------------

async function findOrder(acct: TradingAccount, orderId: string | undefined): Promise<{ order: Order; spec: SymbolSpec }> {
  if (orderId === undefined) refuse(ErrorCode.INVALID_REQUEST, 'orderId is required');
  const { orders } = await acct.reconcile();
  const order = orders.find((o) => String(o.orderId) === orderId) ?? refuse(ErrorCode.ORDER_NOT_FOUND, `Order not found: ${orderId}`);
  const spec = acct.symbolById(order.tradeData.symbolId) ?? refuse(ErrorCode.SYMBOL_NOT_FOUND, `Symbol not found: ${order.tradeData.symbolId}`);
  return { order, spec };
}

async function cancelPending(acct: TradingAccount, cmd: BridgeCommand, notAfter: number): Promise<Outcome> {
  if (cmd.orderId === undefined) refuse(ErrorCode.INVALID_REQUEST, 'orderId is required');
  await acct.call(PayloadType.PROTO_OA_CANCEL_ORDER_REQ, { orderId: Number(cmd.orderId) }, { done: CANCELLED, notAfter });
  return { status: 'done', ticket: cmd.orderId };
}

/**
 * modify_pending / modify_pending_expiry: ProtoOAAmendOrderReq carrying every level of the order, the changed ones
 * new, so nothing the trader did not name is lost.
 */
async function modifyPending(acct: TradingAccount, cmd: BridgeCommand, notAfter: number): Promise<Outcome> {
  const { order, spec } = await findOrder(acct, cmd.orderId);
  const given = cmd.action === 'modify_pending_expiry' ? (['expiry'] as const) : (['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'] as const);
  if (!given.some((f) => cmd[f] !== undefined))
    refuse(ErrorCode.INVALID_REQUEST, cmd.action === 'modify_pending_expiry' ? 'expiry is required' : 'nothing to modify');
  if (cmd.action === 'modify_pending' && cmd.stopLimitPrice !== undefined && order.orderType !== OrderType.STOP_LIMIT) {
    refuse(ErrorCode.INVALID_REQUEST, `order ${order.orderId} is not a stop-limit order, it has no stop-limit trigger`);
  }
  const req: Record<string, unknown> = { orderId: order.orderId };
  const price = cmd.action === 'modify_pending' ? cmd.price : undefined;
  if (order.orderType === OrderType.LIMIT) req.limitPrice = roundPrice(price ?? order.limitPrice!, spec.digits);
  if (order.orderType === OrderType.STOP) req.stopPrice = roundPrice(price ?? order.stopPrice!, spec.digits);
  if (order.orderType === OrderType.STOP_LIMIT) {
    const trigger = cmd.action === 'modify_pending' && cmd.stopLimitPrice !== undefined ? cmd.stopLimitPrice : order.stopPrice!;
    req.stopPrice = roundPrice(trigger, spec.digits);
    // Without a new limit price the limit keeps its distance from the trigger.
    req.slippageInPoints = price !== undefined ? pointsBetween(price, trigger, spec.digits) : (order.slippageInPoints ?? 0);
  }
  const sl = cmd.action === 'modify_pending' && cmd.sl !== undefined ? cmd.sl : order.stopLoss;
  const tp = cmd.action === 'modify_pending' && cmd.tp !== undefined ? cmd.tp : order.takeProfit;
  Object.assign(req, stops(spec, sl, tp));
  const expiry = cmd.expiry !== undefined ? expiryOf(cmd.expiry).expirationTimestamp : order.expirationTimestamp;
  if (expiry !== undefined) req.expirationTimestamp = expiry;
  const unchanged =
    req.limitPrice === order.limitPrice &&
    req.stopPrice === order.stopPrice &&
    (req.slippageInPoints ?? order.slippageInPoints) === order.slippageInPoints &&
    req.stopLoss === order.stopLoss &&
    req.takeProfit === order.takeProfit &&
    req.expirationTimestamp === order.expirationTimestamp;
  if (unchanged) return { status: 'done', ticket: String(order.orderId), message: 'No changes' };
  await acct.call(PayloadType.PROTO_OA_AMEND_ORDER_REQ, req, { done: REPLACED, notAfter });
  return { status: 'done', ticket: String(order.orderId) };
}
