import type { Throttle } from '../ratelimit/fairness';
import type { Registry } from '../registry/registry';
import { SIGNAL_ID_PATTERN } from '../domain/ids';
import { Refusal } from '../refusal';
import type { SignalExecutions } from './executions';
import { failClosedOnStoreError } from './fail-closed';
import type { ReportedOutcomes } from './reported-outcomes';
import type { AccountOutcome, EntryOutcome } from '../domain/outcome';

/**
 * How long the status poll waits for Temporal before it answers from what it has (docs/poll.md): the outcomes the
 * bridges reported are in Redis already; Temporal only adds what a workflow decided itself, and a poll is asked again.
 */
export const POLL_TEMPORAL_WAIT_MS = 10;

/** The status poll use case (spec §4.3): outcomes of an opening signal, scoped to the accounts granted to the token. */

export interface SignalStatus {
  signalId: string;
  status: 'pending_or_unknown' | 'reported';
  reported: number;
  accounts: StatusAccount[];
}

/** The spec's account item (§2.4), and the additive `entry` and `fill` when known (docs/poll.md). */
type StatusAccount = EntryOutcome;

export interface StatusDeps {
  registry: Registry;
  throttle: Throttle;
  executions: SignalExecutions;
  /** What bridges reported, kept by the ingress: the poll's answer when Temporal is slow to give its own. */
  reported: ReportedOutcomes;
  /** How long the poll waits for Temporal's outcomes before it answers from what it has. */
  temporalWaitMs: number;
  failClosedRetryAfterSeconds: number;
  now?: () => number;
}

export async function readSignalStatus(deps: StatusDeps, req: { token: string | undefined; signalId: string }): Promise<SignalStatus> {
  const now = deps.now ?? Date.now;
  const grant = await failClosedOnStoreError(deps.failClosedRetryAfterSeconds, async () => {
    if (!req.token) throw new Refusal('unauthorized', 'Missing or invalid API token');
    const g = await deps.registry.authenticateToken(req.token);
    if (!g) throw new Refusal('unauthorized', 'Missing or invalid API token');
    if (g.suspendedUntil && Date.parse(g.suspendedUntil) > now()) {
      throw new Refusal('token_suspended', 'token_suspended', { suspendedUntil: g.suspendedUntil });
    }
    // All of the token's accounts are counted in one round trip.
    const hits = await deps.throttle.hitEach('account_read', g.accounts);
    for (const hit of hits) {
      if (!hit.allowed) {
        throw new Refusal('throttled', 'Too many status reads for this account; slow down and retry later', {
          scope: 'account_read',
          limit: hit.limit,
          windowMs: hit.windowMs,
        });
      }
    }
    return g;
  });

  const empty: SignalStatus = { signalId: req.signalId, status: 'pending_or_unknown', reported: 0, accounts: [] };
  // A handle we could never have issued is simply unknown; it never reaches Temporal.
  if (!SIGNAL_ID_PATTERN.test(req.signalId)) return empty;
  const granted = new Set(grant.accounts);
  const visible = (await knownOutcomes(deps, req.signalId))
    .filter((o) => granted.has(o.accountId) && (o.outcome === 'filled' || o.outcome === 'rejected'))
    .sort((a, b) => a.occurredAt.localeCompare(b.occurredAt) || a.accountId.localeCompare(b.accountId));
  if (visible.length === 0) return empty;
  // An account that went to another owner is no longer this token's to read, even before the admin CLI has unlinked
  // it from the token. Only the accounts this signal reports are read (a token may grant hundreds).
  const owners = await failClosedOnStoreError(deps.failClosedRetryAfterSeconds, () => deps.registry.getAccounts(visible.map((o) => o.accountId)));
  const owned = visible.filter((_, i) => owners[i]?.owner === grant.owner);
  if (owned.length === 0) return empty;
  return {
    signalId: req.signalId,
    status: 'reported',
    reported: owned.length,
    accounts: owned.map((o) => ({
      accountId: o.accountId,
      outcome: o.outcome as 'filled' | 'rejected',
      ticket: o.ticket,
      reason: o.reason,
      occurredAt: o.occurredAt,
      // Only a filled entry says what it became; a rejection keeps the spec's item exactly.
      ...(o.outcome === 'filled' && o.entry ? { entry: o.entry } : {}),
      ...(o.outcome === 'filled' && o.fill ? { fill: { price: o.fill.price, volume: o.fill.volume } } : {}),
    })),
  };
}

/**
 * Temporal's outcomes (the record), with the reports bridges made that Temporal took but has not put in the signal's
 * memo yet, or not within the poll's wait. The poll waits for Temporal only briefly when it has something to show
 * (docs/poll.md): a busy execution path never holds up a poll of a signal a bridge has reported. With nothing at all
 * to show, it waits for Temporal's answer, and Temporal unreachable is then the spec's 500/503, never "pending".
 * Temporal's outcome of an account wins; both come from the same report, but only Temporal's is the record.
 */
async function knownOutcomes(deps: StatusDeps, signalId: string): Promise<AccountOutcome[]> {
  const [fromBridges, soon] = await Promise.all([
    failClosedOnStoreError(deps.failClosedRetryAfterSeconds, () => deps.reported.read(signalId)),
    deps.executions.outcomes(signalId, deps.temporalWaitMs).then(
      (outcomes) => ({ outcomes }),
      (err: unknown) => ({ err }),
    ),
  ]);
  let recorded: AccountOutcome[] | undefined;
  if ('err' in soon) {
    // Temporal unreachable: what bridges reported is still true; with nothing of that, the poll cannot answer.
    if (fromBridges.length === 0) throw soon.err;
  } else {
    recorded = soon.outcomes ?? (fromBridges.length === 0 ? await deps.executions.outcomes(signalId) : undefined);
  }
  const seen = new Set((recorded ?? []).map((o) => o.accountId));
  return [...(recorded ?? []), ...fromBridges.filter((o) => !seen.has(o.accountId))];
}
