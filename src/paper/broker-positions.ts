import type { BrokerBook } from './broker-book';
import type { SymbolSpec } from './instruments';
import { EPS, isMultiple, iso, roundTo, volumeDecimals } from './numbers';
import { managementOf } from './asked-management';
import type { BrokerCommand, BrokerOp, ExecutionResult, PendingOrder, Position, Side } from './broker-types';

/** The paper broker's open positions: market entries, the close family, SL/TP changes, and SL/TP hits as the market moves. */

/** SL/TP hits of the open positions at `now` (part of PaperBroker.tick, after the pending orders). */
export function hitStops(book: BrokerBook, now: number, ops: BrokerOp[]): void {
  for (const pos of [...book.state.positions]) {
    const spec = book.specs.get(pos.canonical);
    if (!spec || !book.marketOpen(spec)) continue;
    const q = book.feed.quote(spec, now);
    const exit = pos.side === 'buy' ? q.bid : q.ask;
    const dir = pos.side === 'buy' ? 1 : -1;
    if (pos.sl !== null && dir * (exit - pos.sl) <= EPS) ops.push(book.closePosition(pos, pos.volume, 'sl'));
    else if (pos.tp !== null && dir * (exit - pos.tp) >= -EPS) ops.push(book.closePosition(pos, pos.volume, 'tp'));
  }
}

export function marketEntry(book: BrokerBook, cmd: BrokerCommand, side: Side, ops: BrokerOp[]): ExecutionResult {
  const spec = book.requireSymbol(cmd.symbol);
  book.guardOpenPositions(cmd, cmd.symbol!);
  const volume = book.requireVolume(spec, cmd.volume);
  book.requireOpen(spec);
  const q = book.feed.quote(spec, book.clock());
  const fill = side === 'buy' ? q.ask : q.bid;
  const { sl, tp } = book.stopsFrom(spec, side, fill, cmd);
  // A position closes at the other side of the quote: a buy's SL must be below the bid, its TP above, and mirrored.
  book.checkStops(spec, side, side === 'buy' ? q.bid : q.ask, sl, tp, side === 'buy' ? 'bid' : 'ask');
  book.requireMargin(spec, volume, fill);
  const pos: Position = {
    ticket: book.nextTicket(),
    symbol: cmd.symbol!,
    canonical: spec.name,
    side,
    volume,
    openPrice: fill,
    openTime: iso(book.clock()),
    sl,
    tp,
    commandId: cmd.commandId ?? null,
    action: cmd.action,
    ...managementOf(cmd),
  };
  book.state.positions.push(pos);
  ops.push(book.positionOp(pos, 'open', 'command', fill, volume));
  return { status: 'filled', ticket: pos.ticket, price: fill, volume };
}

export function closeOne(book: BrokerBook, cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
  const pos = book.requirePosition(cmd.positionId);
  book.requireOpen(book.specOf(pos));
  const op = book.closePosition(pos, pos.volume, 'command', cmd);
  ops.push(op);
  return { status: 'done', ticket: pos.ticket, price: op.price, volume: op.volume };
}

/** close with a filter: every open position matching symbol, side and pnl (profit > 0, loss < 0). */
export function closeFiltered(book: BrokerBook, cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
  const spec = cmd.symbol === undefined ? undefined : book.requireSymbol(cmd.symbol);
  const matching = book.state.positions.filter((p) => {
    if (spec && p.canonical !== spec.name) return false;
    if (cmd.side && p.side !== cmd.side) return false;
    if (cmd.pnl === 'profit' && !(book.floating(p) > 0)) return false;
    if (cmd.pnl === 'loss' && !(book.floating(p) < 0)) return false;
    return true;
  });
  return closeMany(book, cmd, matching, [], ops);
}

/** close_all: every open position and every pending order ("close everything"). */
export function closeAll(book: BrokerBook, cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
  return closeMany(book, cmd, [...book.state.positions], [...book.state.orders], ops);
}

