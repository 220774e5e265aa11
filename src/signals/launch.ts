import { isMarketEntry, isOpening } from '../domain/actions';
import { mapSymbol } from '../risk/symbols';
import type { VolumeRules } from '../domain/volume-rules';
import { LaunchFailure, Refusal } from '../refusal';
import type { AccountSnapshot, AccountTarget, SignalInstruction, SignalWorkflowInput } from '../domain/workflow-input';
import type { MarkRetime, Numbered } from '../bridge/ordering';
import type { Account } from '../domain/account';
import { failClosedOnStoreError } from './fail-closed';
import { dispatchStarted } from './dispatch';
import { START_CLAIM_MS, START_SWEEP_EVERY_MS } from './starter';
import type { AcceptDeps, AcceptResult, LaunchBase } from './acceptance';

/** How long an account's later commands wait behind a start that may or may not have happened. */
const AMBIGUOUS_HOLD_MS = 10_000;
/**
 * A new number holds the account's later commands until its start could have been taken over from a dead ingress
 * (the record's claim and one sweep) and this much more, then for its command's deadline once its acceptance is
 * known (src/bridge/ordering.ts): the margin covers the confirmation's round trip and the clocks of two ingresses.
 */
const START_LEASE_MARGIN_MS = 5_000;

/** The targets of one launch, grouped by the region whose Temporal runs them. */
interface RegionPlan {
  regions: string[];
  byRegion: Record<string, AccountTarget[]>;
  /** Each account's start lease: until when its number holds later commands before the start is confirmed. */
  leaseOf: Map<string, number>;
  inputOf(region: string): SignalWorkflowInput;
}

type StartResult = PromiseSettledResult<'created' | 'existed'>;

/**
 * Numbers the accounts' commands in acceptance order, then accepts the signal in Redis in every region that holds
 * targets (its start recorded, its commands queued) and hands the starts to the starter: the answer never waits for
 * Temporal (docs/architecture.md, "Accept in Redis, answer, then start").
 */
export async function launch(
  deps: AcceptDeps,
  base: LaunchBase,
  accounts: Account[],
  deadline: number,
  replayed: boolean,
  someMayRun = false,
): Promise<AcceptResult> {
  const plan = await planRegions(deps, base, accounts, deadline);
  const now = deps.now ?? Date.now;
  const results = await Promise.allSettled(plan.regions.map((region) => recordStart(deps, region, plan.inputOf(region), now() + START_CLAIM_MS)));
  const created = createdRegions(plan, results);
  await dispatchCreated(deps, plan, created);
  for (const region of created) deps.starter.start(region, plan.inputOf(region));
  const confirmed = settleStarts(deps, base, plan, results);
  // Before the answer: a 202 whose later signals may overtake it only if this ingress dies in this round trip (the
  // queue then refuses it as overtaken rather than run it out of order). A failed confirmation (Redis away) is tried
  // again in the background until it lands or the commands expire, so the place is held again as soon as Redis is back.
  await deps.sequencer.retime(confirmed).catch((err: unknown) => {
    deps.logger?.warn({ signalId: base.signalId, err: String(err) }, 'start lease not extended; trying again');
    void retimeLater(deps, base.signalId, confirmed);
  });
  return answerOf(base, accounts.length, results, replayed, someMayRun);
}

/**
 * The signal's acceptance in one region: its start recorded in Redis. A write that failed may still have landed (a
 * replica that did not acknowledge it): it is taken back, and if that fails too, the start may happen.
 */
async function recordStart(deps: AcceptDeps, region: string, input: SignalWorkflowInput, claimUntilMs: number): Promise<'created' | 'existed'> {
  try {
    return await deps.starts.record(region, input, claimUntilMs);
  } catch (err) {
    const takenBack = await deps.starts.started(region, input.signalId).then(
      () => true,
      () => false,
    );
    throw new LaunchFailure(!takenBack, true, { cause: err });
  }
}

/** The first retry of a failed confirmation, doubled up to the last; they go on until the marks' deadlines pass. */
const RETIME_RETRY_FIRST_MS = 100;
const RETIME_RETRY_MAX_MS = 1_000;

