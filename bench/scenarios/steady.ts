/**
 * Scenarios 3, 5 and 6 in one steady phase: end-to-end latency (202 → filled in the paper bridge's ledger), the poll's
 * latency beside it, and the peak memory of the programs.
 */
import { describeLoad, loadDeadline, loadSpec, runChild } from '../children';
import { httpJson, log, StageError } from '../common';
import type { AcceptedRecord, LoadResult } from '../load';
import { RssSampler, type MemoryFigures } from '../memory';
import { tallyOutcomes } from '../outcomes';
import { STEADY_ACCOUNTS } from '../parameters';
import { summarize } from '../stats';
import type { Context } from './context';

export async function runSteady(ctx: Context, pollIds: string[]): Promise<void> {
  const { stack, helpers, opts, plan, results, mark, measure, drainMeasured, signalWorkflows, unanswered } = ctx;
  mark('steady');
  const workflowsBeforeSteady = await signalWorkflows();
  const steadyAccounts = stack.accounts.slice(0, STEADY_ACCOUNTS);
  log(
    `scenarios 3, 5, 6: ${opts.steadyRate} signals/s on ${STEADY_ACCOUNTS} accounts for ${plan.steadySec} s, ${opts.pollRate > 0 ? `the poll at ${opts.pollRate}/s beside it` : 'no poll beside it'}, RSS every 250 ms`,
  );
  const sampler = new RssSampler((['ingress', 'worker', 'bridge'] as const).flatMap((name) => (stack.pids[name] ? [{ name, pid: stack.pids[name] }] : [])));
  sampler.start(250);
  let memory: Record<string, MemoryFigures>;
  let load: LoadResult;
  let poll: LoadResult;
  try {
    const idle: LoadResult = {
      label: 'poll (off)',
      kind: 'poll',
      mode: 'paced',
      connections: 0,
      instances: 0,
      targetRate: 0,
      durationSec: 0,
      startedAt: 0,
      endedAt: 0,
      elapsedMs: 0,
      requests: 0,
      sent: 0,
      statusCounts: {},
      errors: 0,
      timeouts: 0,
      okLatencyMs: summarize([]),
      allLatencyMs: summarize([]),
      okPerSec: 0,
    };
    [load, poll] = await measure(
      'steady',
      () =>
        Promise.all([
          runChild<LoadResult>(
            stack.runDir,
            'scenario3-steady',
            'load',
            loadSpec(stack, {
              label: 'steady',
              kind: 'webhook',
              durationSec: plan.steadySec,
              rate: opts.steadyRate,
              secret: stack.secret,
              accounts: steadyAccounts,
              recordAccepted: true,
            }),
            loadDeadline(plan.steadySec),
          ),
          opts.pollRate > 0
            ? runChild<LoadResult>(
                stack.runDir,
                'scenario5-poll',
                'load',
                loadSpec(stack, { label: 'poll', kind: 'poll', durationSec: plan.steadySec, rate: opts.pollRate, token: stack.token, signalIds: pollIds }),
                loadDeadline(plan.steadySec),
              )
            : Promise.resolve(idle),
        ]),
      ([l]) => l.statusCounts['202'] ?? 0,
    );
  } finally {
    memory = sampler.stop();
  }
  log(`steady load: ${describeLoad(load)}`);
  log(`poll beside it: ${describeLoad(poll)}`);
  log(
    `memory: ${Object.entries(memory)
      .map(([k, v]) => `${k} peak ${v.peakRssMb} MB (VmHWM ${v.hwmMb} MB)`)
      .join(', ')}`,
  );

  const accepted: AcceptedRecord[] = load.accepted ?? [];
  // Wait for the fills: every accepted signal in the ledger, or nothing running any more (the rest were refused).
  // On the deadline the figures measured so far are kept (the scenario is still reported as failed).
  let running = -1;
  let incomplete: string | undefined;
  const fillDeadlineMs = 120_000 + accepted.length * 200;
  await helpers.infra
    .waitFor(
      `the ${accepted.length} signals of scenario 3 to be filled (or finished)`,
      async () => {
        stack.ledger.update();
        if (accepted.every((a) => stack.ledger.bySignal.has(a.signalId))) return true;
        running = (await stack.client.workflow.count('ExecutionStatus="Running"')).count;
        return running === 0;
      },
      fillDeadlineMs,
      500,
    )
    .catch((err: Error) => {
      incomplete = `scenario 3: ${err.message} (${running} workflows still running); the end-to-end figures cover the signals filled by then`;
    });
  stack.ledger.update();
  const e2e: number[] = [];
  let notFilled = 0;
  for (const a of accepted) {
    const fill = stack.ledger.bySignal.get(a.signalId)?.[0];
    if (fill) e2e.push(fill.t - a.t202);
    else notFilled++;
  }
  // Cross-check a sample against the recorded outcomes (the poll's occurredAt).
  const sample = accepted.filter((_, i) => i % Math.max(1, Math.floor(accepted.length / 40)) === 0).slice(0, 40);
  let checkFilled = 0;
  let maxDiff: number | null = null;
  for (const a of sample) {
    const r = await httpJson(`${stack.ingress.url}/v1/signals/${a.signalId}`, { headers: { authorization: `Bearer ${stack.token}` } }).catch(() => ({
      status: 0,
      body: undefined,
    }));
    const item = r.status === 200 ? (r.body.accounts?.[0] as { outcome: string; occurredAt: string } | undefined) : undefined;
    if (item?.outcome === 'filled') {
      checkFilled++;
      const fill = stack.ledger.bySignal.get(a.signalId)?.[0];
      if (fill) maxDiff = Math.max(maxDiff ?? 0, Math.abs(Date.parse(item.occurredAt) - fill.t));
    }
  }
  results.steady = {
    load,
    poll,
    accepted: accepted.length,
    filled: e2e.length,
    notFilled,
    incomplete: incomplete !== undefined,
    e2eMs: summarize(e2e),
    check: { sampled: sample.length, filled: checkFilled, maxAbsOccurredVsLedgerMs: maxDiff },
    memory,
  };
  log(
    `end to end: ${e2e.length} filled of ${accepted.length}, p50 ${results.steady.e2eMs.p50} ms, p99 ${results.steady.e2eMs.p99} ms; sample check ${checkFilled}/${sample.length} filled, |occurredAt − ledger| ≤ ${maxDiff} ms`,
  );
  results.drains.steady = await drainMeasured('steady', 'scenario 3', accepted.length);
  results.steady.outcomes = await tallyOutcomes(
    httpJson,
    stack.ingress.url,
    stack.token,
    accepted.map((a) => a.signalId),
  );
  log(`outcomes of the ${accepted.length} accepted: ${JSON.stringify(results.steady.outcomes)}`);
  await unanswered('steady', workflowsBeforeSteady, load);
  if (incomplete) throw new StageError(incomplete);
}
