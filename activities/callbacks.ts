import { ApplicationFailure, Context } from '@temporalio/activity';
import { attemptDelivery, type AttemptDeps } from '../src/callbacks/attempt';

export interface DeliverCallbackRequest {
  owner: string;
  endpointId: string;
  messageId: string;
  body: string;
}

/**
 * One attempt to push an outcome to one endpoint. A failure throws, and Temporal retries with the delivery
 * workflow's backoff; a refusal (the URL now reaches a forbidden address, no key) fails for good. Error messages go
 * into Temporal's history, so they say what happened and nothing else (no URL, no secret).
 */
export function createCallbackActivities(deps: AttemptDeps | undefined) {
  return {
    async deliverCallback(req: DeliverCallbackRequest): Promise<'delivered' | 'gone'> {
      if (!deps) throw ApplicationFailure.nonRetryable('callbacks are not configured on this worker', 'callbacks_not_configured');
      const outcome = await attemptDelivery(deps, { ...req, attempt: Context.current().info.attempt });
      switch (outcome.kind) {
        case 'delivered':
        case 'gone':
          return outcome.kind;
        case 'refused':
          throw ApplicationFailure.nonRetryable(`refused: ${outcome.why}`, 'callback_refused');
        case 'failed':
          throw ApplicationFailure.retryable(outcome.why, 'callback_failed');
      }
    },
  };
}
