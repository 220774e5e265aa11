import { signalStatusSchema } from '../http/openapi-schemas';
import { retryAfterMs } from './retry';
import { StatusError } from './errors';
import { request, snippet, type ClientDeps } from './transport';
import type { OutcomeWait, SignalStatus, StatusOptions, WaitOptions } from './types';

const DEFAULT_STATUS_TIMEOUT_MS = 10_000;

/** Accounts with a terminal outcome in a status. */
export function reportedCount(status: SignalStatus): number {
  return status.reported ?? status.accounts.length;
}

/** SignalsClient.status: one request, its answer mapped to a SignalStatus or a StatusError by cause. */
export async function readStatus(deps: ClientDeps, signalId: string, options: StatusOptions): Promise<SignalStatus> {
  const answer = await request(deps, `${deps.baseUrl}/v1/signals/${encodeURIComponent(signalId)}`, {
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
  const hint = retryAfterMs(answer.headers.get('retry-after'), answer.body, deps.clock());
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

/** SignalsClient.waitForOutcome; `poll` reads the status once (through the client) with the given per-request timeout. */
export async function waitForOutcome(deps: ClientDeps, poll: (timeoutMs: number) => Promise<SignalStatus>, options: WaitOptions): Promise<OutcomeWait> {
  const intervalMs = Math.max(0, options.intervalMs ?? 250);
  const until = deps.clock() + Math.max(0, options.deadlineMs ?? 30_000);
  let last: SignalStatus | undefined;
  let lastError: StatusError | undefined;
  let polls = 0;
  for (;;) {
    let wait = intervalMs;
    polls++;
    try {
      last = await poll(Math.max(1, Math.min(DEFAULT_STATUS_TIMEOUT_MS, until - deps.clock())));
      if (reportedCount(last) >= options.expectAccounts) return { complete: true, status: last, polls };
    } catch (err) {
      if (!(err instanceof StatusError) || !err.retryable) throw err;
      lastError = err;
      wait = Math.max(wait, (err.info.retryAfterSeconds ?? 0) * 1000);
    }
    const remaining = until - deps.clock();
    if (remaining <= 0) break;
    await deps.sleep(Math.min(wait, remaining));
  }
  if (last) return { complete: false, status: last, polls };
  throw lastError ?? new StatusError('network', 'no status read before the deadline');
}
