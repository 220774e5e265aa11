/**
 * Scenario 14, a busy market then a bar close: BUSY_RATE alerts/s over STEADY_ACCOUNTS accounts for the busy phase
 * (20 s; 5 s with --quick), and the moment it ends a bar close of BAR_CLOSE_ACCOUNTS accounts, while the busy phase's
 * last signals may still be on their way. The floor's bar close of the same size comes first, on a quiet stack.
 */
import { describeLoad, loadDeadline, loadSpec, runChild } from '../children';
import { httpJson, log } from '../common';
import type { LoadResult } from '../load';
import { tallyOutcomes, type OutcomeTally } from '../outcomes';
import { BAR_CLOSE_ACCOUNTS, BUSY_RATE, STEADY_ACCOUNTS } from '../parameters';
import { summarize, type Summary } from '../stats';
import { barCloseBody, barClosePaths, describeRound, floorRounds, idleRates, ourRounds, type BarCloseRun } from './bar-close';
import type { Context } from './context';

export interface BusyBarClose {
  busy: {
    load: Omit<LoadResult, 'accepted'>;
    offered: number;
    accepted: number;
    /** Accepted busy-phase alerts with no fill in the ledger once everything had finished. */
    notFilled: number;
    /** The alert (its request set up) → its fill. */
    fillMs: Summary;
    outcomes: OutcomeTally;
  };
  /** The bar close's instant − the busy load's end (its own clock: autocannon done). */
  gapMs: number;
  barClose: BarCloseRun;
}

export async function runBusyBarClose(ctx: Context): Promise<BusyBarClose> {
  const { stack, plan, mark } = ctx;
  mark('busyBarClose');
  const label = 'busyBarClose';
  const accounts = stack.accounts.slice(0, BAR_CLOSE_ACCOUNTS);
  const paths = barClosePaths(accounts, 1);
  const body = barCloseBody(stack.secret);
  const what = `scenario 14 (busy ${BUSY_RATE}/s for ${plan.busySec} s, then a bar close of ${accounts.length})`;
  log(`${what}: the floor's bar close first, then the idle rates, the busy phase, and the bar close the moment it ends`);
  const floor = await floorRounds(await ctx.httpFloor(), paths, body, 1);
  log(describeRound(`${what}, floor`, floor.rounds[0]!));
  const idle = await idleRates(ctx);
  const busyRun = runChild<LoadResult>(
    stack.runDir,
    'scenario14-busy',
    'load',
    loadSpec(stack, {
      label: 'busy',
      kind: 'webhook',
      durationSec: plan.busySec,
      rate: BUSY_RATE,
      secret: stack.secret,
      accounts: stack.accounts.slice(0, STEADY_ACCOUNTS),
      recordAccepted: true,
    }),
    loadDeadline(plan.busySec),
  );
  // The bar close the moment the busy load has finished (its result read back: a few ms after its last answer).
  let at = 0;
  const ended = busyRun.then(() => (at = Date.now()));
  const ours = await ourRounds(ctx, label, what, paths, body, 1, { after: ended, idle, more: busyRun.then((l) => l.statusCounts['202'] ?? 0) });
  const load = await busyRun;
  log(`${what}, busy phase: ${describeLoad(load)}`);
  stack.ledger.update();
  const accepted = load.accepted ?? [];
  const fills = accepted.flatMap((a) => {
    const fill = stack.ledger.bySignal.get(a.signalId)?.[0];
    return fill ? [fill.t - (a.sent ?? a.t202)] : [];
  });
  const outcomes = await tallyOutcomes(
    httpJson,
    stack.ingress.url,
    stack.token,
    accepted.map((a) => a.signalId),
  );
  const offered = Math.max(Math.round(BUSY_RATE * plan.busySec), load.requests + load.errors + load.timeouts);
  const { accepted: _records, ...rest } = load;
  const result: BusyBarClose = {
    busy: { load: rest, offered, accepted: accepted.length, notFilled: accepted.length - fills.length, fillMs: summarize(fills), outcomes },
    gapMs: at - load.endedAt,
    barClose: { label, accounts: accounts.length, alertsPerAccount: 1, floor, ...ours },
  };
  log(
    `${what}: busy ${result.busy.accepted} of ${offered} accepted, ${result.busy.notFilled} not filled, alert → fill p99 ${result.busy.fillMs.p99} ms; outcomes ${JSON.stringify(outcomes)}; the bar close ${result.gapMs} ms after the busy load's end`,
  );
  return result;
}
