import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from '../registry/registry';
import type { Throttle } from '../ratelimit/fairness';
import { isMarketEntry, isOpening, requiresIdempotencyKey } from '../domain/actions';
import { mapSymbol } from '../risk/symbols';
import type { VolumeRules } from '../domain/volume-rules';
import { ExecutionsUnavailable, LaunchFailure, Refusal } from '../refusal';
import type { SignalExecutions } from './executions';
import type { AccountSnapshot, AccountTarget, SignalInstruction, SignalWorkflowInput, SkippedAccount } from '../domain/workflow-input';
import { validateSignal, type ExternalSignal } from '../domain/signal';
import type { AccountSequencer, MarkRetime } from '../bridge/ordering';
import { idempotencyDigest, requestHash, type AcceptanceRecord, type IdempotencyWindows } from './idempotency';
import { resolveTargets } from './targets';
import type { Account, SecretGrant } from '../domain/account';
import { requireJsonObject } from './authenticate';
import { guarded } from './guarded';
import type { AdmissionDecision, AdmissionLedger } from './admission';
import type { EndpointStore } from '../callbacks/endpoints';
import { dispatchStarted, type AcceptanceDispatch } from './dispatch';

/** The submit use case (both webhook URLs), from the parsed body to the answer; the HTTP layer only translates. */

