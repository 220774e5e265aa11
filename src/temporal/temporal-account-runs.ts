import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { PageTooLarge, type AccountRun, type AccountRuns, type ExecutionReport, type RunFilter, type RunPosition } from '../signals/account-runs';
import type { AccountOutcome } from '../domain/outcome';
import { OUTCOME_MEMO_PREFIX } from '../domain/ids';
import type { Regions } from './regions';
import { AccountIdKey, ActionKey, OutcomeKey, ReasonKey, ReceivedAtKey, SignalIdKey, SymbolKey } from './search-attributes';
import { accountRunsQuery, signalParentsQuery, signalRunsQuery, type RunSection } from './visibility-query';

/**
 * How far a workflow's StartTime may precede its signal's ReceivedAt: acceptedAt is the ingress's clock, StartTime
 * the Temporal server's (both NTP-synchronised). The walk below reads this far past the point where nothing newer
 * can follow.
 */
const CLOCK_SKEW_MS = 5_000;
/**
 * Rows one section of one region may read for one page: a bound on the cost of a page, whatever the data. A page of
 * N signals on A accounts each reads at least N × A rows: 25 broadcasts to 200 accounts are 5,000.
 */
const MAX_ROWS_PER_SECTION = 20_000;
const VISIBILITY_PAGE = 500;

/**
 * The owner's signal log read from Temporal visibility, in every region. SQL visibility (SQLite, PostgreSQL) has no
 * ORDER BY: it lists running workflows first by StartTime descending, then closed ones by CloseTime descending. A
 * signal is received before its account workflow starts, which is before it closes, so each section is read in its
 * own order until the row at hand started (running) or closed (closed) before the oldest of the newest N signals
 * found so far: nothing after it can be newer. A page then costs about N rows per section, plus the workflows that
 * started earlier but closed later (the ones that waited long for their bridge).
 */
export class TemporalAccountRuns implements AccountRuns {
  constructor(
    private readonly regions: Regions,
    private readonly clockSkewMs = CLOCK_SKEW_MS,
  ) {}

  async newestSignals(filter: RunFilter, signals: number, after?: RunPosition): Promise<{ runs: AccountRun[]; more: boolean }> {
    const sections: RunSection[] = filter.outcome === 'pending' || filter.outcome === undefined ? ['running', 'closed'] : ['closed', 'running'];
    const walks = await Promise.all(
      this.regions.names().flatMap((region) => sections.map((section) => this.walk(region, accountRunsQuery(filter, section, after), section, signals))),
    );
    // A workflow that closed between the two sections' reads is in both: its closed row is the newer word.
    const byRun = new Map<string, AccountRun>();
    for (const run of walks.flatMap((w) => w.runs)) {
      const key = `${run.signalId}/${run.accountId}`;
      const seen = byRun.get(key);
      if (seen === undefined || seen.state === 'running') byRun.set(key, run);
    }
    const runs = [...byRun.values()];
    const order = newestFirst(runs);
    const kept = new Set(order.slice(0, signals));
    return {
      runs: runs
        .filter((r) => kept.has(r.signalId))
        .sort((a, b) => order.indexOf(a.signalId) - order.indexOf(b.signalId) || a.accountId.localeCompare(b.accountId)),
      more: order.length > signals || walks.some((w) => !w.exhausted),
    };
  }

  /** One section of one region, read until nothing newer than the `signals` newest found can follow. */
  private async walk(region: string, query: string, section: RunSection, signals: number): Promise<{ runs: AccountRun[]; exhausted: boolean }> {
    return this.regions.call(
      region,
      async (client) => {
        const runs: AccountRun[] = [];
        const newest: { at: number; signalId: string }[] = [];
        let read = 0;
        for await (const info of client.workflow.list({ query, pageSize: VISIBILITY_PAGE })) {
          const run = accountRun(info);
          if (run === undefined) continue;
          read++;
          // Newer than this row's own bound nothing can come, so with N signals at least that new, the walk is done.
          const bound = (section === 'running' ? info.startTime : (info.closeTime ?? info.startTime)).getTime() + this.clockSkewMs;
          if (newest.length >= signals && bound < newest[signals - 1]!.at) return { runs, exhausted: false };
          runs.push(run);
          if (!newest.some((n) => n.signalId === run.signalId)) {
            newest.push({ at: Date.parse(run.receivedAt), signalId: run.signalId });
            newest.sort((a, b) => b.at - a.at || (a.signalId < b.signalId ? 1 : -1));
          }
          if (read >= MAX_ROWS_PER_SECTION) throw new PageTooLarge(MAX_ROWS_PER_SECTION);
        }
        return { runs, exhausted: true };
      },
      Date.now() + 10_000,
    );
  }

