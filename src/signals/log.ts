import type { Registry } from '../registry/registry';
import { SIGNAL_ID_PATTERN, accountWorkflowId } from '../domain/ids';
import type { AccountOutcome } from '../domain/outcome';
import { PageTooLarge, type AccountRun, type AccountRuns, type ExecutionReport, type RunFilter } from './account-runs';
import { Refusal } from '../refusal';
import { reasonText } from '../domain/reason-codes';
import { decodePageToken, encodePageToken, ownerIdSchema, parseSignalLogQuery } from './log-filters';
import type { ReportedOutcomes } from './reported-outcomes';

/**
 * The owner's signal log (issue 16): their signals newest first, filtered and paged, and one signal's timeline per
 * account. Read from Temporal visibility (the account workflows, by OwnerId: the owner at acceptance), the outcomes
 * the signal workflows recorded, what bridges reported (Redis, before Temporal has it) and when each command was first
 * handed to a bridge (Redis). An owner sees only their own accounts' workflows; anything else is "not found".
 */
export interface SignalLog {
  list(ownerId: string, query: unknown): Promise<SignalLogPage>;
  /** Throws SignalNotFound when the signal touched none of the owner's accounts (or does not exist). */
  detail(ownerId: string, signalId: string): Promise<SignalDetail>;
}

/** The same answer for a signal of another owner as for one that never existed. */
export class SignalNotFound extends Error {
  constructor(what = 'signal') {
    super(`${what} not found`);
    this.name = 'SignalNotFound';
  }
}

/** `reasonText`: a rejection's reason in words (src/domain/reason-codes.ts), the code staying in `reason`. */
type AccountOutcomeView =
  | { outcome: 'filled' | 'done'; ticket: string | null; reason: null; reasonText: null; at: string }
  | { outcome: 'rejected'; ticket: null; reason: string; reasonText: string; at: string }
  | { outcome: 'pending'; ticket: null; reason: null; reasonText: null; at: null };

export interface SignalLogRow {
  signalId: string;
  receivedAt: string;
  action: string;
  symbol: string | null;
  /** This owner's accounts the signal targeted (those matching the filter), with each one's outcome. */
  accounts: ({ accountId: string } & AccountOutcomeView)[];
}

export interface SignalLogPage {
  signals: SignalLogRow[];
  /** Pass back as pageToken for older signals; absent on the last page. */
  nextPageToken?: string;
}

interface AccountTimeline {
  accountId: string;
  accepted: { at: string };
  /** When the command was first handed to the account's bridge; null before that, or once Redis forgot it (7 days). */
  delivered: { at: string } | null;
  outcome: AccountOutcomeView;
  /** What the bridge reported with the outcome: lots placed, price, its message (a sized entry's figures); or null. */
  execution: ExecutionReport | null;
}

interface SignalDetail {
  signalId: string;
  receivedAt: string;
  action: string;
  symbol: string | null;
  /** What the signal asked: its order fields (volume, prices, stops, management) as sent; null for an older signal. */
  sent: Record<string, unknown> | null;
  accounts: AccountTimeline[];
}

/** When commands were first handed to a bridge (src/bridge/queue.ts). */
export interface DeliveryTimes {
  firstDeliveries(commands: readonly { accountId: string; commandId: string }[]): Promise<(number | undefined)[]>;
}

export interface SignalLogDeps {
  runs: AccountRuns;
  registry: Pick<Registry, 'getAccount'>;
  reported: ReportedOutcomes;
  deliveries: DeliveryTimes;
}

export function signalLog(deps: SignalLogDeps): SignalLog {
  return { list: (ownerId, query) => listSignals(deps, ownerId, query), detail: (ownerId, signalId) => signalDetail(deps, ownerId, signalId) };
}

async function listSignals(deps: SignalLogDeps, ownerId: string, query: unknown): Promise<SignalLogPage> {
  const owner = ownerIdSchema.parse(ownerId);
  const q = parseSignalLogQuery(query);
  const after = q.pageToken === undefined ? undefined : decodePageToken(q.pageToken);
  // An account filter names one of the owner's accounts, or nothing at all: whether another owner's exists is not said.
  if (q.accountId !== undefined && (await deps.registry.getAccount(q.accountId))?.owner !== owner) throw new SignalNotFound('account');
  const filter: RunFilter = {
    ownerId: owner,
    ...(q.accountId !== undefined ? { accountId: q.accountId } : {}),
    ...(q.action !== undefined ? { action: q.action } : {}),
    ...(q.symbol !== undefined ? { symbol: q.symbol } : {}),
    ...(q.outcome !== undefined ? { outcome: q.outcome } : {}),
    ...(q.from !== undefined ? { from: q.from } : {}),
    ...(q.to !== undefined ? { to: q.to } : {}),
  };
  const { runs, more } = await deps.runs.newestSignals(filter, q.pageSize, after).catch((err: unknown) => {
    if (err instanceof PageTooLarge) throw new Refusal('invalid', 'This page would read too much; ask for fewer signals per page, or narrow the filters');
    throw err;
  });
  const bySignal = groupBySignal(runs);
  const outcomes = await knownOutcomes(deps, owner, bySignal);
  const signals = [...bySignal.values()].map((own) => ({
    ...signalFields(own[0]!),
    accounts: own.map((run) => ({ accountId: run.accountId, ...outcomeView(run, outcomes.get(run.signalId)) })),
  }));
  const last = signals.at(-1);
  return {
    signals,
    ...(more && last ? { nextPageToken: encodePageToken({ receivedAt: new Date(last.receivedAt), signalId: last.signalId }) } : {}),
  };
}

