/** Scenario 7: one signal at a time, 202 → filled and 202 → visible to the poll, as a single caller sees them. */
import { httpJson, log } from '../common';
import { oneAtATime } from '../outcomes';
import type { Context } from './context';

export async function runOneAtATime(ctx: Context): Promise<void> {
  const { stack, plan, results, mark, measure, drainMeasured } = ctx;
  mark('oneAtATime');
  log(`scenario 7: ${plan.oneAtATime} signals one at a time over 10 accounts: 202 → filled (ledger) and 202 → visible to the poll`);
  results.oneAtATime = await measure(
    'oneAtATime',
    () =>
      oneAtATime({
        http: httpJson,
        ingressUrl: stack.ingress.url,
        secret: stack.secret,
        token: stack.token,
        accounts: stack.accounts.slice(0, 10),
        count: plan.oneAtATime,
        fillTimeOf: (id) => {
          stack.ledger.update();
          return stack.ledger.bySignal.get(id)?.[0]?.t;
        },
        deadlineMs: 30_000,
      }),
    (r) => r.signals,
  );
  log(
    `one at a time: filled p50 ${results.oneAtATime.filledMs.p50} ms p99 ${results.oneAtATime.filledMs.p99} ms; visible p50 ${results.oneAtATime.visibleMs.p50} ms p99 ${results.oneAtATime.visibleMs.p99} ms`,
  );
  results.drains.oneAtATime = await drainMeasured('oneAtATime', 'scenario 7', plan.oneAtATime);
}