/** Confirms the starts' marks once Redis answers again (idempotent: a mark already moved is left as it is). */
async function retimeLater(deps: AcceptDeps, signalId: string, marks: MarkRetime[]): Promise<void> {
  const now = deps.now ?? Date.now;
  const until = Math.max(...marks.map((m) => m.toMs));
  for (let wait = RETIME_RETRY_FIRST_MS; now() + wait < until; wait = Math.min(wait * 2, RETIME_RETRY_MAX_MS)) {
    await new Promise((resolve) => setTimeout(resolve, wait).unref());
    try {
      await deps.sequencer.retime(marks);
      deps.logger?.info({ signalId }, 'start lease extended after a retry');
      return;
    } catch {
      // Redis still away: the next try.
    }
  }
  deps.logger?.warn({ signalId }, 'start lease never extended: its commands expired first');
}

/**
 * One Redis round of everything the workflows need decided at acceptance (the sequence numbers, the volume rules, the
 * callback endpoints), then the targets grouped by region.
 */
async function planRegions(deps: AcceptDeps, base: LaunchBase, accounts: Account[], deadline: number): Promise<RegionPlan> {
  const acceptedAtMs = Date.parse(base.acceptedAt);
  const expiries = accounts.map((account) => acceptedAtMs + maxAgeMs(account, base.signal, deps.settings));
  const lease = Math.max(deadline, acceptedAtMs + START_CLAIM_MS + START_SWEEP_EVERY_MS) + START_LEASE_MARGIN_MS;
  const leases = expiries.map((expiry) => Math.min(expiry, lease));
  const symbol = isOpening(base.signal.action) ? base.signal.symbol : undefined;
  // An entry's outcome goes out as signal.outcome, an exit's as signal.exit_outcome: only endpoints that want it are
  // snapshotted (one Redis read beside the others), so an owner whose endpoints want neither costs the workflows nothing.
  const owners = !deps.callbacks ? [] : [...new Set(accounts.map((a) => a.owner))];
  const eventType = isOpening(base.signal.action) ? 'signal.outcome' : 'signal.exit_outcome';
  const [seqs, rules, endpointIds] = await failClosedOnStoreError(deps.settings.failClosedRetryAfterSeconds, () =>
    Promise.all([
      deps.sequencer.next(accounts.map((a, i) => ({ accountId: a.id, deadlineMs: leases[i]! }))),
      symbol === undefined
        ? Promise.resolve(accounts.map(() => undefined))
        : deps.registry.volumeRules(accounts.map((a) => ({ accountId: a.id, symbols: [mapSymbol(symbol, a.symbols), symbol] }))),
      owners.length === 0 ? Promise.resolve([]) : deps.callbacks!.enabledIds(owners, eventType),
    ]).then(([seqs, rules, ids]) => [seqs, rules, Object.fromEntries(owners.flatMap((o, i) => (ids[i]!.length > 0 ? [[o, ids[i]!]] : [])))] as const),
  );
  const callbacks = Object.keys(endpointIds).length > 0 ? { callbackEndpoints: endpointIds } : {};
  const byRegion = groupBy(
    accounts.map((account, i) => ({
      ...toTarget(account, seqs[i]!, expiries[i]!, rules[i]),
      // Decided at acceptance, like the risk snapshot: the account workflow puts it on an entry it sizes or guards.
      ...(symbol !== undefined && deps.settings.figuresMaxAgeMs !== undefined ? { figuresMaxAgeMs: deps.settings.figuresMaxAgeMs } : {}),
      // In the input before the start: the workflow must know the ingress may have queued its command.
      dispatchedAtAcceptance: true as const,
    })),
    (t) => t.account.region,
    (t) => t,
  );
  return {
    regions: Object.keys(byRegion),
    byRegion,
    leaseOf: new Map(accounts.map((a, i) => [a.id, leases[i]!])),
    inputOf: (region) => ({ ...base, ...callbacks, targets: byRegion[region]! }),
  };
}

/** The regions this request accepted first (a concurrent replay's record, or a failed write, are not its to start). */
function createdRegions(plan: RegionPlan, results: StartResult[]): string[] {
  return plan.regions.filter((_, i) => results[i]!.status === 'fulfilled' && (results[i] as PromiseFulfilledResult<string>).value === 'created');
}

/**
 * Durably accepted by this request: its commands go to the bridges now, ahead of Temporal's supervision. A region a
 * concurrent replay recorded first is that request's to queue; one whose record is in doubt, its workflow's.
 */
