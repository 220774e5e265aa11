import {
  condition,
  patched,
  proxyLocalActivities,
  proxySinks,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { OutcomeSinks } from './sinks';
import { bridgeReportSignal, bridgeReportUpdate, withdrawCommandSignal, type WithdrawReason } from './messages';
import type { Activities } from '../activities';
import type { BridgeReport } from '../src/domain/bridge-protocol';
import type { WithdrawResult } from '../src/bridge/queue';
import { commandFor } from '../src/risk/command';
import { outcomeOfReport, type AccountOutcome } from '../src/domain/outcome';
import type { AccountWorkflowInput } from '../src/domain/workflow-input';
import { OutcomeKey, ReasonKey } from '../src/temporal/search-attributes';

const WITHDRAW_REASONS: ReadonlySet<string> = new Set<WithdrawReason>(['account_owner_changed']);

/**
 * The activities are single Redis calls, so they run as local activities: in the worker that runs the workflow task,
 * with no extra round trip through Temporal's task queues. Redis blips are transient: retry quickly, then less often.
 */
const QUEUE_RETRY = { initialInterval: '100ms', backoffCoefficient: 2, maximumInterval: '5s' } as const;

const { outcomes } = proxySinks<OutcomeSinks>();

/** Withdrawing is what keeps us from reporting `rejected` for an order that may be live, so it retries until it answers. */
const {
  withdrawCommand,
  releaseSequence,
  dispatchCommand: redispatchCommand,
  recordedReport,
} = proxyLocalActivities<Activities>({ startToCloseTimeout: '5s', retry: QUEUE_RETRY });

/**
 * Past its expiry, a workflow still without the report of a command a bridge took looks for it in Redis, first after
 * this long, then twice as long each time up to REPORT_LOOK_MAX_MS (a few history events per look, so a bridge that
 * stays away for days costs a bounded history: about 150 looks a day).
 */
const REPORT_LOOK_FIRST_MS = 5_000;
const REPORT_LOOK_MAX_MS = 10 * 60_000;

/**
 * One signal on one account: the owner's risk rules on the snapshot taken at acceptance, one bridge command,
 * then the bridge's report. Never reports `rejected` for a command a bridge may have executed.
 */
export async function accountWorkflow(input: AccountWorkflowInput): Promise<AccountOutcome> {
  const { signal, target } = input;
  const accountId = target.account.id;
  const commandId = workflowInfo().workflowId;
  let report: BridgeReport | undefined;
  const take = (r: BridgeReport): 'recorded' | 'duplicate' => {
    if (report !== undefined) return 'duplicate';
    report = r;
    return 'recorded';
  };
  setHandler(bridgeReportUpdate, take, {
    validator: (r: BridgeReport) => {
      if (r.commandId !== commandId) throw new Error(`report for ${r.commandId} sent to ${commandId}`);
    },
  });
  setHandler(bridgeReportSignal, (r) => {
    if (r.commandId === commandId) take(r);
  });
  let withdrawal: WithdrawReason | undefined;
  setHandler(withdrawCommandSignal, (reason) => {
    if (WITHDRAW_REASONS.has(reason)) withdrawal ??= reason;
  });

  const finish = (outcome: Omit<AccountOutcome, 'accountId' | 'occurredAt'>, occurredAt?: string): AccountOutcome => {
    // A rejection stays a Completed workflow (the business outcome is its result, not a failure); Outcome and Reason
    // are what an operator filters on: `Outcome = "rejected" AND Reason = "bridge_offline"`.
    upsertSearchAttributes([
      { key: OutcomeKey, value: outcome.outcome },
      ...(outcome.reason ? [{ key: ReasonKey, value: reasonKeyword(outcome.reason) }] : []),
    ]);
    outcomes.record(outcome.outcome, outcome.reason, signal.action, target.account.platform);
    setCurrentDetails(outcome.reason ? `${outcome.outcome}: ${outcome.reason}` : outcome.outcome);
    return { accountId, ...outcome, occurredAt: occurredAt ?? new Date(Date.now()).toISOString() };
  };
  const rejected = (reason: string) => finish({ outcome: 'rejected', ticket: null, reason });

  const expiresAtMs = Date.parse(target.expiresAt);
  // The ingress may have queued the command at acceptance (dispatch at acceptance): then this workflow supervises it.
  const early = target.dispatchedAtAcceptance === true;
  const plan = commandFor(input, commandId, Date.now());
  // Late past its expiry, a command the ingress may have queued is decided by the queue and the bridge, never by the
  // plan alone: a bridge may have taken it while it was fresh.
  const command = plan.ok ? plan.command : early ? plan.expired : undefined;
  if (!plan.ok && command === undefined) {
    // The ingress applied these same rules to the same snapshot and queued nothing; the tombstone keeps a late enqueue
    // (an ingress of another version) out, and a bridge that holds this commandId anyway has the last word.
    const state = early ? await withdrawCommand(accountId, commandId, false) : 'withdrawn';
    if (state !== 'withdrawn') return reportedOutcome(await awaitBridgeWord(state));
    await releaseSequence(accountId, target.seq, target.expiresAt, input.signalId);
    return rejected(plan.reason);
  }
  if (!plan.ok) await releaseSequence(accountId, target.seq, target.expiresAt, input.signalId);

  let queued = true;
  if (plan.ok) {
    try {
      const { dispatchCommand, adoptCommand } = proxyLocalActivities<Activities>({
        startToCloseTimeout: '5s',
        scheduleToCloseTimeout: Math.max(expiresAtMs - Date.now(), 1000),
        retry: QUEUE_RETRY,
      });
      if (early) {
        const adopted = await adoptCommand(plan.command);
        if (adopted.state === 'overtaken') return rejected('signal_overtaken');
        if (adopted.state === 'reported') take(adopted.report);
        // Withdrawn before this workflow ran (its account changed owner): the wait below ends it so.
        if (adopted.state === 'withdrawn') withdrawal ??= 'account_owner_changed';
      }
      // Its number lapsed (its ingress died before confirming the start) and a later signal already ran: not queued.
      else if ((await dispatchCommand(plan.command)) === 'overtaken') return rejected('signal_overtaken');
    } catch {
      queued = false;
    }
  }
  // The last attempt may still have queued it: only a withdrawn command is safely not an order.
  if (!queued && (await withdrawCommand(accountId, commandId, false)) === 'withdrawn') {
    await releaseSequence(accountId, target.seq, target.expiresAt, input.signalId);
    return rejected('dispatch_failed');
  }

  const waiting = { summary: `${accountId}'s bridge report for ${commandId.split('/')[1]}, until ${target.expiresAt}` };
  // The UI's "Current Details" of a running account workflow (a query answer, not history: replays as it ran).
  setCurrentDetails(`waiting for ${waiting.summary}`);
  let withdrawAsked = false;
  const reported = () => report !== undefined || (withdrawal !== undefined && !withdrawAsked);
  while (plan.ok && (await condition(reported, Math.max(expiresAtMs - Date.now(), 1), waiting)) && report === undefined) {
    withdrawAsked = true;
    // Withdrawn by us or by whoever asked: no bridge can take it now. Taken meanwhile: the bridge's word decides.
    if ((await withdrawCommand(accountId, commandId, queued)) === 'withdrawn') return rejected(withdrawal!);
  }
  if (report === undefined) {
    const state = await withdrawCommand(accountId, commandId, queued);
    // Queued all its life (by us, or by the ingress at acceptance) and never taken: no bridge was there for it.
    if (state === 'withdrawn') return rejected('bridge_offline');
    // Redis forgot a command it had queued (it restarted without its data), or, dispatched at acceptance, its ingress
    // may have died before queueing it: a bridge may have taken it. Queue it again: the bridge executes a commandId at
    // most once, so it answers with what it did, or `expired`.
    if (state === 'forgotten') await redispatchCommand(command!, { resend: true });
    await awaitBridgeWord(state);
  }
  return reportedOutcome(report!);

  function reportedOutcome(r: BridgeReport): AccountOutcome {
    // What the bridge placed, for the operator and the owner: the lots (sized by risk, the figures used), the price.
    if (patched('report-in-memo')) upsertMemo({ execution: { volume: r.volume ?? null, price: r.price ?? null, message: r.message ?? null } });
    return finish(outcomeOfReport(r, signal.action), r.executedAt ?? undefined);
  }

  /** A bridge took the command: the order may be live, so the bridge's word is the only outcome. */
  async function awaitBridgeWord(state: WithdrawResult): Promise<BridgeReport> {
    if (patched('report-from-redis')) {
      // The ingress answers a report once Redis holds it and hands it over after (src/bridge/report-courier.ts): a
      // hand-over lost with its ingress leaves the report in Redis only, where the workflow finds it.
      // Withdraw found the report recorded already: look at once.
      let look = state === 'reported' ? 0 : REPORT_LOOK_FIRST_MS;
      while (report === undefined) {
        if (look > 0 && (await condition(() => report !== undefined, look))) break;
        const recorded = await recordedReport(accountId, commandId);
        if (recorded !== null && recorded.commandId === commandId) take(recorded);
        look = Math.min(Math.max(look * 2, REPORT_LOOK_FIRST_MS), REPORT_LOOK_MAX_MS);
      }
    } else await condition(() => report !== undefined);
    return report!;
  }
}

/** A broker's diagnostic (`broker:10019 No money`) is filtered by its code, `broker:10019`; our own codes as they are. */
function reasonKeyword(reason: string): string {
  return reason.startsWith('broker:') ? reason.split(' ')[0]! : reason;
}
