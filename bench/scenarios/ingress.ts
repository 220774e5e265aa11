/** Scenario 2, the ingress: accepted signals per second at saturation, then latency at half that rate. */
import { describeLoad, loadDeadline, loadSpec, runChild } from '../children';
import { log, StageError } from '../common';
import type { LoadResult } from '../load';
import { ACCOUNTS, CONCURRENCY } from '../parameters';
import type { Context } from './context';

export async function runIngress(ctx: Context): Promise<void> {
  const { stack, plan, results, mark, measure, drainMeasured, signalWorkflows, unanswered } = ctx;
  mark('saturation');
  const workflowsBeforeSat = await signalWorkflows();
  log(`scenario 2 (ingress): POST /webhook/custom/<account> over ${ACCOUNTS} accounts, ${CONCURRENCY} connections, ${plan.saturationSec} s`);
  const sat = await measure(
    'saturation',
    () =>
      runChild<LoadResult>(
        stack.runDir,
        'scenario2-saturation',
        'load',
        loadSpec(stack, {
          label: 'saturation',
          kind: 'webhook',
          durationSec: plan.saturationSec,
          connections: CONCURRENCY,
          secret: stack.secret,
          accounts: stack.accounts,
          recordAccepted: true,
          maxRecords: 200_000,
        }),
        loadDeadline(plan.saturationSec),
      ),
    (r) => r.statusCounts['202'] ?? 0,
  );
  results.saturation = sat;
  log(`saturation: ${describeLoad(sat)}`);
  if ((sat.statusCounts['202'] ?? 0) === 0) throw new StageError(`scenario 2: no 202 at all at saturation: ${JSON.stringify(sat.statusCounts)}`);
  results.drains.saturation = await drainMeasured('saturation', 'scenario 2 (saturation)', sat.statusCounts['202'] ?? 0);
  await unanswered('saturation', workflowsBeforeSat, sat);

  const halfRate = Math.max(1, Math.round(sat.okPerSec / 2));
  mark('half');
  const workflowsBeforeHalf = await signalWorkflows();
  log(`scenario 2 (ingress): the same at half the saturated rate, ${halfRate}/s paced, ${plan.halfSec} s`);
  const half = await measure(
    'half',
    () =>
      runChild<LoadResult>(
        stack.runDir,
        'scenario2-half',
        'load',
        loadSpec(stack, { label: 'half', kind: 'webhook', durationSec: plan.halfSec, rate: halfRate, secret: stack.secret, accounts: stack.accounts }),
        loadDeadline(plan.halfSec),
      ),
    (r) => r.statusCounts['202'] ?? 0,
  );
  results.half = half;
  log(`half rate: ${describeLoad(half)}`);
  results.drains.half = await drainMeasured('half', 'scenario 2 (half rate)', half.statusCounts['202'] ?? 0);
  await unanswered('half', workflowsBeforeHalf, half);
}
