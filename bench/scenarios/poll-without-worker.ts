/** Scenario 5, second half: the poll alone with the workers stopped (the first half runs beside scenario 3). */
import { describeLoad, loadDeadline, loadSpec, runChild } from '../children';
import { log, withDeadline } from '../common';
import type { LoadResult } from '../load';
import { POLL_RATE } from '../parameters';
import type { Context } from './context';

export async function runPollWithoutWorker(ctx: Context, pollIds: string[]): Promise<void> {
  const { stack, opts, plan, results, mark, measure } = ctx;
  mark('pollNoWorker');
  log('scenario 5: stopping the worker (SIGTERM), then the poll alone');
  await withDeadline('stopping the workers', 30_000, () => Promise.all([stack.worker, ...stack.moreWorkers].map((w) => w.stop(15_000))));
  log(`scenario 5: GET /v1/signals/<id> at ${opts.pollRate || POLL_RATE}/s for ${plan.pollNoWorkerSec} s, no worker running`);
  results.pollNoWorker = await measure('pollNoWorker', () =>
    runChild<LoadResult>(
      stack.runDir,
      'scenario5-poll-no-worker',
      'load',
      loadSpec(stack, {
        label: 'poll-no-worker',
        kind: 'poll',
        durationSec: plan.pollNoWorkerSec,
        rate: opts.pollRate || POLL_RATE,
        token: stack.token,
        signalIds: pollIds,
      }),
      loadDeadline(plan.pollNoWorkerSec),
    ),
  );
  log(`poll without a worker: ${describeLoad(results.pollNoWorker)}`);
}
