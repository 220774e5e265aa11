import type { BridgeReport } from '../domain/bridge-protocol';
import type { AccountOutcome } from '../domain/outcome';
import type { SignalWorkflowInput } from '../domain/workflow-input';

export type ReportDelivery = 'delivered' | 'closed' | 'unknown';

/**
 * Where signals execute (Temporal, one workflow per signal per region), seen from the ingress. A `deadline` (epoch ms)
 * bounds a call; the calls of one request share it.
 */
export interface SignalExecutions {
  /**
   * Starts the signal in one region; resolves once Temporal holds it durably: `created` when this call started it,
   * `existed` when another request had (then this call's input, and its sequence numbers, are unused).
   */
  launch(region: string, input: SignalWorkflowInput, deadline?: number): Promise<'created' | 'existed'>;
  /** Whether the signal was started in that region. */
  started(region: string, signalId: string, deadline?: number): Promise<boolean>;
  /**
   * The terminal outcomes recorded so far, from every region; [] for an unknown signal. Needs no worker. With waitMs,
   * a read that takes longer answers with the last answer read for the signal (a few seconds old at most), or
   * undefined when there is none: the caller decides whether to wait on (a call without waitMs joins the same read).
   */
  outcomes(signalId: string, waitMs?: number): Promise<AccountOutcome[] | undefined>;
  /**
   * Hands a bridge's report to its account execution: `delivered` (it has it now, or had it), `closed` (the execution
   * had already finished), `unknown` (no such execution).
   */
  deliverReport(region: string, report: BridgeReport): Promise<ReportDelivery>;
}
