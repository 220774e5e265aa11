/** Scenario 1, the floor: signalWorkflow started straight through @temporalio/client, without the ingress. */
import { runChild } from '../children';
import { log } from '../common';
import type { FloorResult, FloorSpec } from '../floor';
import { CONCURRENCY, MAX_SIGNAL_AGE_MS } from '../parameters';
import type { Context } from './context';
import { signalWorkflow } from '../../workflows/signal';

export async function runFloor(ctx: Context): Promise<void> {
  const { stack, plan, results, mark, measure, drainMeasured } = ctx;
  mark('floor');
  log(`scenario 1 (floor): ${signalWorkflow.name} started straight through @temporalio/client, concurrency ${CONCURRENCY}, ${plan.floorSec} s`);
  const spec: FloorSpec = {
    temporalAddress: stack.temporal.address,
    namespace: 'default',
    taskQueue: stack.taskQueue,
    redisUrl: stack.redis.url,
    accounts: stack.accounts,
    concurrency: CONCURRENCY,
    durationSec: plan.floorSec,
    warmupStarts: 100,
    maxSignalAgeMs: MAX_SIGNAL_AGE_MS,
    symbol: 'EURUSD',
    volume: 0.01,
  };
  const floor = await measure(
    'floor',
    () => runChild<FloorResult>(stack.runDir, 'scenario1-floor', 'floor', spec, (plan.floorSec + 90) * 1000),
    (f) => f.starts,
  );
  results.floor = floor;
  log(
    `floor: ${floor.starts} starts, ${floor.startsPerSec.toFixed(1)}/s, start p50 ${floor.startLatencyMs.p50?.toFixed(1)} ms, p99 ${floor.startLatencyMs.p99?.toFixed(1)} ms, errors ${floor.errors}`,
  );
  results.drains.floor = await drainMeasured('floor', 'scenario 1', floor.starts + 100);
}
