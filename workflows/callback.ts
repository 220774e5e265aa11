import { ActivityFailure, log, proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallbackDeliveryInput, CoalescedDeliveryInput, TradeEventsCoalescedPayload } from '../src/domain/callback';
import { coalescedTradeCallbackWorkflowId } from '../src/domain/ids';

/**
 * The retry policy of one endpoint's delivery: 1 s, 3 s, 9 s, … then hourly, for 24 hours at most (about 30
 * attempts). Standard Webhooks receivers deduplicate on webhook-id, so a retry after a lost answer is harmless.
 */
const { deliverCallback } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '1s', backoffCoefficient: 3, maximumInterval: '1 hour', nonRetryableErrorTypes: ['callback_refused', 'callbacks_not_configured'] },
});

const { coalescedTradeEvents } = proxyLocalActivities<Activities>({ startToCloseTimeout: '10 seconds' });

export type EndpointDelivery = 'delivered' | 'gone' | 'failed';

/**
 * One account's outcome pushed to each of its owner's endpoints (docs/callbacks.md), all at once and each on its own
 * retries. Started by the signal workflow, which never waits for it: a receiver that is down for a day holds up
 * nothing but its own delivery. The URL and the secret are read by each attempt, never carried in history.
 */
export async function callbackWorkflow(input: CallbackDeliveryInput): Promise<Record<string, EndpointDelivery>> {
  return deliverToEach(input.owner, input.endpointIds, input.messageId, () => JSON.stringify(input.event));
}

/**
 * An owner's minute of trade events past the cap (src/callbacks/trade-coalescing.ts): waits for the minute's end,
 * reads the events kept for it, and pushes to each endpoint the ones it wants, in one `trade.coalesced` message.
 */
export async function coalescedTradeCallbackWorkflow(input: CoalescedDeliveryInput): Promise<Record<string, EndpointDelivery>> {
  const endsAtMs = Date.parse(input.endsAt);
  if (endsAtMs > Date.now()) await sleep(endsAtMs - Date.now());
  const { events, omitted } = await coalescedTradeEvents(input.owner, input.window);
  const endpointIds = [...new Set(events.flatMap((e) => e.endpointIds))].sort();
  const bodyFor = (endpointId: string) => {
    const mine = events.filter((e) => e.endpointIds.includes(endpointId)).map((e) => ({ webhookId: e.webhookId, ...e.event }));
    const payload: TradeEventsCoalescedPayload = {
      type: 'trade.coalesced',
      timestamp: input.endsAt,
      data: { from: input.from, to: input.endsAt, events: mine, omitted },
    };
    return JSON.stringify(payload);
  };
  return deliverToEach(input.owner, endpointIds, coalescedTradeCallbackWorkflowId(input.owner, input.window), bodyFor);
}

async function deliverToEach(owner: string, endpointIds: string[], messageId: string, bodyFor: (endpointId: string) => string) {
  const input = { owner, endpointIds, messageId };
  const results = await Promise.all(
    input.endpointIds.map((endpointId) =>
      deliverCallback({ owner: input.owner, endpointId, messageId: input.messageId, body: bodyFor(endpointId) }).catch((err: unknown): EndpointDelivery => {
        if (!(err instanceof ActivityFailure)) throw err;
        log.warn('callback not delivered', { endpointId, messageId: input.messageId, error: String(err.cause ?? err) });
        return 'failed';
      }),
    ),
  );
  return Object.fromEntries(input.endpointIds.map((id, i) => [id, results[i]!]));
}
