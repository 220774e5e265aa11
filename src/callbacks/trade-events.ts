import type { CallbackDeliveryInput, CoalescedDeliveryInput, TradeCallbackEvent, TradeEventPayload } from '../domain/callback';
import { tradeCallbackWorkflowId } from '../domain/ids';
import type { EndpointStore } from './endpoints';
import type { RedisTradeCallbackCap } from './trade-coalescing';

/**
 * Trade events (position.*, order.*) pushed to the owner's callback endpoints on the same delivery as the signal
 * outcomes (docs/callbacks.md): the trade journal (docs/trades.md) calls publishTradeEvent once it recorded an event.
 * Nothing here is on a signal's path: the journal's call to the bridge's trades endpoint is its only caller.
 */

/**
 * What became of one publish: `started`, `duplicate` (that event was published before: delivered once), `no_endpoints`
 * (the owner has no enabled endpoint for its type), or never publishable (`unknown_account`, `foreign_account`: the
 * same call would answer the same, so the caller must not retry it). A failure to start (Temporal down) throws
 * instead: that one is worth another try.
 */
type Published = 'started' | 'duplicate' | 'coalesced' | 'no_endpoints' | 'unknown_account' | 'foreign_account';

/** Starts one delivery workflow (`callbackWorkflow`) with this id; `existed` when that id was started before. */
export interface CallbackDeliveryStarter {
  start(region: string, workflowId: string, input: CallbackDeliveryInput): Promise<'started' | 'existed'>;
  /** Starts the delivery of an owner's minute of coalesced events, which waits for the minute's end; idempotent. */
  startCoalesced(region: string, input: CoalescedDeliveryInput): Promise<void>;
}

export interface TradeEventPublisherDeps {
  endpoints: Pick<EndpointStore, 'enabledIds'>;
  /** The account as the registry holds it now: its owner and its execution region; null when unknown. */
  accountOf(accountId: string): Promise<{ owner: string; region: string } | null>;
  deliveries: CallbackDeliveryStarter;
  /** The owner's trade callbacks a minute: past the cap, coalesced into one delivery (src/callbacks/trade-coalescing.ts). */
  cap: Pick<RedisTradeCallbackCap, 'take' | 'started'>;
  now?: () => number;
}

export type PublishTradeEvent = (owner: string, event: TradeCallbackEvent) => Promise<Published>;

/**
 * `publishTradeEvent(owner, event)`: starts a delivery of the event to the owner's enabled endpoints that want its
 * type, with the workflow id `callback:trade:<accountId>:<eventId>` (also the webhook-id), so the same event
 * published twice (a resend, a journal retry) is delivered once. An owner with no such endpoint costs one Redis read
 * and no Temporal work. The account must be the owner's now: an event is never pushed to another owner's endpoints.
 * Past the owner's minute of deliveries the event is `coalesced`: kept for the one delivery of the minute's rest.
 * A failure to start (Temporal down) throws: the caller publishes again later, and the workflow id keeps it once.
 */
export function tradeEventPublisher(deps: TradeEventPublisherDeps): PublishTradeEvent {
  return async (owner, event) => {
    const accountId = event.data.accountId;
    const account = await deps.accountOf(accountId);
    if (account === null) return 'unknown_account';
    if (account.owner !== owner) return 'foreign_account';
    const [endpointIds = []] = await deps.endpoints.enabledIds([owner], event.type);
    if (endpointIds.length === 0) return 'no_endpoints';
    const workflowId = tradeCallbackWorkflowId(accountId, event.eventId);
    const payload = { type: event.type, timestamp: event.at, data: event.data } as TradeEventPayload;
    const slot = await deps.cap.take(owner, (deps.now ?? Date.now)(), { webhookId: workflowId, endpointIds, event: payload });
    if (slot.kind === 'coalesce') {
      if (slot.start) {
        await deps.deliveries.startCoalesced(account.region, {
          owner,
          window: slot.window,
          from: new Date(slot.startsAtMs).toISOString(),
          endsAt: new Date(slot.endsAtMs).toISOString(),
        });
        await deps.cap.started(owner, slot.window);
      }
      return 'coalesced';
    }
    const started = await deps.deliveries.start(account.region, workflowId, { owner, endpointIds, messageId: workflowId, event: payload });
    return started === 'started' ? 'started' : 'duplicate';
  };
}
