import type { BridgeReport } from '../bridge/protocol';
import type { AccountOutcome, SignalWorkflowInput } from './outcome';

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
  /** The terminal outcomes recorded so far, from every region; [] for an unknown signal. Needs no worker. */
  outcomes(signalId: string): Promise<AccountOutcome[]>;
  /** Hands a bridge's report to the waiting account execution; false when no execution waits for it any more. */
  deliverReport(region: string, report: BridgeReport): Promise<boolean>;
}