async function dispatchCreated(deps: AcceptDeps, plan: RegionPlan, created: readonly string[]): Promise<void> {
  const now = (deps.now ?? Date.now)();
  await Promise.all(created.map((region) => dispatchStarted(deps.dispatch, plan.inputOf(region), plan.byRegion[region]!, now)));
}

/**
 * What each region's record means for its accounts' numbers: the marks to extend to their command's deadline (accepted
 * by this request), released (a concurrent replay accepted it first, or it was definitely not accepted), or held
 * briefly (the record's write is in doubt: if it landed, the start is made from it and its workflow queues the command).
 */
function settleStarts(deps: AcceptDeps, base: LaunchBase, plan: RegionPlan, results: StartResult[]): MarkRetime[] {
  const confirmed: MarkRetime[] = [];
  const mark = (t: AccountTarget, toMs: number): MarkRetime => ({ accountId: t.account.id, seq: t.seq, fromMs: plan.leaseOf.get(t.account.id)!, toMs });
  for (const [i, r] of results.entries()) {
    const targets = plan.byRegion[plan.regions[i]!]!;
    if (r.status === 'fulfilled') {
      // Accepted: its commands are queued or will be (by its workflow), so later ones wait for them until their
      // deadline. A concurrent replay accepted this region first: the numbers given here will never be queued.
      if (r.value === 'existed') for (const t of targets) void deps.sequencer.release(t.account.id, t.seq, Date.parse(t.expiresAt)).catch(() => undefined);
      else confirmed.push(...targets.map((t) => mark(t, Date.parse(t.expiresAt))));
      continue;
    }
    deps.logger?.warn(
      { correlationId: base.correlationId, signalId: base.signalId, region: plan.regions[i], err: String(failureOf(r.reason).cause ?? r.reason) },
      'region did not accept the signal',
    );
    deps.onStartError?.(plan.regions[i]!, r.reason);
    // Those accounts' later signals must not wait for commands that will never come. One that may come (a record whose
    // write is in doubt) they wait for, but only briefly.
    const done = !failureOf(r.reason).mayHaveStarted
      ? Promise.all(targets.map((t) => deps.sequencer.release(t.account.id, t.seq, Date.parse(t.expiresAt))))
      : deps.sequencer.retime(targets.map((t) => mark(t, Math.min(Date.parse(t.expiresAt), (deps.now ?? Date.now)() + AMBIGUOUS_HOLD_MS))));
    void done.catch(() => undefined);
  }
  return confirmed;
}

/** The caller's answer from the regions' starts: accepted, partially accepted (pollable), or a refusal. */
function answerOf(base: LaunchBase, accountsResolved: number, results: StartResult[], replayed: boolean, someMayRun: boolean): AcceptResult {
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const body = { success: failed.length === 0, signalId: base.signalId, correlationId: base.correlationId, accountsResolved };
  if (failed.length === 0) return { kind: 'accepted', body, replayed };
  // A start that may have happened is never answered "not accepted": the caller gets the signalId and polls.
  const mayRun = failed.some((f) => failureOf(f.reason).mayHaveStarted);
  if (failed.length < results.length || someMayRun || mayRun) return { kind: 'partially_accepted', body, replayed };
  if (failed.every((f) => failureOf(f.reason).overloaded)) throw new Refusal('backpressure', 'System under high load, retry later', { retryAfterSeconds: 1 });
  // A definite refusal that is not overload (a bad namespace): the error handler answers it as what it is.
  const first = failureOf(failed[0]!.reason);
  throw first.cause instanceof Error ? first.cause : first;
}

/** A failed start as the executions port reports it; anything else failed in a way nobody classified: it may have started. */
function failureOf(reason: unknown): LaunchFailure {
  return reason instanceof LaunchFailure ? reason : new LaunchFailure(true, false, { cause: reason });
}

export function groupBy<T, V>(items: T[], keyOf: (t: T) => string, valueOf: (t: T) => V): Record<string, V[]> {
  const out: Record<string, V[]> = {};
  for (const item of items) (out[keyOf(item)] ??= []).push(valueOf(item));
  return out;
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

function toTarget(account: Account, numbered: Numbered, expiresAtMs: number, volumeRules: VolumeRules | undefined): AccountTarget {
  return {
    account: accountSnapshot(account),
    seq: numbered.seq,
    dataGeneration: numbered.generation,
    expiresAt: new Date(expiresAtMs).toISOString(),
    ...(volumeRules ? { volumeRules } : {}),
  };
}
