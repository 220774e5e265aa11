/**
 * The stages bench's reading of workflow histories: where the time of 202 → filled → recorded goes, from the event
 * times of each signal's parent and child histories (bench/stages.ts).
 */
import { signalWorkflowId } from '../src/domain/ids';
import type { Stack } from './stack';
import { summarize, type Summary } from './stats';

type Ev = { eventType?: number | null; eventTime?: { seconds?: unknown; nanos?: number | null } | null };
const T = {
  STARTED: 1,
  COMPLETED: 2,
  WFT_SCHEDULED: 5,
  WFT_STARTED: 6,
  WFT_COMPLETED: 7,
  ACT_SCHEDULED: 10,
  ACT_STARTED: 11,
  ACT_COMPLETED: 12,
  SIGNALED: 26,
  UPDATE_ACCEPTED: 41,
  CHILD_INITIATED: 29,
  CHILD_STARTED: 31,
  CHILD_COMPLETED: 32,
  PROPERTIES_MODIFIED: 46,
};

function ms(e: Ev | undefined): number | undefined {
  if (!e?.eventTime) return undefined;
  return Number(e.eventTime.seconds) * 1000 + (e.eventTime.nanos ?? 0) / 1e6;
}

/**
 * Where the time of 202 → filled → recorded goes, from the event times of each signal's two workflow histories
 * (server clock, same machine) plus the client's 202 and the paper bridge's ledger time.
 */
export async function timeline(
  stack: Stack,
  signals: { signalId: string; accountId: string; t202: number; fill: number }[],
  /** Where the history events and workflow tasks per signal are counted (the bench's work per signal). */
  work: { historyEvents?: { parent: number; child: number }; workflowTasks?: { parent: number; child: number } },
): Promise<Record<string, Summary>> {
  const seg: Record<string, number[]> = {};
  const add = (k: string, a: number | undefined, b: number | undefined) => {
    if (a === undefined || b === undefined) return;
    (seg[k] ??= []).push(Math.round((b - a) * 10) / 10);
  };
  const counts = { parentEvents: 0, childEvents: 0, parentTasks: 0, childTasks: 0 };
  for (const s of signals) {
    const parent = ((await stack.client.workflow.getHandle(signalWorkflowId(s.signalId)).fetchHistory()).events ?? []) as Ev[];
    const child = ((await stack.client.workflow.getHandle(`signal/${s.signalId}/account/${s.accountId}`).fetchHistory()).events ?? []) as Ev[];
    counts.parentEvents += parent.length;
    counts.childEvents += child.length;
    counts.parentTasks += parent.filter((e) => e.eventType === T.WFT_COMPLETED).length;
    counts.childTasks += child.filter((e) => e.eventType === T.WFT_COMPLETED).length;
    const first = (evs: Ev[], type: number, after = 0) => evs.slice(after).find((e) => e.eventType === type);
    const idx = (evs: Ev[], type: number, after = 0) => evs.findIndex((e, i) => i >= after && e.eventType === type);
    const pStart = ms(first(parent, T.STARTED));
    const pWftSched = ms(first(parent, T.WFT_SCHEDULED));
    const pWftStart = ms(first(parent, T.WFT_STARTED));
    const pWftDone = ms(first(parent, T.WFT_COMPLETED));
    const pChildStarted = ms(first(parent, T.CHILD_STARTED));
    const pChildDone = idx(parent, T.CHILD_COMPLETED);
    const pRecorded = ms(first(parent, T.PROPERTIES_MODIFIED, Math.max(0, pChildDone)));
    const cStart = ms(first(child, T.STARTED));
    const cWftStart = ms(first(child, T.WFT_STARTED));
    const cWftDone = ms(first(child, T.WFT_COMPLETED));
    const cActSched = ms(first(child, T.ACT_SCHEDULED));
    const cActStart = ms(first(child, T.ACT_STARTED));
    const cActDone = ms(first(child, T.ACT_COMPLETED));
    // The report arrives as an Update (a Signal only when no worker answered in time).
    const sigIdx = child.findIndex((e) => e.eventType === T.SIGNALED || e.eventType === T.UPDATE_ACCEPTED);
    const cSignaled = ms(child[sigIdx]);
    const cDone = ms(first(child, T.COMPLETED));
    add('T1  start RPC returned → 202 at the client (response path)', pStart, s.t202);
    add('T2  parent started → its first workflow task picked up (dispatch)', pStart, pWftStart);
    add('T3  parent first workflow task on the worker', pWftStart, pWftDone);
    add('T4  parent task done → child started (server)', pWftDone, pChildStarted ?? cStart);
    add('T5  child started → its first workflow task picked up', cStart, cWftStart);
    add('T6  child first workflow task on the worker', cWftStart, cWftDone);
    // dispatchCommand as a (remote) activity has its own events; as a local activity it runs inside the task (T6).
    add('T7  activity scheduled → picked up', cActSched, cActStart);
    add('T8  activity (dispatchCommand: Redis enqueue) → completed', cActStart, cActDone);
    add('T9  child task picked up → filled at the bridge (dispatch, wake, take, HTTP, execute)', cWftStart, s.fill);
    add('T10 filled → report taken by the child (report POST, update)', s.fill, cSignaled);
    add('T11 report taken → child completed', cSignaled, cDone);
    add('T12 child completed → outcome in the parent memo (poll sees it)', cDone, pRecorded);
    add('T13 202 → outcome in the parent memo (recorded end to end)', s.t202, pRecorded);
    add('T0  parent started → first workflow task scheduled', pStart, pWftSched);
  }
  const per = (v: number) => Math.round((v / Math.max(signals.length, 1)) * 10) / 10;
  work.historyEvents = { parent: per(counts.parentEvents), child: per(counts.childEvents) };
  work.workflowTasks = { parent: per(counts.parentTasks), child: per(counts.childTasks) };
  return Object.fromEntries(
    Object.entries(seg)
      .sort(([a], [b]) => Number(a.slice(1, 3)) - Number(b.slice(1, 3)))
      .map(([k, v]) => [`E2E ${k}`, summarize(v)]),
  );
}
