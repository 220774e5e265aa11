import { ExecutionsUnavailable, Refusal } from '../refusal';
import type { SignalInstruction } from '../domain/workflow-input';
import type { AcceptanceRecord } from './idempotency';
import type { Account } from '../domain/account';
import { failClosedOnStoreError, backpressureOnUnavailable } from './fail-closed';
import { launch } from './launch';
import { START_CLAIM_MS } from './starter';
import type { AcceptDeps, AcceptResult, LaunchBase } from './acceptance';

/** How long the first request of a key may spend confirming a start whose answer was lost (TemporalExecutions). */
const FIRST_START_CONFIRM_MS = 1500;
const REPLAY_RECHECK_MS = 50;

/**
 * The same key inside the window: the first answer again, and no new action. A region that failed the first time
 * (or was never reached) is started now, with the first request's signalId and acceptance time.
 */
export async function replay(deps: AcceptDeps, first: AcceptanceRecord, bodyHash: string, signal: SignalInstruction, deadline: number): Promise<AcceptResult> {
  if (first.bodyHash !== bodyHash) {
    throw new Refusal('invalid', 'X-Idempotency-Key was already used with a different request within the replay window; use a new key for a new action', {
      details: [{ path: 'X-Idempotency-Key', message: 'already used with a different request' }],
    });
  }
  const { missing, unknown } = await backpressureOnUnavailable(() => regionsNotStarted(deps, first, deadline));
  const base: LaunchBase = { signalId: first.signalId, correlationId: first.correlationId, acceptedAt: first.acceptedAt, signal };
  const accounts =
    missing.length === 0
      ? []
      : (await failClosedOnStoreError(deps.settings.failClosedRetryAfterSeconds, () => deps.registry.getAccounts(missing))).filter(
          (a): a is Account => a !== null,
        );
  const result = await launch(deps, base, accounts, deadline, true, unknown || missing.length < first.accountsResolved);
  return { ...result, body: { ...result.body, accountsResolved: first.accountsResolved } } as AcceptResult;
}

/**
 * The accounts of the regions the first request has not started. The first request may still be starting them: until
 * its own Temporal budget is spent, a region not started yet is its to start, so wait for it (within this request's
 * deadline) rather than start it a second time. `unknown`: some region could not say.
 */
async function regionsNotStarted(deps: AcceptDeps, first: AcceptanceRecord, deadline: number): Promise<{ missing: string[]; unknown: boolean }> {
  const firstSettledAt = Date.parse(first.acceptedAt) + deps.settings.temporalBudgetMs + FIRST_START_CONFIRM_MS;
  const regions = Object.entries(first.regions);
  for (;;) {
    // A region that cannot say (unreachable) is treated as not started: starting it again is safe (one signalId runs
    // once per region). It may be running, though, so a failure to start it again answers what the first request
    // did, partially accepted with the signalId, never "not accepted".
    const started = await Promise.all(regions.map(([region]) => acceptedIn(deps, region, first.signalId, deadline)));
    const missing = regions.filter((_, i) => started[i] !== true).flatMap(([, ids]) => ids);
    const now = Date.now();
    if (missing.length === 0 || now >= firstSettledAt || now + REPLAY_RECHECK_MS >= deadline) return { missing, unknown: started.includes('unknown') };
    await new Promise((resolve) => setTimeout(resolve, REPLAY_RECHECK_MS));
  }
}

/**
 * Whether the first request accepted the signal in the region: its start is recorded in Redis (not made yet), or
 * Temporal holds the workflow (the record then went). A recorded start is made from here too: the first request's
 * ingress may have died before it made it (made twice, it runs once).
 */
async function acceptedIn(deps: AcceptDeps, region: string, signalId: string, deadline: number): Promise<boolean | 'unknown'> {
  const now = deps.now ?? Date.now;
  const recorded = await failClosedOnStoreError(deps.settings.failClosedRetryAfterSeconds, () => deps.starts.claim(region, signalId, now() + START_CLAIM_MS));
  if (recorded) {
    deps.starter.start(region, recorded);
    return true;
  }
  return deps.executions.started(region, signalId, deadline).catch(unknownIfUnavailable);
}

/** A question to an unreachable region has no answer: 'unknown', for the caller to act on; anything else is thrown. */
function unknownIfUnavailable(err: unknown): 'unknown' {
  if (err instanceof ExecutionsUnavailable) return 'unknown';
  throw err;
}
