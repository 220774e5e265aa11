import type {
  Book,
  BookOrder,
  BookPosition,
  MODIFY_CAUSES as MODIFY_CAUSES_ALL,
  ORDER_CANCEL_CAUSES,
  POSITION_CLOSE_CAUSES,
  TradeEvent,
} from '../domain/trade-events';

type CloseCause = (typeof POSITION_CLOSE_CAUSES)[number];
type ModifyCause = (typeof MODIFY_CAUSES_ALL)[number];
type CancelCause = (typeof ORDER_CANCEL_CAUSES)[number];
import { boundedBook } from '../bridge-kit/trade-wire';
import type { BrokerOp, PaperBroker } from './broker';

/**
 * The paper broker's operations as trade events (protocol 1.5, docs/paper-bridge.md "Trade events"), and its book.
 * Every event's id is the operation's ticket and deal number (counted in the broker's state, as a real broker
 * numbers its deals) and the event's kind: the same operation gives the same id however often it is seen again.
 */

const CLOSE_CAUSES: Partial<Record<BrokerOp['cause'], CloseCause>> = {
  command: 'command',
  sl: 'stop_loss',
  tp: 'take_profit',
  manual: 'manual',
  stop_out: 'stop_out',
  take_profit_level: 'take_profit_level',
  close_opposite: 'close_opposite',
};

/** A stop moved by the trade management says so; any other change of a position's SL/TP was a command's. */
const MODIFY_CAUSES: Partial<Record<BrokerOp['cause'], ModifyCause>> = { trailing_stop: 'trailing_stop', breakeven_trigger: 'breakeven_trigger' };

const CANCEL_CAUSES: Partial<Record<BrokerOp['cause'], CancelCause>> = {
  command: 'command',
  manual: 'manual',
  stop_out: 'stop_out',
  // The broker took it off for lack of margin when it triggered.
  no_money: 'broker',
};

/** The fields that have a value: the wire's optional fields are absent, never null. */
function present<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined)) as { [K in keyof T]?: Exclude<T[K], null | undefined> };
}

export function tradeEventsOf(ops: readonly BrokerOp[]): TradeEvent[] {
  return ops.flatMap(eventsOf);
}

function eventsOf(op: BrokerOp): TradeEvent[] {
  const id = (kind: string) => `${op.ticket}:${op.deal ?? op.time}:${kind}`;
  const base = (kind: string) => ({ eventId: id(kind), at: op.time, ticket: op.ticket, symbol: op.symbol });
  // Only what a command did carries its id; an entry's order keeps it when the market fills it.
  const byCommand = op.cause === 'command' && op.commandId ? { commandId: op.commandId } : {};
  const entryCommand = op.commandId ? { commandId: op.commandId } : {};
  const opened = (command: { commandId?: string }): TradeEvent & { type: 'position_opened' } => ({
    ...base('opened'),
    ...command,
    type: 'position_opened',
    side: op.side,
    volume: op.volume,
    price: op.price!,
    ...present({ sl: op.sl, tp: op.tp }),
  });
  switch (op.op) {
    case 'open':
      return [opened(byCommand)];
    case 'trigger':
      return [
        { ...base('triggered'), ...entryCommand, type: 'order_triggered', positionTicket: op.ticket, price: op.price! },
        { ...opened(entryCommand), fromOrder: op.ticket },
      ];
    case 'close':
    case 'partial_close':
      return [
        {
          ...base('closed'),
          ...byCommand,
          type: 'position_closed',
          volume: op.volume,
          remainingVolume: op.remainingVolume ?? 0,
          price: op.price!,
          profit: op.profit ?? 0,
          // The paper broker charges neither.
          commission: 0,
          swap: 0,
          cause: CLOSE_CAUSES[op.cause] ?? 'other',
        },
      ];
    case 'modify':
      return [
        {
          ...base('modified'),
          ...byCommand,
          type: 'position_modified',
          sl: op.sl ?? null,
          tp: op.tp ?? null,
          cause: MODIFY_CAUSES[op.cause] ?? 'command',
          ...present({ trailActiveAt: op.trailActiveAt }),
        },
      ];
    case 'place':
      return [
        {
          ...base('placed'),
          ...byCommand,
          type: 'order_placed',
          side: op.side,
          orderType: op.orderType ?? 'limit',
          volume: op.volume,
          price: op.price!,
          ...present({ stopLimitPrice: op.stopLimitPrice, sl: op.sl, tp: op.tp, expiresAt: op.expiry }),
        },
      ];
    case 'modify_order':
      return [
        {
          ...base('modified'),
          ...byCommand,
          type: 'order_modified',
          // The order as it is now, its expiry too (null: good till cancelled), so the journal's copy is this one.
          ...present({ price: op.price, orderType: op.orderType, stopLimitPrice: op.stopLimitPrice }),
          sl: op.sl ?? null,
          tp: op.tp ?? null,
          expiresAt: op.expiry ?? null,
          cause: 'command',
        },
      ];
    case 'stop_limit_trigger':
      // The stop-limit reached its trigger and is a limit order now (at its limit price): the broker changed it.
      return [{ ...base('modified'), type: 'order_modified', orderType: 'limit', stopLimitPrice: null, cause: 'broker' }];
    case 'cancel':
      return [{ ...base('cancelled'), ...byCommand, type: 'order_cancelled', cause: CANCEL_CAUSES[op.cause] ?? 'broker' }];
    case 'expire':
      return [{ ...base('expired'), type: 'order_expired' }];
  }
}

/** The paper broker's positions and pending orders now (profit floating at the current quotes). */
export function bookOf(broker: PaperBroker, nowMs: number): Book {
  const positions: BookPosition[] = broker.positions().map((p) => ({
    ticket: p.ticket,
    symbol: p.symbol,
    side: p.side,
    volume: p.volume,
    openPrice: p.openPrice,
    sl: p.sl,
    tp: p.tp,
    openedAt: p.openTime,
    profit: broker.profitOf(p.ticket) ?? 0,
    swap: 0,
    commission: 0,
  }));
  const orders: BookOrder[] = broker.orders().map((o) => ({
    ticket: o.ticket,
    symbol: o.symbol,
    side: o.side,
    orderType: o.type,
    volume: o.volume,
    price: o.price,
    stopLimitPrice: o.stopLimitPrice,
    sl: o.sl,
    tp: o.tp,
    placedAt: o.placedTime,
    expiresAt: o.expiry,
  }));
  return boundedBook(new Date(nowMs).toISOString(), positions, orders);
}
