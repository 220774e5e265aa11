import type { ExternalSignal } from '../domain/signal';
import { readStatus, waitForOutcome } from './status';
import { submitSignal } from './submit';
import type { ClientDeps } from './transport';
import type { OutcomeWait, SignalsClientOptions, SignalStatus, StatusOptions, SubmitOptions, SubmitResult, WaitOptions } from './types';

/**
 * A typed client of the External Signals API (spec §4): submit a signal with the spec's retry rules, read its outcome.
 * No dependency but the global fetch. Usage and the retry rules: docs/integrations/scripts.md.
 * The package's entry: the submit with its retries is in submit.ts, the status poll in status.ts, the errors in
 * errors.ts and the option and result types in types.ts.
 */

export { MAX_RETRY_SPAN_MS, REPLAY_WINDOW_MS, DEFAULT_SUBMIT_DEADLINE_MS, DEFAULT_MAX_ATTEMPTS } from './retry';
export type { ExternalSignal, ValidationDetail } from '../domain/signal';
export { IDEMPOTENCY_KEY_MAX_LENGTH } from './submit';
export { reportedCount } from './status';
export { StatusError, UnexpectedResponseError, type StatusErrorKind } from './errors';
export type {
  SignalsClientOptions,
  SubmitOptions,
  SubmitAccepted,
  SubmitPartiallyAccepted,
  SubmitNoTargets,
  SubmitRefused,
  SubmitGaveUp,
  SubmitResult,
  SignalStatus,
  SignalOutcome,
  StatusOptions,
  WaitOptions,
  OutcomeWait,
} from './types';

export class SignalsClient {
  private readonly deps: ClientDeps;

  constructor(options: SignalsClientOptions) {
    this.deps = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetchImpl: options.fetch ?? ((input, init) => fetch(input, init)),
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      clock: options.clock ?? Date.now,
      random: options.random ?? Math.random,
    };
  }

  /**
   * Submits a signal (spec §4.1 with `accountId`, §4.2 without). Validates it locally first with the service's own
   * schema (a refusal then carries the same message the service would give, with `local: true`), sends one
   * X-Idempotency-Key on every attempt, and retries only 500, 503 without a signalId, 429 and network errors.
   */
  async submit(signal: ExternalSignal, options: SubmitOptions = {}): Promise<SubmitResult> {
    return submitSignal(this.deps, signal, options);
  }

  /**
   * Reads the per-account outcomes of an opening signal (spec §4.3), limited to the accounts granted to the token.
   * One request; a failure throws a StatusError whose `kind` says what happened and whether a retry is safe.
   */
  async status(signalId: string, options: StatusOptions): Promise<SignalStatus> {
    return readStatus(this.deps, signalId, options);
  }

  /**
   * Polls until `expectAccounts` accounts have a terminal outcome or the deadline passes, and returns the last status
   * with `complete`. Transient failures (429, 500, 503, network) are polled through (a 429's Retry-After is honoured);
   * 401, 403 and unexpected answers throw at once; if no poll ever succeeded, the last error is thrown.
   * Only opening signals (entries) report outcomes: a close or modify never completes here.
   */
  async waitForOutcome(signalId: string, options: WaitOptions): Promise<OutcomeWait> {
    return waitForOutcome(this.deps, (timeoutMs) => this.status(signalId, { token: options.token, timeoutMs }), options);
  }
}
