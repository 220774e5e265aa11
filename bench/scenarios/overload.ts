/** Scenario 8, overload at twice the sustained rate: the excess refused at once, nothing accepted left to expire. */
import { describeLoad, loadDeadline, loadSpec, runChild } from '../children';
import { httpJson, log } from '../common';
import type { LoadResult } from '../load';
import { tallyOutcomes } from '../outcomes';
import { STEADY_ACCOUNTS } from '../parameters';
import type { Context } from './context';

export async function runOverload(ctx: Context): Promise<void> {
  const { stack, opts, plan, results, mark, measure, drainMeasured, signalWorkflows, unanswered } = ctx;
  mark('overload');
  // What the stack sustains: the best of the closed-loop saturation (where a storm of instant 503s competes for
  // the CPU) and the steady phase's accepted rate; the steady rate itself when neither ran.
  const steadyRate = results.steady ? results.steady.accepted / plan.steadySec : 0;
  const sustainedRate = Math.round(Math.max(results.saturation?.okPerSec ?? 0, steadyRate) || opts.steadyRate);
  const offeredRate = Math.min(1000, 2 * sustainedRate);
  const workflowsBefore = await signalWorkflows();
  log(
    `scenario 8 (overload): ${offeredRate} signals/s (twice ${sustainedRate}/s, what scenarios 2 and 3 sustained) over ${STEADY_ACCOUNTS} accounts for ${plan.overloadSec} s`,
  );
  const load = await measure(
    'overload',
    () =>
      runChild<LoadResult>(
        stack.runDir,
        'scenario8-overload',
        'load',
        loadSpec(stack, {
          label: 'overload',
          kind: 'webhook',
          durationSec: plan.overloadSec,
          rate: offeredRate,
          secret: stack.secret,
          accounts: stack.accounts.slice(0, STEADY_ACCOUNTS),
          recordAccepted: true,
        }),
        loadDeadline(plan.overloadSec),
      ),
    (l) => l.statusCounts['202'] ?? 0,
  );
  log(`overload: ${describeLoad(load)}; 503 p50 ${load.refusedLatencyMs?.p50 ?? '—'} ms p99 ${load.refusedLatencyMs?.p99 ?? '—'} ms`);
  const accepted = load.accepted ?? [];
  results.drains.overload = await drainMeasured('overload', 'scenario 8', accepted.length);
  const outcomes = await tallyOutcomes(
    httpJson,
    stack.ingress.url,
    stack.token,
    accepted.map((a) => a.signalId),
  );
  log(`outcomes of the ${accepted.length} accepted under overload: ${JSON.stringify(outcomes)}`);
  results.overload = { load, offeredRate, sustainedRate, outcomes };
  await unanswered('overload', workflowsBefore, load);
}
