import type { AccountOutcome } from './outcome';

/**
 * An account's outcome pushed to its owner's callback endpoints (docs/callbacks.md): the poll's account item, with
 * the signal it belongs to, in the Standard Webhooks payload shape `{type, timestamp, data}`.
 */
export interface OutcomeEvent {
  type: 'signal.outcome';
  timestamp: string;
  data: {
    signalId: string;
    correlationId: string;
    accountId: string;
    outcome: 'filled' | 'rejected';
    ticket: string | null;
    reason: string | null;
    occurredAt: string;
  };
}

/** What the delivery workflow is given: the endpoints snapshot at acceptance, never a URL or a secret. */
export interface CallbackDeliveryInput {
  owner: string;
  endpointIds: string[];
  /** The webhook-id of every attempt to every endpoint: receivers deduplicate on it. */
  messageId: string;
  event: OutcomeEvent;
}

/** The event of one account's outcome; undefined for outcomes the poll does not show (`done`). */
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
    },
  };
}
