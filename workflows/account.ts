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
import type { BridgeCommand, BridgeReport } from '../src/domain/bridge-protocol';
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
  const run = new AccountSupervision(input);
  const plan = commandFor(input, run.commandId, Date.now());
  if (plan.ok) return run.supervise(plan.command);
  // Late past its expiry, a command the ingress may have queued is decided by the queue and the bridge, never by the
  // plan alone: a bridge may have taken it while it was fresh.
  if (run.early && plan.expired !== undefined) return run.settleExpired(plan.expired);
  return run.refuse(plan.reason);
}

/** The account workflow's state (the report, a withdrawal asked for) and its steps. */
class AccountSupervision {
  readonly accountId: string;
  readonly commandId = workflowInfo().workflowId;
  /** The ingress may have queued the command at acceptance (dispatch at acceptance): then this workflow supervises it. */
  readonly early: boolean;
  private readonly expiresAtMs: number;
  private report: BridgeReport | undefined;
  private withdrawal: WithdrawReason | undefined;

  constructor(private readonly input: AccountWorkflowInput) {
    this.accountId = input.target.account.id;
    this.early = input.target.dispatchedAtAcceptance === true;
    this.expiresAtMs = Date.parse(input.target.expiresAt);
    setHandler(bridgeReportUpdate, (r) => this.take(r), {
      validator: (r: BridgeReport) => {
        if (r.commandId !== this.commandId) throw new Error(`report for ${r.commandId} sent to ${this.commandId}`);
      },
    });
    setHandler(bridgeReportSignal, (r) => {
      if (r.commandId === this.commandId) this.take(r);
    });
    setHandler(withdrawCommandSignal, (reason) => {
      if (WITHDRAW_REASONS.has(reason)) this.withdrawal ??= reason;
    });
  }

  /** A fresh command: queue it (or adopt the ingress's), then wait for the report until its expiry. */
  async supervise(command: BridgeCommand): Promise<AccountOutcome> {
    const queued = await this.queue(command);
    if (typeof queued !== 'boolean') return queued;
    // The last attempt may still have queued it: only a withdrawn command is safely not an order.
    if (!queued && (await this.withdraw(false)) === 'withdrawn') {
      await this.releaseNumber();
      return this.rejected('dispatch_failed');
    }
    this.showWaiting();
    let withdrawAsked = false;
    const reported = () => this.report !== undefined || (this.withdrawal !== undefined && !withdrawAsked);
    while ((await condition(reported, Math.max(this.expiresAtMs - Date.now(), 1), this.waiting())) && this.report === undefined) {
      withdrawAsked = true;
      // Withdrawn by us or by whoever asked: no bridge can take it now. Taken meanwhile: the bridge's word decides.
      if ((await this.withdraw(queued)) === 'withdrawn') return this.rejected(this.withdrawal!);
    }
    return this.settle(command, queued);
  }

  /** Past its expiry when this first ran, a command the ingress may have queued: its number goes, the bridge decides. */
  async settleExpired(command: BridgeCommand): Promise<AccountOutcome> {
    await this.releaseNumber();
    this.showWaiting();
    return this.settle(command, true);
  }

  /**
   * Refused by the rules. The ingress applied these same rules to the same snapshot and queued nothing; the tombstone
   * keeps a late enqueue (an ingress of another version) out, and a bridge that holds this commandId anyway has the
   * last word.
   */
  async refuse(reason: string): Promise<AccountOutcome> {
    const state = this.early ? await withdrawCommand(this.accountId, this.commandId, false) : 'withdrawn';
    if (state !== 'withdrawn') return this.reportedOutcome(await this.awaitBridgeWord(state));
    await this.releaseNumber();
    return this.rejected(reason);
  }

  /** Queues the command, or adopts the one the ingress queued: true once queued, false if that is in doubt. */
  private async queue(command: BridgeCommand): Promise<boolean | AccountOutcome> {
    try {
      const { dispatchCommand, adoptCommand } = proxyLocalActivities<Activities>({
        startToCloseTimeout: '5s',
        scheduleToCloseTimeout: Math.max(this.expiresAtMs - Date.now(), 1000),
        retry: QUEUE_RETRY,
      });
      if (this.early) {
        const adopted = await adoptCommand(command, this.input.target.dataGeneration);
        if (adopted.state === 'overtaken') return this.rejected('signal_overtaken');
        if (adopted.state === 'reported') this.take(adopted.report);
        // Withdrawn before this workflow ran (its account changed owner): the wait ends it so.
        if (adopted.state === 'withdrawn') this.withdrawal ??= 'account_owner_changed';
      }
      // Its number lapsed (its ingress died before confirming the start) and a later signal already ran: not queued.
      else if ((await dispatchCommand(command, { generation: this.input.target.dataGeneration })) === 'overtaken') return this.rejected('signal_overtaken');
      return true;
    } catch {
      return false;
    }
  }