  async ofSignal(ownerId: string, signalId: string): Promise<AccountRun[]> {
    const query = signalRunsQuery(ownerId, signalId);
    const perRegion = await Promise.all(this.regions.names().map((region) => this.regions.call(region, (client) => listAll(client, query))));
    return perRegion
      .flat()
      .flatMap((info) => accountRun(info) ?? [])
      .sort((a, b) => a.accountId.localeCompare(b.accountId));
  }

  async recordedOutcomes(ownerId: string, signalIds: readonly string[]): Promise<Map<string, AccountOutcome[]>> {
    const out = new Map<string, AccountOutcome[]>();
    if (signalIds.length === 0) return out;
    const query = signalParentsQuery(ownerId, signalIds);
    const perRegion = await Promise.all(this.regions.names().map((region) => this.regions.call(region, (client) => listAll(client, query))));
    for (const info of perRegion.flat()) {
      const signalId = info.typedSearchAttributes.get(SignalIdKey);
      if (signalId === undefined) continue;
      const recorded = Object.entries(info.memo ?? {})
        .filter(([key]) => key.startsWith(OUTCOME_MEMO_PREFIX))
        .map(([, value]) => value as AccountOutcome);
      out.set(signalId, [...(out.get(signalId) ?? []), ...recorded]);
    }
    return out;
  }

  async sent(ownerId: string, signalId: string): Promise<Record<string, unknown> | null> {
    const query = signalParentsQuery(ownerId, [signalId]);
    const perRegion = await Promise.all(this.regions.names().map((region) => this.regions.call(region, (client) => listAll(client, query))));
    const memo = perRegion.flat().find((info) => typeof info.memo?.sent === 'object' && info.memo.sent !== null)?.memo?.sent;
    return (memo as Record<string, unknown> | undefined) ?? null;
  }
}

async function listAll(client: Client, query: string): Promise<WorkflowExecutionInfo[]> {
  const out: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query, pageSize: VISIBILITY_PAGE })) {
    out.push(info);
    if (out.length >= MAX_ROWS_PER_SECTION) break;
  }
  return out;
}

/** Signal ids, newest first (ReceivedAt, then signalId, descending), each once. */
function newestFirst(runs: readonly AccountRun[]): string[] {
  const at = new Map(runs.map((r) => [r.signalId, Date.parse(r.receivedAt)]));
  return [...at.keys()].sort((a, b) => at.get(b)! - at.get(a)! || (a < b ? 1 : -1));
}

/** An account workflow's row; undefined for one started before it carried what the log needs. */
function accountRun(info: WorkflowExecutionInfo): AccountRun | undefined {
  const sa = info.typedSearchAttributes;
  const signalId = sa.get(SignalIdKey);
  const accountId = sa.get(AccountIdKey);
  const receivedAt = sa.get(ReceivedAtKey);
  if (signalId === undefined || accountId === undefined || receivedAt === undefined) return undefined;
  const status = info.status.name;
  const outcome = sa.get(OutcomeKey);
  return {
    signalId,
    accountId,
    action: sa.get(ActionKey) ?? '',
    symbol: sa.get(SymbolKey) ?? null,
    receivedAt: receivedAt.toISOString(),
    state: status === 'RUNNING' ? 'running' : status === 'COMPLETED' ? 'completed' : 'stopped',
    outcome: outcome === 'filled' || outcome === 'done' || outcome === 'rejected' ? outcome : null,
    reason: sa.get(ReasonKey) ?? null,
    closedAt: info.closeTime?.toISOString() ?? null,
    execution: executionReport(info.memo?.execution),
  };
}

/** The account workflow's `execution` memo (workflows/account.ts), taken field by field: nothing else passes. */
function executionReport(memo: unknown): ExecutionReport | null {
  if (typeof memo !== 'object' || memo === null) return null;
  const { volume, price, message } = memo as Record<string, unknown>;
  const finite = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : null);
  return { volume: finite(volume), price: finite(price), message: typeof message === 'string' ? message.slice(0, 512) : null };
}
