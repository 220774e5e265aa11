/** Workflow ids are business ids (pure: workflows import this too). */

export const SIGNAL_ID_PATTERN = /^sig_[A-Za-z0-9]{20,40}$/;

export const signalWorkflowId = (signalId: string): string => `signal/${signalId}`;

export const accountWorkflowId = (signalId: string, accountId: string): string => `signal/${signalId}/account/${accountId}`;

export const idempotencyWorkflowId = (digest: string): string => `idem/${digest}`;

/** Memo key under which the signal workflow records one account's outcome (one key per account keeps history linear). */
export const OUTCOME_MEMO_PREFIX = 'outcome:';