export interface AcceptRequest {
  /** The per-account URL's account; undefined on the broadcast URL. */
  routeAccountId?: string;
  /** The sender, already authenticated for this route (authenticateSender, before the route limiter). */
  grant: SecretGrant;
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

/** Where a new signal was routed, for the ingress's log line (absent on a replay). */
interface RoutingNote {
  accounts: string[];
  skipped: SkippedAccount[];
}

export type AcceptResult =
  | { kind: 'accepted'; body: SignalAccepted; replayed: boolean; routing?: RoutingNote }
  | { kind: 'partially_accepted'; body: SignalAccepted; replayed: boolean; routing?: RoutingNote }
  | { kind: 'no_targets'; body: SignalNoTargets; routing?: RoutingNote };

export interface AcceptDeps {
  registry: Registry;
  throttle: Throttle;
  sequencer: AccountSequencer;
  executions: SignalExecutions;
  windows: IdempotencyWindows;
  /** Admission control: whether the execution path can take one more signal in time, and its ledger. */
  admission: { decide(): Promise<AdmissionDecision>; ledger: AdmissionLedger };
  /** The owners' enabled callback endpoints (src/callbacks/endpoints.ts) that want this signal's outcome, snapshotted into its input. */
  callbacks?: Pick<EndpointStore, 'enabledIds'>;
  /** Dispatch at acceptance (DISPATCH_AT_ACCEPTANCE): the ingress queues each started signal's commands itself. */
  dispatch?: AcceptanceDispatch;
  logger?: Logger;
  onStartError?: (region: string, err: unknown) => void;
  /** A signal for one account was refused 412, its bridge too old for the action: the account's page says so. */
  onBridgeTooOld?: (accountId: string, message: string) => void;
  settings: {
    idempotencyKeyMaxLength: number;
    idempotencyWindowMs: number;
    /** The time all Temporal calls of one submission may take together. */
    temporalBudgetMs: number;
    defaultMaxSignalAgeMs: number;
    defaultCommandTtlMs: number;
    /** The oldest a quote behind an entry's risk figures may be (RISK_FIGURES_MAX_AGE_MS); absent, no bound travels. */
    figuresMaxAgeMs?: number;
    failClosedRetryAfterSeconds: number;
  };
  now?: () => number;
}

function newSignalId(): string {
  return `sig_${randomBytes(16).toString('hex')}`;
}

export async function acceptSignal(deps: AcceptDeps, req: AcceptRequest): Promise<AcceptResult> {
  const now = deps.now ?? Date.now;
  // The sender was authenticated before this (authenticateSender, ahead of the route limiter): spec §5 rule 1.
  const signal = checkSignal(req.body, now);
  const idempotencyKey = checkIdempotencyKey(signal, req.idempotencyKey, deps.settings.idempotencyKeyMaxLength);

  const { grant } = req;
  const { accounts, skipped } = await guarded(deps.settings.failClosedRetryAfterSeconds, () =>
    resolveTargets(deps.registry, grant, signal, req.routeAccountId),
  ).catch((err: unknown) => {
    // Only after the account was found to be the sender's (an unknown or foreign one is the 401 before this).
    if (err instanceof Refusal && err.kind === 'bridge_too_old' && req.routeAccountId !== undefined) deps.onBridgeTooOld?.(req.routeAccountId, err.message);
    throw err;
  });
  const routing: RoutingNote = { accounts: accounts.map((a) => a.id), skipped };
  if (accounts.length === 0) {
    return { kind: 'no_targets', body: { success: false, accountsResolved: 0, correlationId: req.correlationId }, routing };
  }

  const scope = req.routeAccountId !== undefined ? 'account_write' : 'broadcast';
  const throttled = await guarded(deps.settings.failClosedRetryAfterSeconds, () => deps.throttle.hit(scope, req.routeAccountId ?? grant.owner));
  if (!throttled.allowed) {
    throw new Refusal(
      'throttled',
      scope === 'account_write'
        ? 'Too many signals for this account; slow down and retry later'
        : 'Too many broadcast signals for this owner; slow down and retry later',
      {
        scope,
        limit: throttled.limit,
        windowMs: throttled.windowMs,
      },
    );
  }

  const { secret: _secret, idempotencyKey: _key, ...request } = signal;
  // Temporal history keeps only what the workflows need: meta's origin (the memo shows it), never the rest of meta,
  // which is the caller's and may hold anything (an API key, 4 KB of notes).
  const { meta, ...order } = request;
  const instruction = meta?.origin !== undefined ? { ...order, meta: { origin: meta.origin } } : order;
  // Every Temporal call of this request shares one deadline: a caller like TradingView gives up after 3 s.
  const deadline = now() + deps.settings.temporalBudgetMs;
  const digest = idempotencyKey === undefined ? undefined : idempotencyDigest(grant.hash, req.routeAccountId, idempotencyKey);
  const admission = await deps.admission.decide();
  // A replay is no new work and was promised already: only a new signal is refused at the door.
  if (!admission.admitted && (digest === undefined || !(await temporalStep(() => deps.windows.held(digest, deadline))))) {
    throw new Refusal('backpressure', 'System under high load, retry later', { retryAfterSeconds: admission.retryAfterSeconds });
  }
  const base: LaunchBase = {
    signalId: newSignalId(),
    correlationId: req.correlationId,
    acceptedAt: new Date(now()).toISOString(),
    signal: instruction,
    ...(skipped.length > 0 ? { skipped } : {}),
  };
  if (idempotencyKey === undefined) return { ...(await launch(deps, base, accounts, deadline, false)), routing };

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
  const claim = await temporalStep(() => deps.windows.claim(digest!, record, deps.settings.idempotencyWindowMs, deadline));
  if (claim.first) return { ...(await launch(deps, base, accounts, deadline, false)), routing };
  return replay(deps, claim.record, record.bodyHash, base.signal, deadline);
}

type LaunchBase = Omit<SignalWorkflowInput, 'targets'>;

/** How long the first request of a key may spend confirming a start whose answer was lost (TemporalExecutions). */
const FIRST_START_CONFIRM_MS = 1500;
const REPLAY_RECHECK_MS = 50;

/** How long an account's later commands wait behind a start that may or may not have happened. */
const AMBIGUOUS_HOLD_MS = 10_000;
/**
 * A new number holds the account's later commands for the start's budget and this much more, then for its command's
 * deadline once the start is known (src/bridge/ordering.ts): the margin covers the confirmation's round trip and the
 * clocks of two ingresses.
 */
const START_LEASE_MARGIN_MS = 5_000;

/**
 * The same key inside the window: the first answer again, and no new action. A region that failed the first time
 * (or was never reached) is started now, with the first request's signalId and acceptance time.
 */
async function replay(deps: AcceptDeps, first: AcceptanceRecord, bodyHash: string, signal: SignalInstruction, deadline: number): Promise<AcceptResult> {
  if (first.bodyHash !== bodyHash) {
    throw new Refusal('invalid', 'X-Idempotency-Key was already used with a different request within the replay window; use a new key for a new action', {
      details: [{ path: 'X-Idempotency-Key', message: 'already used with a different request' }],
    });
  }
  // The first request may still be starting its regions: until its own Temporal budget is spent, a region not
  // started yet is its to start, so wait for it (within this request's deadline) rather than start it a second time.
  const firstSettledAt = Date.parse(first.acceptedAt) + deps.settings.temporalBudgetMs + FIRST_START_CONFIRM_MS;
  let unknown = false;
  const missing = await temporalStep(async () => {
    const regions = Object.entries(first.regions);
    for (;;) {
      // A region that cannot say (unreachable) is treated as not started: starting it again is safe (one signalId runs
      // once per region). It may be running, though, so a failure to start it again answers what the first request
      // did, partially accepted with the signalId, never "not accepted".
      const started = await Promise.all(regions.map(([region]) => deps.executions.started(region, first.signalId, deadline).catch(unknownIfUnavailable)));
      unknown = started.includes('unknown');
      const notYet = regions.filter((_, i) => started[i] !== true).flatMap(([, ids]) => ids);
      const now = Date.now();
      if (notYet.length === 0 || now >= firstSettledAt || now + REPLAY_RECHECK_MS >= deadline) return notYet;
      await new Promise((resolve) => setTimeout(resolve, REPLAY_RECHECK_MS));
    }
  });
  const base: LaunchBase = { signalId: first.signalId, correlationId: first.correlationId, acceptedAt: first.acceptedAt, signal };
  const accounts =
    missing.length === 0
      ? []
      : (await guarded(deps.settings.failClosedRetryAfterSeconds, () => deps.registry.getAccounts(missing))).filter((a): a is Account => a !== null);
  const result = await launch(deps, base, accounts, deadline, true, unknown || missing.length < first.accountsResolved);
  return { ...result, body: { ...result.body, accountsResolved: first.accountsResolved } } as AcceptResult;
}

/** Numbers the accounts' commands in acceptance order, then starts the signal in every region that holds targets. */
async function launch(deps: AcceptDeps, base: LaunchBase, accounts: Account[], deadline: number, replayed: boolean, someMayRun = false): Promise<AcceptResult> {
  const acceptedAtMs = Date.parse(base.acceptedAt);
  const expiries = accounts.map((account) => acceptedAtMs + maxAgeMs(account, base.signal, deps.settings));
  const lease = deadline + START_LEASE_MARGIN_MS;
  const leases = expiries.map((expiry) => Math.min(expiry, lease));
  const symbol = isOpening(base.signal.action) ? base.signal.symbol : undefined;
  // An entry's outcome goes out as signal.outcome, an exit's as signal.exit_outcome: only endpoints that want it are
  // snapshotted (one Redis read beside the others), so an owner whose endpoints want neither costs the workflows nothing.
  const owners = !deps.callbacks ? [] : [...new Set(accounts.map((a) => a.owner))];
  const eventType = isOpening(base.signal.action) ? 'signal.outcome' : 'signal.exit_outcome';
  const [seqs, rules, endpointIds] = await guarded(deps.settings.failClosedRetryAfterSeconds, () =>
    Promise.all([
      deps.sequencer.next(accounts.map((a, i) => ({ accountId: a.id, deadlineMs: leases[i]! }))),
      deps.admission.ledger.accepted(
        base.signalId,
        accounts.map((a) => a.id),
        acceptedAtMs,
      ),
      symbol === undefined
        ? Promise.resolve(accounts.map(() => undefined))
        : deps.registry.volumeRules(accounts.map((a) => ({ accountId: a.id, symbols: [mapSymbol(symbol, a.symbols), symbol] }))),
      owners.length === 0 ? Promise.resolve([]) : deps.callbacks!.enabledIds(owners, eventType),
    ]).then(([seqs, , rules, ids]) => [seqs, rules, Object.fromEntries(owners.flatMap((o, i) => (ids[i]!.length > 0 ? [[o, ids[i]!]] : [])))] as const),
  );
  const callbacks = Object.keys(endpointIds).length > 0 ? { callbackEndpoints: endpointIds } : {};
  const leaseOf = new Map(accounts.map((a, i) => [a.id, leases[i]!]));
  const byRegion = groupBy(
    accounts.map((account, i) => ({
      ...toTarget(account, seqs[i]!, expiries[i]!, rules[i]),
      // Decided at acceptance, like the risk snapshot: the account workflow puts it on an entry it sizes or guards.
      ...(symbol !== undefined && deps.settings.figuresMaxAgeMs !== undefined ? { figuresMaxAgeMs: deps.settings.figuresMaxAgeMs } : {}),
      // In the input before the start: the workflow must know the ingress may have queued its command.
      ...(deps.dispatch ? { dispatchedAtAcceptance: true as const } : {}),
    })),
    (t) => t.account.region,
    (t) => t,
  );
  const regions = Object.keys(byRegion);
  const inputOf = (region: string): SignalWorkflowInput => ({ ...base, ...callbacks, targets: byRegion[region]! });
  const results = await Promise.allSettled(regions.map((region) => deps.executions.launch(region, inputOf(region), deadline)));
  // Durably started by this request: its commands go to the bridges now, ahead of Temporal's supervision. A region a
  // concurrent replay started first is that request's to queue; one whose start is in doubt, its workflow's.
  const created = regions.filter((_, i) => results[i]!.status === 'fulfilled' && (results[i] as PromiseFulfilledResult<string>).value === 'created');
  if (deps.dispatch && created.length > 0) {
    const dispatch = deps.dispatch;
    await Promise.all(created.map((region) => dispatchStarted(dispatch, inputOf(region), byRegion[region]!, (deps.now ?? Date.now)())));
  }
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const confirmed: MarkRetime[] = [];
  for (const [i, r] of results.entries()) {
    const targets = byRegion[regions[i]!]!;
    const mark = (t: AccountTarget, toMs: number): MarkRetime => ({ accountId: t.account.id, seq: t.seq, fromMs: leaseOf.get(t.account.id)!, toMs });
    if (r.status === 'fulfilled') {
      // Started: its commands will come, so later ones wait for them until their deadline. A concurrent replay
      // started this region first: the numbers given here will never be queued.
      if (r.value === 'existed') for (const t of targets) void deps.sequencer.release(t.account.id, t.seq, Date.parse(t.expiresAt)).catch(() => undefined);
      else confirmed.push(...targets.map((t) => mark(t, Date.parse(t.expiresAt))));
      continue;
    }
    deps.logger?.warn(
      { correlationId: base.correlationId, signalId: base.signalId, region: regions[i], err: String(failureOf(r.reason).cause ?? r.reason) },
      'region did not start the signal',
    );
    deps.onStartError?.(regions[i]!, r.reason);
    // Those accounts' later signals must not wait for commands that will never come. One that may come (a start whose
    // answer was lost) they wait for, but only briefly: if it did start, its command is queued within seconds.
    const done = !failureOf(r.reason).mayHaveStarted
      ? Promise.all(
          targets.flatMap((t) => [
            deps.sequencer.release(t.account.id, t.seq, Date.parse(t.expiresAt)),
            deps.admission.ledger.settled(base.signalId, t.account.id),
          ]),
        )
      : deps.sequencer.retime(targets.map((t) => mark(t, Math.min(Date.parse(t.expiresAt), (deps.now ?? Date.now)() + AMBIGUOUS_HOLD_MS))));
    void done.catch(() => undefined);
  }
  // Before the answer: a 202 whose later signals may overtake it only if this ingress dies in this round trip (the
  // queue then refuses it as overtaken rather than run it out of order). A failed confirmation leaves the lease.
  await deps.sequencer.retime(confirmed).catch((err: unknown) => deps.logger?.warn({ signalId: base.signalId, err: String(err) }, 'start lease not extended'));
  const body = { success: failed.length === 0, signalId: base.signalId, correlationId: base.correlationId, accountsResolved: accounts.length };
  if (failed.length === 0) return { kind: 'accepted', body, replayed };
  // A start that may have happened is never answered "not accepted": the caller gets the signalId and polls.
  const mayRun = failed.some((f) => failureOf(f.reason).mayHaveStarted);
  if (failed.length < results.length || someMayRun || mayRun) return { kind: 'partially_accepted', body, replayed };
  if (failed.every((f) => failureOf(f.reason).overloaded)) throw new Refusal('backpressure', 'System under high load, retry later', { retryAfterSeconds: 1 });
  // A definite refusal that is not overload (a bad namespace): the error handler answers it as what it is.
  const first = failureOf(failed[0]!.reason);
  throw first.cause instanceof Error ? first.cause : first;
}

/** A question to an unreachable region has no answer: 'unknown', for the caller to act on; anything else is thrown. */
function unknownIfUnavailable(err: unknown): 'unknown' {
  if (err instanceof ExecutionsUnavailable) return 'unknown';
  throw err;
}

/** A failed start as the executions port reports it; anything else failed in a way nobody classified: it may have started. */
function failureOf(reason: unknown): LaunchFailure {
  return reason instanceof LaunchFailure ? reason : new LaunchFailure(true, false, { cause: reason });
}

/** A call to where signals execute: overloaded or unreachable is backpressure, not a 500. */
async function temporalStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ExecutionsUnavailable) throw new Refusal('backpressure', 'System under high load, retry later');
    throw err;
  }
}

