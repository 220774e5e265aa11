/**
 * Scenario 9, the floor side by side: the bare topology (bench/bare/) on the same Temporal server, in the same run,
 * as our signal path; its variants measure eager start and search attributes at the start against an upsert.
 */
import { runChild } from '../children';
import { log } from '../common';
import type { BareFloorResult, BareFloorSpec } from '../bare/floor';
import { CONCURRENCY } from '../parameters';
import type { Context } from './context';

export async function runBareFloor(ctx: Context): Promise<void> {
  const { stack, plan, results, mark, measure, drainMeasured } = ctx;
  mark('bareFloor');
  const variants: BareFloorSpec['variants'] = [
    { name: 'plain', eager: false, searchAttributes: 'start' },
    { name: 'eager', eager: true, searchAttributes: 'start' },
    { name: 'upsert', eager: false, searchAttributes: 'upsert' },
  ];
  log(
    `scenario 9 (bare topology): parent → child → local activity → Update → complete, no application code; per variant (${variants.map((v) => v.name).join(', ')}) ${plan.bareOneAtATime} one at a time, then ${CONCURRENCY} closed loops for ${plan.bareSec} s`,
  );
  const spec: BareFloorSpec = {
    temporalAddress: stack.temporal.address,
    namespace: 'default',
    taskQueue: `${stack.taskQueue}-bare`,
    temporalPgid: stack.temporal.pid,
    ...(stack.temporalMetricsPort ? { temporalMetricsPort: stack.temporalMetricsPort } : {}),
    concurrency: CONCURRENCY,
    durationSec: plan.bareSec,
    oneAtATime: plan.bareOneAtATime,
    warmup: 20,
    variants,
  };
  const deadlineMs = (variants.length * (plan.bareSec + plan.bareOneAtATime * 0.5 + 30) + 60) * 1000;
  const bare = await measure('bareFloor', () => runChild<BareFloorResult>(stack.runDir, 'scenario9-bare-floor', 'bare/floor', spec, deadlineMs));
  results.bareFloor = bare;
  for (const v of bare.variants) {
    log(
      `bare ${v.name}: one at a time start p50 ${v.one.startMs.p50} ms, start → handed out p50 ${v.one.handOutMs.p50} ms, → complete p50 ${v.one.completeMs.p50} ms (${v.one.eagerlyStarted} of ${v.one.signals} eager); ` +
        `sustained ${v.sustained.perSec}/s at ${v.sustained.concurrency} loops, complete p50 ${v.sustained.completeMs.p50} ms p99 ${v.sustained.completeMs.p99} ms; ` +
        `${v.sustained.persistence?.callsPerSignal ?? '—'} persistence calls and ${v.sustained.temporalCpuMsPerSignal ?? '—'} ms Temporal CPU per signal; history ${JSON.stringify(v.history ?? null)}`,
    );
  }
  results.drains.bareFloor = await drainMeasured('bareFloor', 'scenario 9', 100);
}
