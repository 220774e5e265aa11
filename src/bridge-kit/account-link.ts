import type { AccountFigures, StopOutDirective, StopOutEvent } from '../domain/bridge-protocol';
import type { Book, TradeEvent, TradesAnswer } from '../domain/trade-events';

/**
 * What one account's helpers beside the command loop (the stop-out watch, the trade sender) need of the service,
 * whichever way the account reaches it: its own calls (BridgeClient, one account) or its share of a multi-account
 * session's batched calls (SessionMember, src/bridge-kit/fleet-member.ts).
 */
export interface AccountLink {
  /** The stop-out as the service's last answer for this account armed it (protocol 1.4); undefined: disarmed. */
  readonly arming: StopOutDirective | undefined;
  /** Sends stop-out events with the figures; the eventIds the service acknowledged (recorded or duplicate). */
  sendEvents(events: StopOutEvent[], account?: AccountFigures): Promise<string[]>;
  /** Trade events and/or the book (protocol 1.5); any answer but the account's own 200 is an HttpStatusError. */
  sendTrades(body: { events: TradeEvent[]; book?: Book; account?: AccountFigures }): Promise<TradesAnswer>;
}
