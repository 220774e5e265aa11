import type { Serial } from '../bridge-kit/serial';
import { StopOutWatch } from '../bridge-kit/stop-out-watch';
import type { EquityMarks } from '../risk/equity-marks';
import type { StopOutMark } from '../risk/stop-out';
import { StopOutRunner, type OrderFate, type StopOutAccount } from '../risk/stop-out-runner';
import type { CtraderAccount } from './account';
import { readAccount } from './figures';
import { OrderStatus, type Deal, type Order } from './messages';
import { cancelOrderById, closeWholePosition } from './trading';

/**
 * The cTrader connector's stop-out (docs/risk-sizing.md, "Stop-out"; docs/ctrader-connector.md): equity as the loss
 * guards read it (balance + the positions' unrealized P&L, ProtoOAGetPositionUnrealizedPnLReq), fresh only while every
 * open position's symbol had a spot within the bound; whole positions closed with ProtoOAClosePositionReq and orders
 * cancelled with ProtoOACancelOrderReq; a listed order no longer pending is looked up with ProtoOAOrderDetailsReq
 * (cancelled or expired counts as cancelled; filled does not); the mark in `<accountId>.marks.json`, beside the equity
 * marks.
 */

type StopOutCtraderAccount = Pick<
  CtraderAccount,
  | 'trader'
  | 'unrealizedPnl'
  | 'assetName'
  | 'reconcile'
  | 'orderDetails'
  | 'conversionChain'
  | 'quote'
  | 'quoteReceivedAt'
  | 'symbolById'
  | 'call'
  | 'symbol'
  | 'onSpot'
>;

/** How long one look may wait for Open API's figures or a first spot. */
const LOOK_TIMEOUT_MS = 5_000;

export interface CtraderStopOutOptions {
  accountId: string;
  account: StopOutCtraderAccount;
  marks: EquityMarks;
  saved: StopOutMark | undefined;
  /** Writes the marks file (temporary file, fsync, rename) with the equity marks and the stop-out's mark. */
  save: () => void;
  serial: Serial;
  diag: (line: Record<string, unknown>) => void;
  /** Runs each close and cancel of the stop-out (the trade events name the stop-out as their cause). */
  around?: <T>(run: () => Promise<T>) => Promise<T>;
  everyMs?: number;
}

/** What the broker's ProtoOAOrderDetailsRes says became of an order (the position from the order, else its deals). */
function fateOf(details: { order: Order; deals: Deal[] } | undefined): OrderFate {
  if (!details) return { state: 'unknown', detail: 'not found' };
  const { order, deals } = details;
  switch (order.orderStatus) {
    case OrderStatus.ORDER_STATUS_CANCELLED:
      return { state: 'cancelled' };
    case OrderStatus.ORDER_STATUS_EXPIRED:
      return { state: 'expired' };
    case OrderStatus.ORDER_STATUS_FILLED: {
      const position = order.positionId ?? deals[0]?.positionId;
      return { state: 'filled', ...(position !== undefined ? { position: String(position) } : {}) };
    }
    default: {
      // Still accepted (pending) with part of it filled, or rejected: either way not something the stop-out cancelled.
      const filled = deals.length > 0 ? `, ${deals.length} deal(s), position ${order.positionId ?? deals[0]!.positionId}` : '';
      return { state: 'unknown', detail: `order status ${order.orderStatus}${filled}` };
    }
  }
}

export function ctraderStopOut(opts: CtraderStopOutOptions): StopOutWatch {
  const acct = opts.account;
  const around = opts.around ?? (<T>(run: () => Promise<T>) => run());
  const open = async () => {
    const { positions, orders } = await acct.reconcile();
    return {
      positions: positions.map((p) => String(p.positionId)),
      orders: orders.map((o) => String(o.orderId)),
      symbolIds: positions.map((p) => p.tradeData.symbolId),
    };
  };
  const account: StopOutAccount = {
    read: async () => {
      const figures = await readAccount(acct, { timeoutMs: LOOK_TIMEOUT_MS });
      const { positions, orders, symbolIds } = await open();
      const quotes = [];
      for (const id of new Set(symbolIds)) {
        // Subscribes once per session; a symbol with no spot yet counts as stale (never trips on a guess).
        await acct.quote(id, LOOK_TIMEOUT_MS).catch(() => undefined);
        quotes.push({ symbol: acct.symbolById(id)?.name ?? `symbol ${id}`, quotedAtMs: acct.quoteReceivedAt(id) ?? 0 });
      }
      return { equity: figures.equity, currency: figures.currency, quotes, positions, orders };
    },
    open,
    close: (ticket) => around(() => closeWholePosition(acct, ticket)),
    cancel: (ticket) => around(() => cancelOrderById(acct, ticket)),
    orderFate: async (ticket) => fateOf(await acct.orderDetails(Number(ticket))),
  };
  const storage = { save: () => opts.save(), saveMarks: () => opts.save() };
  const diag = (line: Record<string, unknown>) => opts.diag({ ...line, accountId: opts.accountId });
  const runner = new StopOutRunner(account, storage, opts.marks, opts.saved, diag);
  const watch = new StopOutWatch({
    accountId: opts.accountId,
    runner,
    serial: opts.serial,
    clock: Date.now,
    diag: opts.diag,
    ...(opts.everyMs !== undefined ? { everyMs: opts.everyMs } : {}),
  });
  acct.onSpot(() => watch.priceMoved());
  return watch;
}
