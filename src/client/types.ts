import type { z } from 'zod';
import type { signalStatusSchema } from '../http/openapi-schemas';
import type { ValidationDetail } from '../domain/signal';

/** The options, answers and outcomes of the typed client (src/client/index.ts): what a caller passes and gets back. */

export interface SignalsClientOptions {
  /** e.g. `https://signals.example.com` or `http://127.0.0.1:8080`; a trailing slash is fine. */
  baseUrl: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** How the client waits between retries and polls; defaults to a timer. Tests inject one that records the waits. */
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds since the epoch; defaults to Date.now. Deadlines and expiry checks use it. */
  clock?: () => number;
  /** Source of jitter in [0, 1); defaults to Math.random. */
  random?: () => number;
}

export interface SubmitOptions {
  /** Send to this one account (POST /webhook/custom/{accountId}); without it the signal fans out to every linked account. */
  accountId?: string;
  /** Reused on every retry. Defaults to the signal's `idempotencyKey` field, else a fresh random UUID. */
  idempotencyKey?: string;
  /** Attempts in all, the first included. Default 4. */
  maxAttempts?: number;
  /**
   * Time budget of the whole submit, retries included. Default 30 000 ms; values above 40 000 ms are capped so every
   * retry starts inside the 45-second replay window (after it the same key would run as a new action).
   */
  deadlineMs?: number;
}

interface Attempted {
  /** The X-Idempotency-Key every attempt of this submit carried. Reuse it (inside 45 s) to retry the same action. */
  idempotencyKey: string;
  /** HTTP requests made; 0 when the signal was refused locally. */
  attempts: number;
}

/** 202: accepted for asynchronous execution, not executed. Poll `signalId` for the outcome of an opening signal. */
export interface SubmitAccepted extends Attempted {
  kind: 'accepted';
  signalId: string;
  correlationId: string;
  accountsResolved: number;
  /** The server answered from its replay window: an earlier attempt with this key had been accepted; nothing new ran. */
  replayed: boolean;
}

/**
 * 503 with a signalId: at least one execution region failed to enqueue, the rest run. NOT retried: poll the signalId
 * first; a resend with the same key is deduplicated only inside the 45-second window.
 */
export interface SubmitPartiallyAccepted extends Attempted {
  kind: 'partially_accepted';
  signalId: string;
  correlationId: string;
  accountsResolved: number;
  replayed: boolean;
}

/** 200: authenticated, but no eligible account. Terminal: nothing runs, nothing to poll. */
export interface SubmitNoTargets extends Attempted {
  kind: 'no_targets';
  correlationId: string;
}

/**
 * The service said no (400, 401, 403, 409, 412, 413, or any status the spec does not call safe to retry). Never
 * retried: resending the same request gets the same answer. `local` when the client caught it before sending.
 */
export interface SubmitRefused extends Attempted {
  kind: 'refused';
  status: number;
  error: string;
  details?: ValidationDetail[];
  correlationId?: string;
  local: boolean;
}

/**
 * Every allowed attempt ended in 429, 500, 503 without a signalId, or a network error, or the next wait would cross the
 * deadline. `mayHaveRun` is true when an attempt may have reached the service with no definite "not accepted" answer
 * (a 500, or a network error other than a refused/unresolvable connection): resend only with the same
 * idempotencyKey, inside 45 s of the first attempt.
 */
export interface SubmitGaveUp extends Attempted {
  kind: 'gave_up';
  reason: 'max_attempts' | 'deadline';
  /** Status of the last attempt; null for a network error. */
  lastStatus: 429 | 500 | 503 | null;
  error: string;
  retryAfterSeconds?: number;
  correlationId?: string;
  mayHaveRun: boolean;
}

export type SubmitResult = SubmitAccepted | SubmitPartiallyAccepted | SubmitNoTargets | SubmitRefused | SubmitGaveUp;

/** Spec §2.4. `reported` is optional in the spec; `reportedCount()` falls back to the accounts listed. */
export type SignalStatus = z.infer<typeof signalStatusSchema>;
export type SignalOutcome = SignalStatus['accounts'][number];

export interface StatusOptions {
  /** API token (`Authorization: Bearer`), created in the dashboard. */
  token: string;
  /** Per-request timeout; default 10 000 ms. */
  timeoutMs?: number;
}

export interface WaitOptions {
  token: string;
  /** Wait until this many accounts have a terminal outcome: the submit's accountsResolved. */
  expectAccounts: number;
  /** Default 30 000 ms. */
  deadlineMs?: number;
  /** Pause between polls; default 250 ms (longer when a 429 asks for it). */
  intervalMs?: number;
}

export interface OutcomeWait {
  /** `reported >= expectAccounts` was seen before the deadline. */
  complete: boolean;
  /** The last status read. */
  status: SignalStatus;
  polls: number;
}
