import { ActivityFailure, log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallbackDeliveryInput } from '../src/domain/callback';

/**
 * The retry policy of one endpoint's delivery: 1 s, 3 s, 9 s, … then hourly, for 24 hours at most (about 30
 * attempts). Standard Webhooks receivers deduplicate on webhook-id, so a retry after a lost answer is harmless.
 */
const { deliverCallback } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '1s', backoffCoefficient: 3, maximumInterval: '1 hour', nonRetryableErrorTypes: ['callback_refused', 'callbacks_not_configured'] },
});

export type EndpointDelivery = 'delivered' | 'gone' | 'failed';

/**
 * One account's outcome pushed to each of its owner's endpoints (docs/callbacks.md), all at once and each on its own
 * retries. Started by the signal workflow, which never waits for it: a receiver that is down for a day holds up
 * nothing but its own delivery. The URL and the secret are read by each attempt, never carried in history.
 */
export async function callbackWorkflow(input: CallbackDeliveryInput): Promise<Record<string, EndpointDelivery>> {
  const body = JSON.stringify(input.event);
  const results = await Promise.all(
    input.endpointIds.map((endpointId) =>
      deliverCallback({ owner: input.owner, endpointId, messageId: input.messageId, body }).catch((err: unknown): EndpointDelivery => {
        if (!(err instanceof ActivityFailure)) throw err;
        log.warn('callback not delivered', { endpointId, messageId: input.messageId, error: String(err.cause ?? err) });
        return 'failed';
      }),
    ),
  );
  return Object.fromEntries(input.endpointIds.map((id, i) => [id, results[i]!]));
}
