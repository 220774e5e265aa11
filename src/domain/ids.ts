/** Workflow ids are business ids (pure: workflows import this too). */

export const SIGNAL_ID_PATTERN = /^sig_[A-Za-z0-9]{20,40}$/;

export const signalWorkflowId = (signalId: string): string => `signal/${signalId}`;

export const accountWorkflowId = (signalId: string, accountId: string): string => `signal/${signalId}/account/${accountId}`;

const COMMAND_ID = /^signal\/(sig_[A-Za-z0-9]{20,40})\/account\/([^/]+)$/;

/** The account a commandId (an account workflow id) belongs to; undefined when it is not one of ours. */
export function accountOfCommand(commandId: string): string | undefined {
  return COMMAND_ID.exec(commandId)?.[2];
}

/** The signal a commandId belongs to; undefined when it is not one of ours. */
export function signalOfCommand(commandId: string): string | undefined {
  return COMMAND_ID.exec(commandId)?.[1];
}

/** Memo key under which the signal workflow records one account's outcome (one key per account keeps history linear). */
export const OUTCOME_MEMO_PREFIX = 'outcome:';
/** An account whose workflow failed and awaits an operator's word (workflows/signal.ts). */
export const ATTENTION_MEMO_PREFIX = 'attention:';

/** The delivery of one account's outcome to its owner's callbacks; also its webhook-id. One per (signal, account). */
export const callbackWorkflowId = (signalId: string, accountId: string): string => `callback:${signalId}:${accountId}`;

/**
 * The delivery of one trade event to its owner's callbacks; also its webhook-id. The bridge's eventId is unique per
 * account and stable across resends, so one event is one delivery.
 */
export const tradeCallbackWorkflowId = (accountId: string, eventId: string): string => `callback:trade:${accountId}:${eventId}`;

/** The delivery of an owner's minute of coalesced trade events (minute = floor(ms / 60000)); also its webhook-id. */
export const coalescedTradeCallbackWorkflowId = (owner: string, window: number): string => `callback:trade-coalesced:${owner}:${window}`;
