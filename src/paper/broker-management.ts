import type { StopCause } from '../bridge-kit/trade-management';
import type { BrokerBook } from './broker-book';
import { setPositionStops } from './broker-positions';
import { EPS, isMultiple, roundTo, volumeDecimals } from './numbers';
import { Rejected } from './retcodes';
import type { BrokerOp, ExecutionResult, Side } from './broker-types';

/**
 * What the paper broker does for trade management (protocol 1.6, docs/trade-management.md): the terminal's engine
 * moves a position's stop or closes a take-profit level's share, and an entry with closeOpposite first closes the
 * other side. Each is a broker operation of its own, with the management's cause in the ledger.
 */

/** Moves a managed position's stop (the take profit as given). */
export function managedStop(
  book: BrokerBook,
  ticket: string,
  sl: number,
  tp: number | null,
  cause: StopCause,
  trailActiveAt: number | undefined,
  ops: BrokerOp[],
): ExecutionResult {
  const pos = book.requirePosition(ticket);
  const spec = book.specOf(pos);
  const by = trailActiveAt !== undefined && cause === 'trailing_stop' ? { cause, trailActiveAt } : { cause };
  return setPositionStops(book, { action: 'modify_sl' }, pos, spec, roundTo(sl, spec.digits), tp === null ? null : roundTo(tp, spec.digits), ops, by);
}

/** Closes a take-profit level's share of a position (all of it when the share is at least what is open). */
export function managedClose(book: BrokerBook, ticket: string, volume: number, ops: BrokerOp[]): ExecutionResult {
  const pos = book.requirePosition(ticket);
  const spec = book.specOf(pos);
  book.requireOpen(spec);
  if (!(volume > 0) || !isMultiple(volume, spec.volumeStep)) book.reject('bad_volume', `volume ${volume} is not a multiple of ${spec.volumeStep}`);
  const closing = volume >= pos.volume - EPS ? pos.volume : roundTo(volume, volumeDecimals(spec));
  if (closing < pos.volume && pos.volume - closing < spec.minVolume - EPS) {
    book.reject('bad_volume', `the remaining ${roundTo(pos.volume - closing, volumeDecimals(spec))} would be below the minimum ${spec.minVolume}`);
  }
  const op = book.closePosition(pos, closing, 'take_profit_level');
  ops.push(op);
  return { status: 'done', ticket: pos.ticket, price: op.price, volume: op.volume };
}

/**
 * The reverse of an entry: every open position of the entry's symbol on the other side closed in full, one by one.
 * Stops at the first that fails (the entry is then refused): `closed` says what was done before it.
 */
export function closeOpposite(
  book: BrokerBook,
  symbol: string,
  side: Side,
  ops: BrokerOp[],
): { closed: string[]; failed?: { ticket: string; message: string } } {
  const spec = book.requireSymbol(symbol);
  const closed: string[] = [];
  for (const pos of book.state.positions.filter((p) => p.canonical === spec.name && p.side !== side)) {
    try {
      book.requireOpen(spec);
      ops.push(book.closePosition(pos, pos.volume, 'close_opposite'));
      closed.push(pos.ticket);
    } catch (err) {
      if (!(err instanceof Rejected)) throw err;
      return { closed, failed: { ticket: pos.ticket, message: err.message } };
    }
  }
  return { closed };
}
