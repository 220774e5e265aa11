import type { Action } from './actions';
import type { ExternalSignal } from './signal';
import type { Account } from './account';
import type { VolumeRules } from './volume-rules';

/** The signal as it travels into Temporal: never the secret. */
export type SignalInstruction = Omit<ExternalSignal, 'secret'> & { action: Action };

/** The account's settings as they were at acceptance; the rules run on this, not on later edits. */
export type AccountSnapshot = Pick<Account, 'id' | 'owner' | 'platform' | 'region' | 'bridgeVersion' | 'risk' | 'symbols'> & {
  bridgeFeatures?: Account['bridgeFeatures'];
};

export interface AccountTarget {
  account: AccountSnapshot;
  /** Acceptance order of this signal among the account's signals. */
  seq: number;
  /**
   * The generation of the account's bridge data in Redis when the number was taken. A queue step that finds another
   * one knows Redis lost data since (a bridge may hold the command although Redis no longer says so): it never reports
   * the command not taken. Absent on signals accepted before it existed: their workflows trust Redis as they did.
   */
  dataGeneration?: string;
  /** No bridge may execute the command after this instant (ISO). */
  expiresAt: string;
  /** The broker's volume rules for the signal's symbol on this account, when its bridge reported them. */
  volumeRules?: VolumeRules;
  /**
   * Where the first version of callbacks (49b9aa0 to cf9bb52, merged into main) put the owner's endpoint ids: never
   * written now (SignalWorkflowInput.callbackEndpoints is), still read so signals accepted by it deliver as they did.
   */
  callbackEndpoints?: string[];
  /**
   * The oldest a quote behind the entry's risk figures may be (FIGURES_MAX_AGE_MS at acceptance; opening
   * signals only). Absent on signals accepted before it existed: their commands go out as they did then.
   */
  figuresMaxAgeMs?: number;
  /**
   * The ingress queues this command itself once the signal's start is durable (dispatch at acceptance,
   * docs/decisions.md), so the account workflow may find it queued, taken or even reported: it supervises it, and
   * never ends it `rejected` before it has withdrawn it. Absent on signals accepted with the switch off or before it
   * existed: their workflows dispatch as they did.
   */
  dispatchedAtAcceptance?: true;
}

/** An account a broadcast did not reach, and why: in the signal's memo and the ingress log for operators. */
export interface SkippedAccount {
  accountId: string;
  reason: 'unavailable' | 'locked' | 'not_entitled' | 'copy_master' | 'bridge_too_old';
}

export interface SignalWorkflowInput {
  signalId: string;
  correlationId: string;
  acceptedAt: string;
  signal: SignalInstruction;
  targets: AccountTarget[];
  /** Accounts the secret links that this broadcast skipped (absent on the per-account URL and on a replay). */
  skipped?: SkippedAccount[];
  /**
   * Each owner's enabled callback endpoint ids when the signal was accepted, once per owner rather than per target
   * (a broadcast to hundreds of accounts of one owner carries them once); absent when no owner has any, and then the
   * workflows do no callback work at all (docs/callbacks.md).
   */
  callbackEndpoints?: Record<string, string[]>;
}

export interface AccountWorkflowInput {
  signalId: string;
  correlationId: string;
  acceptedAt: string;
  signal: SignalInstruction;
  target: AccountTarget;
}
