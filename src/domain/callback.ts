import type { AccountOutcome, EntryOutcome } from './outcome';

/**
 * What the owner's callback endpoints are pushed (docs/callbacks.md), in the Standard Webhooks payload shape
 * `{type, timestamp, data}`: an entry's outcome (`signal.outcome`, the poll's item), an exit's outcome
 * (`signal.exit_outcome`: close, cancel, modify, breakeven…, which the poll never reports), and what happened to a
 * trade at the broker (`position.*`, `order.*`, fed by the trade journal: docs/trades.md).
 */

const TRADE_CALLBACK_TYPES = [
  'position.opened',
  'position.modified',
  'position.closed',
  'order.placed',
  'order.triggered',
  'order.expired',
  'order.cancelled',
] as const;
type TradeCallbackType = (typeof TRADE_CALLBACK_TYPES)[number];

export const CALLBACK_EVENT_TYPES = ['signal.outcome', 'signal.exit_outcome', ...TRADE_CALLBACK_TYPES] as const;
export type CallbackEventType = (typeof CALLBACK_EVENT_TYPES)[number];

/**
 * What an endpoint that lists no types gets: the signals' outcomes, entries and exits. Trade events (every SL/TP hit,
 * every modify) are many and new: a receiver built for outcomes, or registered before they existed, gets them only
 * when it asks.
 */
const DEFAULT_CALLBACK_EVENT_TYPES: readonly CallbackEventType[] = ['signal.outcome', 'signal.exit_outcome'];

/** An endpoint that lists no types gets DEFAULT_CALLBACK_EVENT_TYPES; one that lists some gets only those. */
export function wantsEvent(endpoint: { eventTypes?: readonly string[] }, type: CallbackEventType): boolean {
  return (endpoint.eventTypes ?? DEFAULT_CALLBACK_EVENT_TYPES).includes(type);
}

export interface OutcomeEvent {
  type: 'signal.outcome';
  timestamp: string;
  /** The poll's account item, with the signal it belongs to. */
  data: { signalId: string; correlationId: string } & EntryOutcome;
}

/** The outcome of a command that opens nothing, so that whoever sent an exit learns what became of it. */
export interface ExitOutcomeEvent {
  type: 'signal.exit_outcome';
  timestamp: string;
  data: {
    signalId: string;
    correlationId: string;
    accountId: string;
    /** The signal's action: close, close_all, partial_close, cancel_pending, modify_sl, breakeven, … */
    action: string;
    outcome: 'done' | 'rejected';
    reason: string | null;
    occurredAt: string;
  };
}

type Side = 'buy' | 'sell';
type Stop = number | null;

/** The fields every trade event's data has: the trade (docs/trades.md), its account and the signal that opened it. */
interface TradeData {
  accountId: string;
  /** The journal's trade: the position ticket, or `order:<ticket>` while it is a pending order. */
  tradeId: string;
  symbol: string;
  /** The signal that opened the trade, when it was ours. */
  signalId?: string;
}

interface TradeCallbackData {
  'position.opened': TradeData & { side: Side; volume: number; price: number; sl?: Stop; tp?: Stop };
  'position.modified': TradeData & { sl: Stop; tp: Stop; cause: string };
  'position.closed': TradeData & {
    side: Side;
    /** Closed now; remainingVolume > 0 for a partial close. */
    volume: number;
    remainingVolume?: number;
    price: number;
    profit: number;
    commission: number;
    swap: number;
    cause: string;
  };
  'order.placed': TradeData & { side: Side; orderType: string; volume: number; price: number; sl?: Stop; tp?: Stop; expiresAt?: string | null };
  'order.triggered': TradeData & { positionTicket: string; price: number };
  'order.expired': TradeData;
  'order.cancelled': TradeData & { cause: string };
}

/**
 * One trade event for the owner's callbacks, as the journal hands it over (publishTradeEvent, src/callbacks/trade-events.ts).
 * `eventId` is the bridge's (unique per account, stable across resends): the delivery's id and webhook-id are made of
 * it, so an event recorded twice is delivered once.
 */
export type TradeCallbackEvent = {
  [T in TradeCallbackType]: { eventId: string; type: T; /** when the broker did it */ at: string; data: TradeCallbackData[T] };
}[TradeCallbackType];

/** What a receiver gets for a trade event: `{type, timestamp, data}` like every other type. */
export type TradeEventPayload = {
  [T in TradeCallbackType]: { type: T; timestamp: string; data: TradeCallbackData[T] };
}[TradeCallbackType];

/** A trade event kept for its minute's coalesced delivery: its own webhook-id and the endpoints that want its type. */
export interface CoalescedTradeEvent {
  webhookId: string;
  endpointIds: string[];
  event: TradeEventPayload;
}

/**
 * What a receiver gets for a minute's trade events past the owner's cap (docs/callbacks.md): the events its endpoint
 * wants, oldest first, each with the webhook-id it would have had alone; `omitted` counts those past the bound.
 */
export interface TradeEventsCoalescedPayload {
  type: 'trade.coalesced';
  timestamp: string;
  data: { from: string; to: string; events: (TradeEventPayload & { webhookId: string })[]; omitted: number };
}

/** What the coalesced delivery is given: whose minute, and when it ends (the delivery reads the events then). */
export interface CoalescedDeliveryInput {
  owner: string;
  window: number;
  from: string;
  endsAt: string;
}

type CallbackEvent = OutcomeEvent | ExitOutcomeEvent | TradeEventPayload;

/** What the delivery workflow is given: the endpoints chosen when the event happened, never a URL or a secret. */
export interface CallbackDeliveryInput {
  owner: string;
  endpointIds: string[];
  /** The webhook-id of every attempt to every endpoint: receivers deduplicate on it. */
  messageId: string;
  event: CallbackEvent;
}

/** The event of an entry's outcome; undefined for an outcome that is not an entry's (`done`). */
export function outcomeEvent(signalId: string, correlationId: string, outcome: AccountOutcome): OutcomeEvent | undefined {
  if (outcome.outcome !== 'filled' && outcome.outcome !== 'rejected') return undefined;
  return {
    type: 'signal.outcome',
    timestamp: outcome.occurredAt,
    data: {
      signalId,
      correlationId,
      accountId: outcome.accountId,
      outcome: outcome.outcome,
      ticket: outcome.ticket,
      reason: outcome.reason,
      occurredAt: outcome.occurredAt,
      ...(outcome.entry ? { entry: outcome.entry } : {}),
      ...(outcome.fill ? { fill: outcome.fill } : {}),
    },
  };
}

/** The event of an exit's outcome; undefined for an outcome that is not an exit's (`filled`). */
export function exitOutcomeEvent(signalId: string, correlationId: string, action: string, outcome: AccountOutcome): ExitOutcomeEvent | undefined {
  if (outcome.outcome !== 'done' && outcome.outcome !== 'rejected') return undefined;
  return {
    type: 'signal.exit_outcome',
    timestamp: outcome.occurredAt,
    data: {
      signalId,
      correlationId,
      accountId: outcome.accountId,
      action,
      outcome: outcome.outcome,
      reason: outcome.reason,
      occurredAt: outcome.occurredAt,
    },
  };
}
