import type { CallbackDeliveryInput, TradeCallbackEvent, TradeEventPayload } from '../domain/callback';
import { tradeCallbackWorkflowId } from '../domain/ids';
import type { EndpointStore } from './endpoints';

/**
 * Trade events (position.*, order.*) pushed to the owner's callback endpoints on the same delivery as the signal
 * outcomes (docs/callbacks.md): the trade journal (docs/trades.md) calls publishTradeEvent once it recorded an event.
 * Nothing here is on a signal's path: the journal's call to the bridge's trades endpoint is its only caller.
 */

export type Published = 'started' | 'duplicate' | 'no_endpoints';

/** Starts one delivery workflow (`callbackWorkflow`) with this id; `existed` when that id was started before. */
export interface CallbackDeliveryStarter {
  start(region: string, workflowId: string, input: CallbackDeliveryInput): Promise<'started' | 'existed'>;
}

export interface TradeEventPublisherDeps {
  endpoints: Pick<EndpointStore, 'enabledIds'>;
  /** The account as the registry holds it now: its owner and its execution region; null when unknown. */
  accountOf(accountId: string): Promise<{ owner: string; region: string } | null>;
  deliveries: CallbackDeliveryStarter;
}

/** A trade event that cannot be published: one of its owner's rules failed (never retried: the same call fails again). */
export class TradeEventNotPublished extends Error {
  constructor(readonly reason: 'unknown_account' | 'foreign_account') {
    super(reason === 'unknown_account' ? 'the trade event names an unknown account' : "the trade event's account belongs to another owner");
  }
}

export type PublishTradeEvent = (owner: string, event: TradeCallbackEvent) => Promise<Published>;

/**
 * `publishTradeEvent(owner, event)`: starts a delivery of the event to the owner's enabled endpoints that want its
 * type, with the workflow id `callback:trade:<accountId>:<eventId>` (also the webhook-id), so the same event
 * published twice (a resend, a journal retry) is delivered once. An owner with no such endpoint costs one Redis read
 * and no Temporal work. The account must be the owner's now: an event is never pushed to another owner's endpoints.
 * A failure to start (Temporal down) throws: the caller may publish again, and the workflow id keeps it once.
 */
export function tradeEventPublisher(deps: TradeEventPublisherDeps): PublishTradeEvent {
  return async (owner, event) => {
    const accountId = event.data.accountId;
    const account = await deps.accountOf(accountId);
    if (account === null) throw new TradeEventNotPublished('unknown_account');
    if (account.owner !== owner) throw new TradeEventNotPublished('foreign_account');
    const [endpointIds = []] = await deps.endpoints.enabledIds([owner], event.type);
    if (endpointIds.length === 0) return 'no_endpoints';
    const workflowId = tradeCallbackWorkflowId(accountId, event.eventId);
    const payload = { type: event.type, timestamp: event.at, data: event.data } as TradeEventPayload;
    const started = await deps.deliveries.start(account.region, workflowId, { owner, endpointIds, messageId: workflowId, event: payload });
    return started === 'started' ? 'started' : 'duplicate';
  };
}