  /** The expiry passed without a report: withdraw it if no bridge took it, or wait for the bridge's word. */
  private async settle(command: BridgeCommand, queued: boolean): Promise<AccountOutcome> {
    if (this.report === undefined) {
      const state = await this.withdraw(queued);
      // Queued all its life (by us, or by the ingress at acceptance) and never taken: no bridge was there for it.
      if (state === 'withdrawn') return this.rejected('bridge_offline');
      // Redis forgot a command it had queued (it lost its data since the numbering: restarted empty, flushed, failed
      // over to an empty replica), or, dispatched at acceptance, its ingress may have died before queueing it: a bridge
      // may have taken it. Queue it again: the bridge executes a commandId at most once, so it answers with what it did,
      // or `expired`.
      if (state === 'forgotten') await redispatchCommand(command, { resend: true });
      await this.awaitBridgeWord(state);
    }
    return this.reportedOutcome(this.report!);
  }

  /** A bridge took the command: the order may be live, so the bridge's word is the only outcome. */
  private async awaitBridgeWord(state: WithdrawResult): Promise<BridgeReport> {
    if (patched('report-from-redis')) {
      // The ingress answers a report once Redis holds it and hands it over after (src/bridge/report-courier.ts): a
      // hand-over lost with its ingress leaves the report in Redis only, where the workflow finds it.
      // Withdraw found the report recorded already: look at once.
      let look = state === 'reported' ? 0 : REPORT_LOOK_FIRST_MS;
      while (this.report === undefined) {
        if (look > 0 && (await condition(() => this.report !== undefined, look))) break;
        const recorded = await recordedReport(this.accountId, this.commandId);
        if (recorded !== null && recorded.commandId === this.commandId) this.take(recorded);
        look = Math.min(Math.max(look * 2, REPORT_LOOK_FIRST_MS), REPORT_LOOK_MAX_MS);
      }
    } else await condition(() => this.report !== undefined);
    return this.report!;
  }

  /**
   * Pulls the command back if no bridge took it. With the data generation it was numbered in, a command Redis may have
   * forgotten (it lost the account's data since) is never withdrawn: `forgotten`, and the bridge's word decides.
   */
  private withdraw(queued: boolean): Promise<WithdrawResult> {
    return withdrawCommand(this.accountId, this.commandId, queued, this.input.target.dataGeneration);
  }

  private take(r: BridgeReport): 'recorded' | 'duplicate' {
    if (this.report !== undefined) return 'duplicate';
    this.report = r;
    return 'recorded';
  }

  private releaseNumber(): Promise<void> {
    const { target } = this.input;
    return releaseSequence(this.accountId, target.seq, target.expiresAt, this.input.signalId);
  }

  private waiting() {
    return { summary: `${this.accountId}'s bridge report for ${this.commandId.split('/')[1]}, until ${this.input.target.expiresAt}` };
  }

  /** The UI's "Current Details" of a running account workflow (a query answer, not history: replays as it ran). */
  private showWaiting(): void {
    setCurrentDetails(`waiting for ${this.waiting().summary}`);
  }

  private reportedOutcome(r: BridgeReport): AccountOutcome {
    // What the bridge placed, for the operator and the owner: the lots (sized by risk, the figures used), the price.
    if (patched('report-in-memo')) upsertMemo({ execution: { volume: r.volume ?? null, price: r.price ?? null, message: r.message ?? null } });
    return this.finish(outcomeOfReport(r, this.input.signal.action), r.executedAt ?? undefined);
  }

  private rejected(reason: string): AccountOutcome {
    return this.finish({ outcome: 'rejected', ticket: null, reason });
  }

  private finish(outcome: Omit<AccountOutcome, 'accountId' | 'occurredAt'>, occurredAt?: string): AccountOutcome {
    // A rejection stays a Completed workflow (the business outcome is its result, not a failure); Outcome and Reason
    // are what an operator filters on: `Outcome = "rejected" AND Reason = "bridge_offline"`.
    upsertSearchAttributes([
      { key: OutcomeKey, value: outcome.outcome },
      ...(outcome.reason ? [{ key: ReasonKey, value: reasonKeyword(outcome.reason) }] : []),
    ]);
    outcomes.record(outcome.outcome, outcome.reason, this.input.signal.action, this.input.target.account.platform);
    setCurrentDetails(outcome.reason ? `${outcome.outcome}: ${outcome.reason}` : outcome.outcome);
    return { accountId: this.accountId, ...outcome, occurredAt: occurredAt ?? new Date(Date.now()).toISOString() };
  }
}

/** A broker's diagnostic (`broker:10019 No money`) is filtered by its code, `broker:10019`; our own codes as they are. */
function reasonKeyword(reason: string): string {
  return reason.startsWith('broker:') ? reason.split(' ')[0]! : reason;
}
