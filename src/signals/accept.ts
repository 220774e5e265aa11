import { randomBytes } from 'node:crypto';
import { requiresIdempotencyKey } from '../domain/actions';
import { Refusal } from '../refusal';
import type { SignalInstruction } from '../domain/workflow-input';
import { validateSignal, type ExternalSignal } from '../domain/signal';
import { idempotencyDigest, requestHash, type AcceptanceRecord } from './idempotency';
import { resolveTargets } from './targets';
import { requireJsonObject } from './authenticate';
import { failClosedOnStoreError } from './fail-closed';
import { groupBy, launch } from './launch';
import { replay } from './replay';
import type { AcceptDeps, AcceptRequest, AcceptResult, LaunchBase, RoutingNote } from './acceptance';

/**
 * The submit use case (both webhook URLs), from the parsed body to the answer; the HTTP layer only translates. Its
 * ports and answers: src/signals/acceptance.ts; a new signal's start: launch.ts; the same key again: replay.ts.
 */
export async function acceptSignal(deps: AcceptDeps, req: AcceptRequest): Promise<AcceptResult> {
  const now = deps.now ?? Date.now;
  // The sender was authenticated before this (authenticateSender, ahead of the route limiter): spec §5 rule 1.
  const signal = checkSignal(req.body, now);
  const idempotencyKey = checkIdempotencyKey(signal, req.idempotencyKey, deps.settings.idempotencyKeyMaxLength);
  const { accounts, skipped } = await targetsOf(deps, req, signal);
  const routing: RoutingNote = { accounts: accounts.map((a) => a.id), skipped };
  if (accounts.length === 0) {
    return { kind: 'no_targets', body: { success: false, accountsResolved: 0, correlationId: req.correlationId }, routing };
  }
  await throttle(deps, req);

  const { secret: _secret, idempotencyKey: _key, ...request } = signal;
  // Every Temporal call of this request (a replay's look) shares one deadline: a caller like TradingView gives up after 3 s.
  const deadline = now() + deps.settings.temporalBudgetMs;
  const digest = idempotencyKey === undefined ? undefined : idempotencyDigest(req.grant.hash, req.routeAccountId, idempotencyKey);
  await admit(deps, digest);
  const base: LaunchBase = {
    signalId: newSignalId(),
    correlationId: req.correlationId,
    acceptedAt: new Date(now()).toISOString(),
    signal: instructionOf(request),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
  if (digest === undefined) return { ...(await launch(deps, base, accounts, deadline, false)), routing };

  const record: AcceptanceRecord = {
    ...pick(base, ['signalId', 'correlationId', 'acceptedAt']),
    accountsResolved: accounts.length,
    // The whole request, meta included: the same key with a different meta is a different request.
    bodyHash: requestHash(request, req.routeAccountId),
    regions: groupBy(
      accounts,
      (a) => a.region,
      (a) => a.id,
    ),
  };
  const claim = await failClosedOnStoreError(deps.settings.failClosedRetryAfterSeconds, () =>
    deps.windows.claim(digest, record, deps.settings.idempotencyWindowMs),
  );
  if (claim.first) return { ...(await launch(deps, base, accounts, deadline, false)), routing };
  return replay(deps, claim.record, record.bodyHash, base.signal, deadline);
}

function newSignalId(): string {
  return `sig_${randomBytes(16).toString('hex')}`;
}

/** The accounts the signal goes to (spec §4 step 7); a 412 for a bridge too old is also said on the account's page. */
async function targetsOf(deps: AcceptDeps, req: AcceptRequest, signal: ExternalSignal) {
  return failClosedOnStoreError(deps.settings.failClosedRetryAfterSeconds, () => resolveTargets(deps.registry, req.grant, signal, req.routeAccountId)).catch(
    (err: unknown) => {
      // Only after the account was found to be the sender's (an unknown or foreign one is the 401 before this).
      if (err instanceof Refusal && err.kind === 'bridge_too_old' && req.routeAccountId !== undefined) deps.onBridgeTooOld?.(req.routeAccountId, err.message);
      throw err;
    },
  );
}

/** The fairness throttle (spec §4 step 8): per account on the per-account URL, per owner on the broadcast URL. */
async function throttle(deps: AcceptDeps, req: AcceptRequest): Promise<void> {
  const scope = req.routeAccountId !== undefined ? 'account_write' : 'broadcast';
  const throttled = await failClosedOnStoreError(deps.settings.failClosedRetryAfterSeconds, () =>
    deps.throttle.hit(scope, req.routeAccountId ?? req.grant.owner),
  );
  if (throttled.allowed) return;
  throw new Refusal(
    'throttled',
    scope === 'account_write'
      ? 'Too many signals for this account; slow down and retry later'
      : 'Too many broadcast signals for this owner; slow down and retry later',
    { scope, limit: throttled.limit, windowMs: throttled.windowMs },
  );
}

/** The door: a new signal is refused when Redis cannot hold what a 202 promises; a replay, promised already, is not. */
async function admit(deps: AcceptDeps, digest: string | undefined): Promise<void> {
  const door = await deps.door.decide();
  if (door.admitted || (digest !== undefined && (await failClosedOnStoreError(deps.settings.failClosedRetryAfterSeconds, () => deps.windows.held(digest)))))
    return;
  throw new Refusal('backpressure', 'System under high load, retry later', { retryAfterSeconds: door.retryAfterSeconds });
}

/**
 * Temporal history keeps only what the workflows need: meta's origin (the memo shows it), never the rest of meta,
 * which is the caller's and may hold anything (an API key, 4 KB of notes).
 */
function instructionOf(request: Omit<ExternalSignal, 'secret' | 'idempotencyKey'>): SignalInstruction {
  const { meta, ...order } = request;
  return meta?.origin !== undefined ? { ...order, meta: { origin: meta.origin } } : order;
}

function pick<T, K extends keyof T>(obj: T, keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, obj[k]])) as Pick<T, K>;
}

function checkSignal(body: unknown, now: () => number): ExternalSignal {
  // The secret was checked before this (authenticateSender): spec §5 rule 1, a 401 whatever else is wrong.
  requireJsonObject(body);
  const result = validateSignal(body, now);
  if (!result.ok) throw new Refusal('invalid', result.error, { details: result.details });
  return result.signal;
}

/** The key from the header or the body field (TradingView cannot set headers); both given must agree. */
function checkIdempotencyKey(signal: ExternalSignal, header: string | undefined, maxLength: number): string | undefined {
  if (header !== undefined && signal.idempotencyKey !== undefined && header !== signal.idempotencyKey) {
    throw new Refusal('invalid', 'X-Idempotency-Key and the idempotencyKey field differ; send one, or the same in both', {
      details: [{ path: 'idempotencyKey', message: 'differs from the X-Idempotency-Key header' }],
    });
  }
  const key = header ?? signal.idempotencyKey;
  if (key !== undefined && (key.length === 0 || key.length > maxLength)) {
    throw new Refusal('invalid', `X-Idempotency-Key must be 1 to ${maxLength} characters`, {
      details: [{ path: 'X-Idempotency-Key', message: `must be 1 to ${maxLength} characters` }],
    });
  }
  if (key === undefined && requiresIdempotencyKey(signal)) {
    const what = signal.action === 'close' ? 'a filtered close' : signal.action;
    throw new Refusal('invalid', `X-Idempotency-Key (or the idempotencyKey field) is required for ${what}`, {
      details: [{ path: 'X-Idempotency-Key', message: `required for ${what}` }],
    });
  }
  return key;
}