function groupBy<T, V>(items: T[], keyOf: (t: T) => string, valueOf: (t: T) => V): Record<string, V[]> {
  const out: Record<string, V[]> = {};
  for (const item of items) (out[keyOf(item)] ??= []).push(valueOf(item));
  return out;
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

/** Market entries go stale fast (the owner's max signal age, 30 s by default); other commands keep longer. */
function maxAgeMs(account: Account, signal: Pick<SignalInstruction, 'action'>, settings: AcceptDeps['settings']): number {
  return isMarketEntry(signal.action) ? (account.risk.maxSignalAgeMs ?? settings.defaultMaxSignalAgeMs) : settings.defaultCommandTtlMs;
}

/** The account's settings as the signal carries them: the rules run on this snapshot, not on later edits. */
export function accountSnapshot(account: Account): AccountSnapshot {
  return {
    id: account.id,
    owner: account.owner,
    platform: account.platform,
    region: account.region,
    bridgeVersion: account.bridgeVersion,
    ...(account.bridgeFeatures.length > 0 ? { bridgeFeatures: account.bridgeFeatures } : {}),
    risk: account.risk,
    symbols: account.symbols,
  };
}

function toTarget(account: Account, seq: number, expiresAtMs: number, volumeRules: VolumeRules | undefined): AccountTarget {
  return { account: accountSnapshot(account), seq, expiresAt: new Date(expiresAtMs).toISOString(), ...(volumeRules ? { volumeRules } : {}) };
}
