import { randomUUID } from 'node:crypto';
import { SPEC_LIMITS } from '../domain/limits';
import type { z } from 'zod';
import { errorSchema, signalAcceptedSchema, signalNoTargetsSchema, signalStatusSchema } from '../http/openapi';
import { validateSignal, type ExternalSignal, type ValidationDetail } from '../domain/signal';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_SUBMIT_DEADLINE_MS, MAX_RETRY_SPAN_MS, retryAfterMs, retryWaitMs } from './retry';

/**
 * A typed client of the External Signals API (spec §4): submit a signal with the spec's retry rules, read its outcome.
 * No dependency but the global fetch. Usage and the retry rules: docs/integrations/scripts.md.
 */

export { MAX_RETRY_SPAN_MS, REPLAY_WINDOW_MS, DEFAULT_SUBMIT_DEADLINE_MS, DEFAULT_MAX_ATTEMPTS } from './retry';
export type { ExternalSignal, ValidationDetail } from '../domain/signal';

/** Spec §8. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = SPEC_LIMITS.idempotencyKeyMaxLength;
const DEFAULT_STATUS_TIMEOUT_MS = 10_000;

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

export type StatusErrorKind =
  | 'unauthorized' // 401: missing or invalid API token
  | 'token_suspended' // 403: see suspendedUntil
  | 'rate_limited' // 429: slow down (retryable)
  | 'server_error' // 500: safe to retry
  | 'unavailable' // 503: fail-closed limiter store (retryable)
  | 'network' // no HTTP answer (retryable)
  | 'unexpected'; // any other status or an unreadable body

const RETRYABLE_STATUS_ERRORS: ReadonlySet<StatusErrorKind> = new Set(['rate_limited', 'server_error', 'unavailable', 'network']);

/** A failed status poll (spec §4.3), typed by cause. */
export class StatusError extends Error {
  override readonly name = 'StatusError';
  constructor(
    readonly kind: StatusErrorKind,
    message: string,
    readonly info: {
      httpStatus?: number;
      suspendedUntil?: string;
      retryAfterSeconds?: number;
      scope?: string;
      limit?: number;
      windowMs?: number;
      correlationId?: string;
    } = {},
  ) {
    super(message);
  }

  /** The spec calls a retry safe (possibly after a wait: `info.retryAfterSeconds`). */
  get retryable(): boolean {
    return RETRYABLE_STATUS_ERRORS.has(this.kind);
  }
}

/** The service answered something the contract does not allow (e.g. a 202 without a signalId). */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError';
  constructor(
    message: string,
    readonly info: { httpStatus: number; idempotencyKey?: string; correlationId?: string },
  ) {
    super(message);
  }
}

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

/** Accounts with a terminal outcome in a status. */
export function reportedCount(status: SignalStatus): number {
  return status.reported ?? status.accounts.length;
}

type Answer =
  | { type: 'response'; status: number; headers: Headers; body: unknown; text: string }
  | { type: 'network'; error: string; timedOut: boolean; neverSent: boolean };

type Retryable = { status: 429 | 500 | 503 | null; error: string; retryAfterMs?: number; correlationId?: string };

