import { ApplicationFailure, Context } from '@temporalio/activity';
import { attemptDelivery, type AttemptDeps } from '../src/callbacks/attempt';
import type { RedisTradeCallbackCap } from '../src/callbacks/trade-coalescing';

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
export function createCallbackActivities(deps: AttemptDeps | undefined, tradeCallbacks?: Pick<RedisTradeCallbackCap, 'coalesced'>) {
  return {
    /** An owner's minute of coalesced trade events (src/callbacks/trade-coalescing.ts), read once the minute ended. */
    async coalescedTradeEvents(owner: string, window: number) {
      if (!tradeCallbacks) throw ApplicationFailure.nonRetryable('callbacks are not configured on this worker', 'callbacks_not_configured');
      return tradeCallbacks.coalesced(owner, window);
    },
    async deliverCallback(req: DeliverCallbackRequest): Promise<'delivered' | 'gone'> {
      if (!deps) throw ApplicationFailure.nonRetryable('callbacks are not configured on this worker', 'callbacks_not_configured');
      const { attempt, log } = { attempt: Context.current().info.attempt, log: Context.current().log };
      const outcome = await attemptDelivery(deps, { ...req, attempt });
      // The operator's detail (the owner's attempt list has the coarse error only): ids and the error code, no URL.
      if (outcome.kind === 'refused' || outcome.kind === 'failed') {
        log.warn('callback attempt not delivered', {
          endpointId: req.endpointId,
          messageId: req.messageId,
          attempt,
          result: outcome.kind,
          detail: outcome.why,
        });
      }
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
