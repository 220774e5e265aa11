import type { Action } from './actions';
import type { ExternalSignal } from './signal';
import type { Account } from './account';
import type { VolumeRules } from '../risk/rules';

/** What the account workflow decides for one account: the poll's account outcome item (spec §2.4). */
export interface AccountOutcome {
  accountId: string;
  /** filled/rejected for entries (reported by the poll); done/rejected for every other action. */
  outcome: 'filled' | 'rejected' | 'done';
  ticket: string | null;
  reason: string | null;
  occurredAt: string;
}

/** The signal as it travels into Temporal: never the secret. */
export type SignalInstruction = Omit<ExternalSignal, 'secret'> & { action: Action };

/** The account's settings as they were at acceptance; the rules run on this, not on later edits. */
export type AccountSnapshot = Pick<Account, 'id' | 'owner' | 'platform' | 'region' | 'bridgeVersion' | 'risk' | 'symbols'>;

export interface AccountTarget {
  account: AccountSnapshot;
  /** Acceptance order of this signal among the account's signals. */
  seq: number;
  /** No bridge may execute the command after this instant (ISO). */
  expiresAt: string;
  /** The broker's volume rules for the signal's symbol on this account, when its bridge reported them. */
  volumeRules?: VolumeRules;
}

export interface SignalWorkflowInput {
  signalId: string;
  correlationId: string;
  acceptedAt: string;
  signal: SignalInstruction;
  targets: AccountTarget[];
}

export interface AccountWorkflowInput {
  signalId: string;
  correlationId: string;
  acceptedAt: string;
  signal: SignalInstruction;
  target: AccountTarget;
}
