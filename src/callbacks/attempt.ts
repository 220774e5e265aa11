import type { AttemptLog, DeliveryAttempt } from './attempts';
import { postCallback, type PostSettings } from './delivery';
import type { EndpointStore } from './endpoints';
import { CallbackRefused, resolveCallbackTarget, type GuardSettings, type Resolve } from './guard';
import type { SecretBox } from './secret-box';
import { signCallback } from './signer';

/** What one attempt to one endpoint needs. `box` is undefined when no CALLBACK_SECRET_KEY_FILE is configured. */
export interface AttemptDeps {
  endpoints: EndpointStore;
  attempts: AttemptLog;
  box: SecretBox | undefined;
  guard: GuardSettings;
  post: PostSettings;
  resolve?: Resolve;
  now?: () => number;
  /** Told every attempt's result (the worker counts them for Prometheus). */
  onAttempt?: (result: 'delivered' | 'failed' | 'refused') => void;
}

export interface AttemptRequest {
  owner: string;
  endpointId: string;
  messageId: string;
  body: string;
  /** 1 for the first attempt (Temporal's activity attempt number). */
  attempt: number;
}

/**
 * delivered: a 2xx. gone: the endpoint was removed or disabled since (nothing to do). refused: its URL now resolves
 * to an address callbacks may not reach, or no key to sign with: retrying cannot help. failed: retry later. `why` is
 * the operator's detail (Temporal's history, the worker's log); the owner's attempt list gets the coarse error only.
 */
export type AttemptOutcome = { kind: 'delivered' } | { kind: 'gone' } | { kind: 'refused'; why: string } | { kind: 'failed'; why: string };

/** One signed POST to one endpoint, recorded in the owner's attempt log whatever it came to. */
export async function attemptDelivery(deps: AttemptDeps, req: AttemptRequest): Promise<AttemptOutcome> {
  const outcome = await attemptOnce(deps, req);
  if (outcome.kind !== 'gone') deps.onAttempt?.(outcome.kind);
  return outcome;
}

async function attemptOnce(deps: AttemptDeps, req: AttemptRequest): Promise<AttemptOutcome> {
  const now = deps.now ?? Date.now;
  const endpoint = await deps.endpoints.get(req.owner, req.endpointId);
  if (!endpoint || !endpoint.enabled) return { kind: 'gone' };
  const started = now();
  const record = (r: Pick<DeliveryAttempt, 'status' | 'error' | 'durationMs' | 'delivered'>) =>
    deps.attempts.record(req.owner, { at: new Date(started).toISOString(), endpointId: req.endpointId, messageId: req.messageId, attempt: req.attempt, ...r });

  if (!deps.box) {
    await record({ status: null, error: 'not_configured', durationMs: 0, delivered: false });
    return { kind: 'refused', why: 'no CALLBACK_SECRET_KEY_FILE' };
  }
  let target;
  try {
    target = await resolveCallbackTarget(endpoint.url, deps.guard, deps.resolve);
  } catch (err) {
    if (!(err instanceof CallbackRefused)) throw err;
    await record({ status: null, error: 'refused_by_guard', durationMs: now() - started, delivered: false });
    return { kind: 'refused', why: err.detail };
  }
  const secret = deps.box.open(endpoint.sealedSecret, secretBinding(req.owner, endpoint.id));
  const headers = signCallback(secret, req.messageId, new Date(now()), req.body);
  const { detail, ...result } = await postCallback(target, { ...headers }, req.body, deps.post);
  await record(result);
  if (result.delivered) return { kind: 'delivered' };
  return { kind: 'failed', why: result.status !== null ? `HTTP ${result.status}` : (detail ?? result.error ?? 'failed') };
}

/** What a sealed secret is bound to: its owner and endpoint (a sealed secret copied elsewhere does not open). */
export function secretBinding(owner: string, endpointId: string): string {
  return `${owner}\n${endpointId}`;
}
