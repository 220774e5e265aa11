/** Scenario 4, the fan-out: one broadcast to every account, until the poll shows all their outcomes. */
import { setTimeout as sleep } from 'node:timers/promises';
import { temporal } from '@temporalio/proto';
import { httpJson, log, StageError } from '../common';
import { ACCOUNTS, BROADCAST_SMALL } from '../parameters';
import type { Stack } from '../stack';
import type { Context } from './context';

export interface FanoutRun {
  /** The broadcast's accounts (every account the secret links). */
  accounts: number;
  signalId: string;
  accountsResolved: number;
  acceptMs: number;
  /** max(occurredAt) − the 202. */
  allReportedMs: number;
  /** Earliest occurredAt − the 202. */
  firstReportedMs: number;
  /** When the poll first answered reported = 200 (depends on the 100 ms poll interval). */
  observedMs: number;
  filled: number;
  rejected: number;
  polls: number;
  /** The signal workflow's history once closed (Temporal's limits: 51,200 events and 50 MB; 2 MB per payload). */
  parentHistory?: { events: number; bytes: number; startedEventBytes: number };
}

async function fanoutOnce(stack: Stack, deadlineMs: number, secret: string, accounts: number): Promise<FanoutRun> {
  const t0 = Date.now();
  const res = await httpJson(`${stack.ingress.url}/webhook/custom`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 }),
  });
  const t202 = Date.now();
  if (res.status !== 202) throw new StageError(`fan-out: the broadcast answered ${res.status} ${JSON.stringify(res.body)} instead of 202`);
  const signalId = res.body.signalId as string;
  let polls = 0;
  let last: { reported: number; accounts: { outcome: string; occurredAt: string }[] };
  const deadline = t202 + deadlineMs;
  for (;;) {
    polls++;
    const poll = await httpJson(`${stack.ingress.url}/v1/signals/${signalId}`, { headers: { authorization: `Bearer ${stack.token}` } });
    if (poll.status !== 200) throw new StageError(`fan-out: the poll answered ${poll.status} ${JSON.stringify(poll.body)}`);
    last = poll.body;
    if (last.reported >= accounts) break;
    if (Date.now() >= deadline) {
      throw new StageError(
        `fan-out: only ${last.reported} of ${accounts} outcomes recorded ${Math.round(deadlineMs / 1000)} s after the 202 (signal ${signalId})`,
      );
    }
    await sleep(100);
  }
  const observed = Date.now();
  const times = last.accounts.map((a) => Date.parse(a.occurredAt));
  const parentHistory = await historySize(stack, signalId).catch(() => undefined);
  return {
    accounts,
    signalId,
    accountsResolved: res.body.accountsResolved as number,
    acceptMs: t202 - t0,
    allReportedMs: Math.max(...times) - t202,
    firstReportedMs: Math.min(...times) - t202,
    observedMs: observed - t202,
    filled: last.accounts.filter((a) => a.outcome === 'filled').length,
    rejected: last.accounts.filter((a) => a.outcome === 'rejected').length,
    polls,
    ...(parentHistory ? { parentHistory } : {}),
  };
}

/** Events and encoded bytes of a signal workflow's history, once it has closed. */
async function historySize(stack: Stack, signalId: string): Promise<{ events: number; bytes: number; startedEventBytes: number }> {
  const handle = stack.client.workflow.getHandle(`signal/${signalId}`);
  await handle.result();
  const history = await handle.fetchHistory();
  const { History, HistoryEvent } = temporal.api.history.v1;
  const first = history.events?.[0];
  return {
    events: history.events?.length ?? 0,
    bytes: History.encode(history).finish().byteLength,
    startedEventBytes: first ? HistoryEvent.encode(first).finish().byteLength : 0,
  };
}

export async function runFanout(ctx: Context): Promise<void> {
  const { stack, plan, results, mark, measure, drainMeasured } = ctx;
  mark('fanout');
  results.fanout = { runs: [] };
  // One broadcast to the first BROADCAST_SMALL accounts, then the runs to all of them.
  const broadcasts = [
    { label: `fanout${BROADCAST_SMALL}`, secret: stack.secretSmall, accounts: BROADCAST_SMALL },
    ...Array.from({ length: plan.fanoutRuns }, (_, i) => ({ label: `fanout${i + 1}`, secret: stack.secret, accounts: ACCOUNTS })),
  ];
  for (const [i, b] of broadcasts.entries()) {
    log(`scenario 4 (fan-out): one broadcast buy to ${b.accounts} accounts (run ${i + 1} of ${broadcasts.length})`);
    const run = await measure(
      b.label,
      () => fanoutOnce(stack, 120_000, b.secret, b.accounts),
      () => b.accounts,
    );
    results.fanout.runs.push(run);
    log(
      `fan-out: 202 in ${run.acceptMs} ms; all ${b.accounts} reported ${run.allReportedMs} ms after it (first ${run.firstReportedMs} ms; poll saw it at ${run.observedMs} ms); ${run.filled} filled, ${run.rejected} rejected; parent history ${JSON.stringify(run.parentHistory ?? null)}`,
    );
    results.drains[b.label] = await drainMeasured(b.label, `fan-out run ${i + 1}`, b.accounts);
  }
}