async function signalDetail(deps: SignalLogDeps, ownerId: string, signalId: string): Promise<SignalDetail> {
  const owner = ownerIdSchema.parse(ownerId);
  // A handle we could never have issued is simply not found; it never reaches Temporal.
  if (!SIGNAL_ID_PATTERN.test(signalId)) throw new SignalNotFound();
  const runs = await deps.runs.ofSignal(owner, signalId);
  if (runs.length === 0) throw new SignalNotFound();
  const [outcomes, delivered, sent] = await Promise.all([
    knownOutcomes(deps, owner, new Map([[signalId, runs]])),
    deps.deliveries.firstDeliveries(runs.map((r) => ({ accountId: r.accountId, commandId: accountWorkflowId(signalId, r.accountId) }))),
    deps.runs.sent(owner, signalId),
  ]);
  return {
    ...signalFields(runs[0]!),
    sent,
    accounts: runs.map((run, i) => ({
      accountId: run.accountId,
      accepted: { at: run.receivedAt },
      delivered: delivered[i] === undefined ? null : { at: new Date(delivered[i]).toISOString() },
      outcome: outcomeView(run, outcomes.get(signalId)),
      execution: run.execution,
    })),
  };
}

function signalFields(run: AccountRun) {
  return { signalId: run.signalId, receivedAt: run.receivedAt, action: run.action, symbol: run.symbol };
}

function groupBySignal(runs: readonly AccountRun[]): Map<string, AccountRun[]> {
  const out = new Map<string, AccountRun[]>();
  for (const run of runs) out.set(run.signalId, [...(out.get(run.signalId) ?? []), run]);
  return out;
}

/**
 * Per signal, per account: Temporal's recorded outcome (the signal's memo: ticket, full reason, time, an operator's
 * word), else what the bridge reported (kept in Redis for an hour from before Temporal has it). Redis is read only for
 * the signals with an account the memos do not answer: one not done yet, one whose memo is not visible yet (the
 * account's Outcome can be, and a filled account must show its ticket), or a signal that is not an entry.
 */
async function knownOutcomes(deps: SignalLogDeps, owner: string, bySignal: Map<string, AccountRun[]>): Promise<Map<string, Map<string, AccountOutcome>>> {
  const ids = [...bySignal.keys()];
  const recorded = await deps.runs.recordedOutcomes(owner, ids);
  const answered = (id: string, accountId: string) => (recorded.get(id) ?? []).some((o) => o.accountId === accountId);
  const reported = await Promise.all(
    ids.map((id) => (bySignal.get(id)!.every((r) => answered(id, r.accountId)) ? Promise.resolve([]) : deps.reported.read(id))),
  );
  const out = new Map<string, Map<string, AccountOutcome>>();
  ids.forEach((id, i) => {
    // Only the accounts whose runs this owner's query returned: a memo or a report never adds an account.
    const own = new Set(bySignal.get(id)!.map((r) => r.accountId));
    const known = new Map<string, AccountOutcome>();
    for (const o of [...reported[i]!, ...(recorded.get(id) ?? [])]) if (own.has(o.accountId)) known.set(o.accountId, o);
    out.set(id, known);
  });
  return out;
}

function outcomeView(run: AccountRun, known: Map<string, AccountOutcome> | undefined): AccountOutcomeView {
  const o = known?.get(run.accountId);
  const rejected = (reason: string, at: string) => ({ outcome: 'rejected' as const, ticket: null, reason, reasonText: reasonText(reason), at });
  if (o?.outcome === 'rejected') return rejected(o.reason ?? 'unknown', o.occurredAt);
  if (o) return { outcome: o.outcome, ticket: o.ticket, reason: null, reasonText: null, at: o.occurredAt };
  if (run.state === 'completed' && run.closedAt !== null) {
    if (run.outcome === 'rejected') return rejected(run.reason ?? 'unknown', run.closedAt);
    if (run.outcome !== null) return { outcome: run.outcome, ticket: null, reason: null, reasonText: null, at: run.closedAt };
  }
  // Running, or stopped and awaiting an operator's word: an order may be live, so never anything but pending.
  return { outcome: 'pending', ticket: null, reason: null, reasonText: null, at: null };
}
