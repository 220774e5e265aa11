import { randomBytes } from 'node:crypto';
import type { Registry } from '../registry/registry';
import type { Throttle } from '../ratelimit/fairness';
import { isMarketEntry, requiresIdempotencyKey } from './actions';
import { Refusal } from './errors';
import type { SignalExecutions } from './executions';
import type { AccountSnapshot, AccountTarget, SignalInstruction, SignalWorkflowInput } from './outcome';
import { validateSignal, type ExternalSignal } from './schema';
import type { AccountSequencer } from './sequencer';
import { resolveTargets } from './targets';
import type { Account } from '../registry/model';
import { isTemporalBackpressure } from '../temporal/failures';
import { guarded } from './guarded';

/** The submit use case (both webhook URLs), from the parsed body to the answer; the HTTP layer only translates. */

export interface AcceptRequest {
  /** The per-account URL's account; undefined on the broadcast URL. */
  routeAccountId?: string;
  body: unknown;
  idempotencyKey?: string;
  correlationId: string;
}

export interface SignalAccepted {
  success: boolean;
  signalId: string;
  correlationId: string;
  accountsResolved: number;
}

export interface SignalNoTargets {
  success: false;
  accountsResolved: 0;
  correlationId: string;
}

export type AcceptResult =
  | { kind: 'accepted'; body: SignalAccepted; replayed: boolean }
  | { kind: 'partially_accepted'; body: SignalAccepted; replayed: boolean }
  | { kind: 'no_targets'; body: SignalNoTargets };

export interface AcceptDeps {
  registry: Registry;
  throttle: Throttle;
  sequencer: AccountSequencer;
  executions: SignalExecutions;
  settings: {
    idempotencyKeyMaxLength: number;
    defaultMaxSignalAgeMs: number;
    defaultCommandTtlMs: number;
    failClosedRetryAfterSeconds: number;
  };
  now?: () => number;
}

export function newSignalId(): string {
  return `sig_${randomBytes(16).toString('hex')}`;
}

export async function acceptSignal(deps: AcceptDeps, req: AcceptRequest): Promise<AcceptResult> {
  const now = deps.now ?? Date.now;
  const signal = checkSignal(req.body, now);
  checkIdempotencyKey(signal, req.idempotencyKey, deps.settings.idempotencyKeyMaxLength);

  const { grant, accounts } = await guarded(deps.settings.failClosedRetryAfterSeconds, async () => {
    const grant = await deps.registry.authenticateSecret(signal.secret);
    if (!grant) throw new Refusal('unauthorized', 'Invalid webhook secret or account');
    return { grant, accounts: await resolveTargets(deps.registry, grant, signal.action, req.routeAccountId) };
  });
  if (accounts.length === 0) {
    return { kind: 'no_targets', body: { success: false, accountsResolved: 0, correlationId: req.correlationId } };
  }

  const scope = req.routeAccountId !== undefined ? 'account_write' : 'broadcast';
  const throttled = await guarded(deps.settings.failClosedRetryAfterSeconds, () => deps.throttle.hit(scope, req.routeAccountId ?? grant.owner));
  if (!throttled.allowed) {
    throw new Refusal('throttled', scope === 'account_write' ? 'Too many signals for this account; slow down and retry later' : 'Too many broadcast signals for this owner; slow down and retry later', {
      scope,
      limit: throttled.limit,
      windowMs: throttled.windowMs,
    });
  }

  const acceptedAtMs = now();
  const seqs = await guarded(deps.settings.failClosedRetryAfterSeconds, () => deps.sequencer.next(accounts.map((a) => a.id)));
  const { secret: _secret, ...instruction } = signal;
  const targets = accounts.map((account, i) => toTarget(account, seqs[i]!, signal, acceptedAtMs, deps.settings));
  const input: Omit<SignalWorkflowInput, 'targets'> = {
    signalId: newSignalId(),
    correlationId: req.correlationId,
    acceptedAt: new Date(acceptedAtMs).toISOString(),
    signal: instruction as SignalInstruction,
  };
  return launchInRegions(deps, input, targets);
}

function checkSignal(body: unknown, now: () => number): ExternalSignal {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Refusal('invalid', 'Invalid signal: the body must be a JSON object', { details: [{ path: '', message: 'expected a JSON object' }] });
  }
  const secret = (body as { secret?: unknown }).secret;
  // Spec §5 rule 1: a missing or invalid secret is a 401, whatever else is wrong with the body.
  if (typeof secret !== 'string' || secret.length === 0) throw new Refusal('unauthorized', 'Missing or invalid webhook secret');
  const result = validateSignal(body, now);
  if (!result.ok) throw new Refusal('invalid', result.error, { details: result.details });
  return result.signal;
}

function checkIdempotencyKey(signal: ExternalSignal, key: string | undefined, maxLength: number): void {
  if (key !== undefined && (key.length === 0 || key.length > maxLength)) {
    throw new Refusal('invalid', `X-Idempotency-Key must be 1 to ${maxLength} characters`, {
      details: [{ path: 'X-Idempotency-Key', message: `must be 1 to ${maxLength} characters` }],
    });
  }
  if (key === undefined && requiresIdempotencyKey(signal)) {
    const what = signal.action === 'close' ? 'a filtered close' : signal.action;
    throw new Refusal('invalid', `X-Idempotency-Key is required for ${what}`, {
      details: [{ path: 'X-Idempotency-Key', message: `required for ${what}` }],
    });
  }
}

function toTarget(account: Account, seq: number, signal: ExternalSignal, acceptedAtMs: number, settings: AcceptDeps['settings']): AccountTarget {
  const maxAgeMs = isMarketEntry(signal.action) ? (account.risk.maxSignalAgeMs ?? settings.defaultMaxSignalAgeMs) : settings.defaultCommandTtlMs;
  const snapshot: AccountSnapshot = {
    id: account.id,
    owner: account.owner,
    platform: account.platform,
    region: account.region,
    bridgeVersion: account.bridgeVersion,
    risk: account.risk,
    symbols: account.symbols,
  };
  return { account: snapshot, seq, expiresAt: new Date(acceptedAtMs + maxAgeMs).toISOString() };
}

/** Starts the signal in every region that holds targets; all started is a 202, some a pollable 503. */
async function launchInRegions(deps: AcceptDeps, input: Omit<SignalWorkflowInput, 'targets'>, targets: AccountTarget[]): Promise<AcceptResult> {
  const byRegion = new Map<string, AccountTarget[]>();
  for (const t of targets) byRegion.set(t.account.region, [...(byRegion.get(t.account.region) ?? []), t]);
  const results = await Promise.allSettled([...byRegion].map(([region, regionTargets]) => deps.executions.launch(region, { ...input, targets: regionTargets })));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const body = { success: failed.length === 0, signalId: input.signalId, correlationId: input.correlationId, accountsResolved: targets.length };
  if (failed.length === 0) return { kind: 'accepted', body, replayed: false };
  if (failed.length < results.length) return { kind: 'partially_accepted', body, replayed: false };
  if (failed.every((f) => isTemporalBackpressure(f.reason))) throw new Refusal('backpressure', 'System under high load, retry later');
  throw failed[0]!.reason;
}