export class SignalsClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly clock: () => number;
  private readonly random: () => number;

  constructor(options: SignalsClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.clock = options.clock ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /**
   * Submits a signal (spec §4.1 with `accountId`, §4.2 without). Validates it locally first with the service's own
   * schema (a refusal then carries the same message the service would give, with `local: true`), sends one
   * X-Idempotency-Key on every attempt, and retries only 500, 503 without a signalId, 429 and network errors.
   */
  async submit(signal: ExternalSignal, options: SubmitOptions = {}): Promise<SubmitResult> {
    const started = this.clock();
    const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS));
    const budget = Math.max(0, Math.min(options.deadlineMs ?? DEFAULT_SUBMIT_DEADLINE_MS, MAX_RETRY_SPAN_MS));

    const bodyKey = (signal as { idempotencyKey?: unknown }).idempotencyKey;
    const idempotencyKey = options.idempotencyKey ?? (typeof bodyKey === 'string' ? bodyKey : randomUUID());
    const local = this.checkLocally(signal, options.idempotencyKey, idempotencyKey);
    if (local) return { kind: 'refused', ...local, local: true, idempotencyKey, attempts: 0 };

    const url = options.accountId === undefined ? `${this.baseUrl}/webhook/custom` : `${this.baseUrl}/webhook/custom/${encodeURIComponent(options.accountId)}`;
    const body = JSON.stringify(signal);
    let mayHaveRun = false;
    let last: Retryable | undefined;
    const gaveUp = (reason: SubmitGaveUp['reason'], attempts: number): SubmitGaveUp => ({
      kind: 'gave_up',
      reason,
      lastStatus: last?.status ?? null,
      error: last?.error ?? 'deadline reached before the first attempt',
      ...(last?.retryAfterMs !== undefined ? { retryAfterSeconds: Math.ceil(last.retryAfterMs / 1000) } : {}),
      ...(last?.correlationId !== undefined ? { correlationId: last.correlationId } : {}),
      mayHaveRun,
      idempotencyKey,
      attempts,
    });

    for (let attempt = 1; ; attempt++) {
      const remaining = budget - (this.clock() - started);
      if (remaining <= 0) return gaveUp('deadline', attempt - 1);
      const answer = await this.request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-idempotency-key': idempotencyKey },
        body,
        timeoutMs: remaining,
      });

      if (answer.type === 'network') {
        // Unless the connection was never made, the request may have reached the service: only the same key makes a
        // resend safe.
        if (!answer.neverSent) mayHaveRun = true;
        last = { status: null, error: answer.timedOut ? 'no answer before the deadline' : `network error: ${answer.error}` };
        if (answer.timedOut) return gaveUp('deadline', attempt);
      } else {
        const done = this.settle(answer, idempotencyKey, attempt);
        if (done) return done;
        if (answer.status === 500) mayHaveRun = true;
        last = this.retryable(answer);
      }

      if (attempt >= maxAttempts) return gaveUp('max_attempts', attempt);
      const wait = retryWaitMs(attempt, last.retryAfterMs, this.random);
      if (this.clock() - started + wait >= budget) return gaveUp('deadline', attempt);
      await this.sleep(wait);
    }
  }

  /**
   * Reads the per-account outcomes of an opening signal (spec §4.3), limited to the accounts granted to the token.
   * One request; a failure throws a StatusError whose `kind` says what happened and whether a retry is safe.
   */
  async status(signalId: string, options: StatusOptions): Promise<SignalStatus> {
    const answer = await this.request(`${this.baseUrl}/v1/signals/${encodeURIComponent(signalId)}`, {
      method: 'GET',
      headers: { accept: 'application/json', authorization: `Bearer ${options.token}` },
      timeoutMs: options.timeoutMs ?? DEFAULT_STATUS_TIMEOUT_MS,
    });
    if (answer.type === 'network') {
      throw new StatusError('network', answer.timedOut ? 'the status poll got no answer in time' : `network error: ${answer.error}`);
    }
    const body = (answer.body ?? {}) as Record<string, unknown>;
    const correlationId = answer.headers.get('x-request-id') ?? undefined;
    const text = (fallback: string) => (typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : fallback);
    const hint = retryAfterMs(answer.headers.get('retry-after'), answer.body, this.clock());
    const retryAfterSeconds = hint === undefined ? undefined : Math.ceil(hint / 1000);
    const common = { httpStatus: answer.status, ...(correlationId ? { correlationId } : {}) };
    switch (answer.status) {
      case 200: {
        const parsed = signalStatusSchema.safeParse(answer.body);
        if (parsed.success) return parsed.data;
        throw new StatusError('unexpected', `the status poll answered 200 with a body that is not a SignalStatus: ${snippet(answer.text)}`, common);
      }
      case 401:
        throw new StatusError('unauthorized', text('Missing or invalid API token'), common);
      case 403:
        if (body.error === 'token_suspended') {
          const suspendedUntil = typeof body.suspendedUntil === 'string' ? body.suspendedUntil : undefined;
          throw new StatusError('token_suspended', `the API token is suspended${suspendedUntil ? ` until ${suspendedUntil}` : ''}`, {
            ...common,
            ...(suspendedUntil ? { suspendedUntil } : {}),
          });
        }
        break;
      case 429:
        throw new StatusError('rate_limited', text('Rate limit exceeded'), {
          ...common,
          ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
          ...(typeof body.scope === 'string' ? { scope: body.scope } : {}),
          ...(typeof body.limit === 'number' ? { limit: body.limit } : {}),
          ...(typeof body.windowMs === 'number' ? { windowMs: body.windowMs } : {}),
        });
      case 500:
        throw new StatusError('server_error', text('Internal error reading outcomes; safe to retry'), common);
      case 503:
        throw new StatusError('unavailable', text('service_unavailable'), { ...common, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) });
    }
    throw new StatusError('unexpected', `the status poll answered HTTP ${answer.status}: ${snippet(answer.text)}`, common);
  }

  /**
   * Polls until `expectAccounts` accounts have a terminal outcome or the deadline passes, and returns the last status
   * with `complete`. Transient failures (429, 500, 503, network) are polled through (a 429's Retry-After is honoured);
   * 401, 403 and unexpected answers throw at once; if no poll ever succeeded, the last error is thrown.
   * Only opening signals (entries) report outcomes: a close or modify never completes here.
   */
  async waitForOutcome(signalId: string, options: WaitOptions): Promise<OutcomeWait> {
    const intervalMs = Math.max(0, options.intervalMs ?? 250);
    const until = this.clock() + Math.max(0, options.deadlineMs ?? 30_000);
    let last: SignalStatus | undefined;
    let lastError: StatusError | undefined;
    let polls = 0;
    for (;;) {
      let wait = intervalMs;
      polls++;
      try {
        last = await this.status(signalId, { token: options.token, timeoutMs: Math.max(1, Math.min(DEFAULT_STATUS_TIMEOUT_MS, until - this.clock())) });
        if (reportedCount(last) >= options.expectAccounts) return { complete: true, status: last, polls };
      } catch (err) {
        if (!(err instanceof StatusError) || !err.retryable) throw err;
        lastError = err;
        wait = Math.max(wait, (err.info.retryAfterSeconds ?? 0) * 1000);
      }
      const remaining = until - this.clock();
      if (remaining <= 0) break;
      await this.sleep(Math.min(wait, remaining));
    }
    if (last) return { complete: false, status: last, polls };
    throw lastError ?? new StatusError('network', 'no status read before the deadline');
  }

  // -------------------------------------------------------------------------------------------------------------

  /** What the service itself would refuse before doing anything, with its own status and message (src/signals/accept.ts). */
  private checkLocally(signal: unknown, optionKey: string | undefined, key: string): Pick<SubmitRefused, 'status' | 'error' | 'details'> | undefined {
    if (typeof signal !== 'object' || signal === null || Array.isArray(signal)) {
      return { status: 400, error: 'Invalid signal: the body must be a JSON object', details: [{ path: '', message: 'expected a JSON object' }] };
    }
    const secret = (signal as { secret?: unknown }).secret;
    // Spec §5 rule 1: the service answers 401 for a missing secret whatever else is wrong.
    if (typeof secret !== 'string' || secret.length === 0) return { status: 401, error: 'Missing or invalid webhook secret' };
    const result = validateSignal(signal, this.clock);
    if (!result.ok) return { status: 400, error: result.error, details: result.details };
    const bodyKey = result.signal.idempotencyKey;
    if (optionKey !== undefined && bodyKey !== undefined && optionKey !== bodyKey) {
      return {
        status: 400,
        error: 'X-Idempotency-Key and the idempotencyKey field differ; send one, or the same in both',
        details: [{ path: 'idempotencyKey', message: 'differs from the X-Idempotency-Key header' }],
      };
    }
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      return {
        status: 400,
        error: `X-Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
        details: [{ path: 'X-Idempotency-Key', message: `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters` }],
      };
    }
    return undefined;
  }

  /** A final answer of one submit attempt, or undefined when the answer is retryable. */
  private settle(answer: Extract<Answer, { type: 'response' }>, idempotencyKey: string, attempts: number): SubmitResult | undefined {
    const headerId = answer.headers.get('x-request-id') ?? undefined;
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    const unexpected = (what: string) =>
      new UnexpectedResponseError(`the service answered HTTP ${answer.status} ${what}: ${snippet(answer.text)}`, {
        httpStatus: answer.status,
        idempotencyKey,
        ...(headerId ? { correlationId: headerId } : {}),
      });

    if (answer.status === 202 || (answer.status === 503 && hasSignalId(answer.body))) {
      const parsed = signalAcceptedSchema.safeParse(answer.body);
      if (!parsed.success) throw unexpected('with a body that is not a SignalAccepted');
      const { signalId, correlationId, accountsResolved } = parsed.data;
      const kind = answer.status === 202 ? 'accepted' : 'partially_accepted';
      return { kind, signalId, correlationId, accountsResolved, replayed, idempotencyKey, attempts };
    }
    if (answer.status === 200) {
      const parsed = signalNoTargetsSchema.safeParse(answer.body);
      if (!parsed.success) throw unexpected('with a body that is not a SignalNoTargets');
      return { kind: 'no_targets', correlationId: parsed.data.correlationId, idempotencyKey, attempts };
    }
    if (answer.status === 429 || answer.status === 500 || answer.status === 503) return undefined;

    // 400, 401, 403, 409, 412, 413 and anything the spec does not call retryable: the same request gets the same answer.
    const parsed = errorSchema.safeParse(answer.body);
    const correlationId = (parsed.success ? parsed.data.correlationId : undefined) ?? headerId;
    return {
      kind: 'refused',
      status: answer.status,
      error: parsed.success ? parsed.data.error : `HTTP ${answer.status}${answer.text ? `: ${snippet(answer.text)}` : ''}`,
      ...(parsed.success && parsed.data.details ? { details: parsed.data.details } : {}),
      ...(correlationId ? { correlationId } : {}),
      local: false,
      idempotencyKey,
      attempts,
    };
  }

  private retryable(answer: Extract<Answer, { type: 'response' }>): Retryable {
    const body = (answer.body ?? {}) as Record<string, unknown>;
    const error = typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : `HTTP ${answer.status}`;
    const correlationId = (typeof body.correlationId === 'string' ? body.correlationId : undefined) ?? answer.headers.get('x-request-id') ?? undefined;
    const hint = retryAfterMs(answer.headers.get('retry-after'), answer.body, this.clock());
    return {
      status: answer.status as 429 | 500 | 503,
      error,
      ...(hint !== undefined ? { retryAfterMs: hint } : {}),
      ...(correlationId ? { correlationId } : {}),
    };
  }

  private async request(url: string, init: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number }): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), init.timeoutMs);
    try {
      const res = await this.fetchImpl(url, { method: init.method, headers: init.headers, body: init.body, signal: controller.signal });
      const text = await res.text();
      let body: unknown;
      try {
        body = text ? (JSON.parse(text) as unknown) : undefined;
      } catch {
        body = undefined;
      }
      return { type: 'response', status: res.status, headers: res.headers, body, text };
    } catch (err) {
      return { type: 'network', error: describeNetworkError(err), timedOut: controller.signal.aborted, neverSent: connectionNeverMade(err) };
    } finally {
      clearTimeout(timer);
    }
  }
}

function hasSignalId(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof (body as { signalId?: unknown }).signalId === 'string';
}

function describeNetworkError(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
}

/** Errors of the connect phase: the request certainly never reached the service. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

function connectionNeverMade(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return (cause?.code !== undefined && CONNECT_FAILURES.has(cause.code)) || cause?.message === 'bad port';
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat || '(empty body)';
}