/** Closes what it can; a symbol whose market is closed is skipped. Rejected only if everything was skipped. */
function closeMany(book: BrokerBook, cmd: BrokerCommand, positions: Position[], orders: PendingOrder[], ops: BrokerOp[]): ExecutionResult {
  if (positions.length === 0 && orders.length === 0) return { status: 'done', ticket: null, message: 'nothing to close' };
  const closed: string[] = [];
  const cancelled: string[] = [];
  const skipped = new Set<string>();
  for (const pos of positions) {
    const spec = book.specOf(pos);
    if (!book.marketOpen(spec)) {
      skipped.add(spec.name);
      continue;
    }
    ops.push(book.closePosition(pos, pos.volume, 'command', cmd));
    closed.push(pos.ticket);
  }
  for (const order of orders) {
    const spec = book.specOf(order);
    if (!book.marketOpen(spec)) {
      skipped.add(spec.name);
      continue;
    }
    book.removeOrder(order.ticket, 'cancelled');
    ops.push(book.orderOp(order, 'cancel', 'command', null, cmd));
    cancelled.push(order.ticket);
  }
  if (closed.length === 0 && cancelled.length === 0) book.reject('market_closed', [...skipped].join(', '));
  const parts = [`closed ${closed.length} position(s)${closed.length ? ` ${closed.join(',')}` : ''}`];
  if (orders.length > 0) parts.push(`cancelled ${cancelled.length} order(s)${cancelled.length ? ` ${cancelled.join(',')}` : ''}`);
  if (skipped.size > 0) parts.push(`market closed: ${[...skipped].join(', ')}`);
  const only = closed.length + cancelled.length === 1 ? (closed[0] ?? cancelled[0])! : null;
  return { status: 'done', ticket: only, message: parts.join('; ') };
}

export function partialClose(book: BrokerBook, cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
  const pos = book.requirePosition(cmd.positionId);
  const spec = book.specOf(pos);
  if (cmd.partialVolume === undefined) book.reject('invalid_request', 'partialVolume is required');
  const wanted = cmd.partialVolume;
  if (!(wanted > 0) || !isMultiple(wanted, spec.volumeStep)) {
    book.reject('bad_volume', `partialVolume ${wanted} is not a multiple of ${spec.volumeStep}`);
  }
  book.requireOpen(spec);
  if (wanted >= pos.volume - EPS) {
    const op = book.closePosition(pos, pos.volume, 'command', cmd);
    ops.push(op);
    return { status: 'done', ticket: pos.ticket, price: op.price, volume: op.volume, message: 'closed in full' };
  }
  const volume = roundTo(wanted, volumeDecimals(spec));
  const remaining = roundTo(pos.volume - volume, volumeDecimals(spec));
  if (volume < spec.minVolume - EPS) book.reject('bad_volume', `partialVolume ${volume} is below the minimum ${spec.minVolume}`);
  if (remaining < spec.minVolume - EPS) book.reject('bad_volume', `the remaining ${remaining} would be below the minimum ${spec.minVolume}`);
  const op = book.closePosition(pos, volume, 'command', cmd);
  ops.push(op);
  return { status: 'done', ticket: pos.ticket, price: op.price, volume };
}

export function modifyPosition(book: BrokerBook, cmd: BrokerCommand, which: 'sl' | 'tp', ops: BrokerOp[]): ExecutionResult {
  const pos = book.requirePosition(cmd.positionId);
  const spec = book.specOf(pos);
  const value = cmd[which];
  if (value === undefined) book.reject('invalid_request', `${which} is required`);
  return setPositionStops(
    book,
    cmd,
    pos,
    spec,
    which === 'sl' ? roundTo(value, spec.digits) : pos.sl,
    which === 'tp' ? roundTo(value, spec.digits) : pos.tp,
    ops,
  );
}

/** SL to the entry price. MT5-like: refused (invalid stops) unless the entry is already beyond the closing price. */
export function breakeven(book: BrokerBook, cmd: BrokerCommand, ops: BrokerOp[]): ExecutionResult {
  const pos = book.requirePosition(cmd.positionId);
  return setPositionStops(book, cmd, pos, book.specOf(pos), pos.openPrice, pos.tp, ops);
}

export function setPositionStops(
  book: BrokerBook,
  cmd: BrokerCommand,
  pos: Position,
  spec: SymbolSpec,
  sl: number | null,
  tp: number | null,
  ops: BrokerOp[],
  by: { cause: BrokerOp['cause']; trailActiveAt?: number } = { cause: 'command' },
): ExecutionResult {
  book.requireOpen(spec);
  const q = book.feed.quote(spec, book.clock());
  book.checkStops(spec, pos.side, pos.side === 'buy' ? q.bid : q.ask, sl, tp, pos.side === 'buy' ? 'bid' : 'ask');
  if (sl === pos.sl && tp === pos.tp) return book.noChanges(pos.ticket);
  pos.sl = sl;
  pos.tp = tp;
  const trail = by.trailActiveAt !== undefined ? { trailActiveAt: by.trailActiveAt } : {};
  ops.push({ ...book.positionOp(pos, 'modify', by.cause, null, pos.volume, cmd), sl, tp, ...trail });
  return { status: 'done', ticket: pos.ticket };
}
