import { randomUUID } from 'node:crypto';
import { SPEC_LIMITS } from '../domain/limits';
import { errorSchema, signalAcceptedSchema, signalNoTargetsSchema } from '../http/openapi-schemas';
import { validateSignal, type ExternalSignal } from '../domain/signal';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_SUBMIT_DEADLINE_MS, MAX_RETRY_SPAN_MS, retryAfterMs, retryWaitMs } from './retry';
import { UnexpectedResponseError } from './errors';
import { request, snippet, type Answer, type ClientDeps } from './transport';
import type { SubmitGaveUp, SubmitOptions, SubmitRefused, SubmitResult } from './types';

/** Spec §8. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = SPEC_LIMITS.idempotencyKeyMaxLength;

type Retryable = { status: 429 | 500 | 503 | null; error: string; retryAfterMs?: number; correlationId?: string };

/** SignalsClient.submit (its comment says what it does): the local check, then the attempts with their waits. */
export async function submitSignal(deps: ClientDeps, signal: ExternalSignal, options: SubmitOptions): Promise<SubmitResult> {
  const started = deps.clock();
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS));
  const budget = Math.max(0, Math.min(options.deadlineMs ?? DEFAULT_SUBMIT_DEADLINE_MS, MAX_RETRY_SPAN_MS));

  const bodyKey = (signal as { idempotencyKey?: unknown }).idempotencyKey;
  const idempotencyKey = options.idempotencyKey ?? (typeof bodyKey === 'string' ? bodyKey : randomUUID());
  const local = checkLocally(signal, options.idempotencyKey, idempotencyKey, deps.clock);
  if (local) return { kind: 'refused', ...local, local: true, idempotencyKey, attempts: 0 };

  const url = options.accountId === undefined ? `${deps.baseUrl}/webhook/custom` : `${deps.baseUrl}/webhook/custom/${encodeURIComponent(options.accountId)}`;
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
    const remaining = budget - (deps.clock() - started);
    if (remaining <= 0) return gaveUp('deadline', attempt - 1);
    const answer = await request(deps, url, {
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
      const done = settle(answer, idempotencyKey, attempt);
      if (done) return done;
      if (answer.status === 500) mayHaveRun = true;
      last = retryable(answer, deps.clock);
    }

    if (attempt >= maxAttempts) return gaveUp('max_attempts', attempt);
    const wait = retryWaitMs(attempt, last.retryAfterMs, deps.random);
    if (deps.clock() - started + wait >= budget) return gaveUp('deadline', attempt);
    await deps.sleep(wait);
  }
}

/** What the service itself would refuse before doing anything, with its own status and message (src/signals/accept.ts). */
function checkLocally(
  signal: unknown,
  optionKey: string | undefined,
  key: string,
  clock: () => number,
): Pick<SubmitRefused, 'status' | 'error' | 'details'> | undefined {
  if (typeof signal !== 'object' || signal === null || Array.isArray(signal)) {
    return { status: 400, error: 'Invalid signal: the body must be a JSON object', details: [{ path: '', message: 'expected a JSON object' }] };
  }
  const secret = (signal as { secret?: unknown }).secret;
  // Spec §5 rule 1: the service answers 401 for a missing secret whatever else is wrong.
  if (typeof secret !== 'string' || secret.length === 0) return { status: 401, error: 'Missing or invalid webhook secret' };
  const result = validateSignal(signal, clock);
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
function settle(answer: Extract<Answer, { type: 'response' }>, idempotencyKey: string, attempts: number): SubmitResult | undefined {
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

function retryable(answer: Extract<Answer, { type: 'response' }>, clock: () => number): Retryable {
  const body = (answer.body ?? {}) as Record<string, unknown>;
  const error = typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : `HTTP ${answer.status}`;
  const correlationId = (typeof body.correlationId === 'string' ? body.correlationId : undefined) ?? answer.headers.get('x-request-id') ?? undefined;
  const hint = retryAfterMs(answer.headers.get('retry-after'), answer.body, clock());
  return {
    status: answer.status as 429 | 500 | 503,
    error,
    ...(hint !== undefined ? { retryAfterMs: hint } : {}),
    ...(correlationId ? { correlationId } : {}),
  };
}

function hasSignalId(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof (body as { signalId?: unknown }).signalId === 'string';
}
