import type { Logger } from 'pino';
import type { Registry } from '../registry/registry';
import type { Throttle } from '../ratelimit/fairness';
import type { SignalExecutions } from './executions';
import type { SecretGrant } from '../domain/account';
import type { SignalWorkflowInput, SkippedAccount } from '../domain/workflow-input';
import type { AccountSequencer } from '../bridge/ordering';
import type { IdempotencyWindows } from './idempotency';
import type { DoorDecision } from './door';
import type { EndpointStore } from '../callbacks/endpoints';
import type { AcceptanceDispatch } from './dispatch';
import type { PendingStarts } from './pending-starts';
import type { SignalStarter } from './starter';

/** What the submit use case (src/signals/accept.ts) takes, depends on and answers. */

export interface AcceptRequest {
  /** The per-account URL's account; undefined on the broadcast URL. */
  routeAccountId?: string;
  /** The sender, already authenticated for this route (authenticateSender, before the route limiter). */
  grant: SecretGrant;
  body: unknown;
  idempotencyKey?: string;
  correlationId: string;
}

export interface SignalAccepted {
  success: boolean;
  signalId: string;
  correlationId: string;
  accountsResolved: number;
}

export interface SignalNoTargets {
  success: false;
  accountsResolved: 0;
  correlationId: string;
}

/** Where a new signal was routed, for the ingress's log line (absent on a replay). */
export interface RoutingNote {
  accounts: string[];
  skipped: SkippedAccount[];
}

export type AcceptResult =
  | { kind: 'accepted'; body: SignalAccepted; replayed: boolean; routing?: RoutingNote }
  | { kind: 'partially_accepted'; body: SignalAccepted; replayed: boolean; routing?: RoutingNote }
  | { kind: 'no_targets'; body: SignalNoTargets; routing?: RoutingNote };

export interface AcceptDeps {
  registry: Registry;
  throttle: Throttle;
  sequencer: AccountSequencer;
  /** Whether a region started a signal (a replay asks, for a region its first request may not have accepted). */
  executions: Pick<SignalExecutions, 'started'>;
  /** Where a signal is accepted: its start recorded per region (src/signals/pending-starts.ts). */
  starts: Pick<PendingStarts, 'record' | 'started' | 'claim'>;
  /** Starts the recorded signals' workflows in the background, after the answer. */
  starter: Pick<SignalStarter, 'start'>;
  windows: IdempotencyWindows;
  /** The door: whether Redis can hold one more accepted signal (src/signals/door.ts). */
  door: { decide(): Promise<DoorDecision> };
  /** The owners' enabled callback endpoints (src/callbacks/endpoints.ts) that want this signal's outcome, snapshotted into its input. */
  callbacks?: Pick<EndpointStore, 'enabledIds'>;
  /** The ingress queues each accepted signal's commands itself, before the answer. */
  dispatch: AcceptanceDispatch;
  logger?: Logger;
  onStartError?: (region: string, err: unknown) => void;
  /** A signal for one account was refused 412, its bridge too old for the action: the account's page says so. */
  onBridgeTooOld?: (accountId: string, message: string) => void;
  settings: {
    idempotencyKeyMaxLength: number;
    idempotencyWindowMs: number;
    /** The time all Temporal calls of one submission may take together (a keyed signal's window, a replay's look). */
    temporalBudgetMs: number;
    defaultMaxSignalAgeMs: number;
    defaultCommandTtlMs: number;
    /** The oldest a quote behind an entry's risk figures may be (FIGURES_MAX_AGE_MS, src/risk/figures-age.ts); absent, no bound travels. */
    figuresMaxAgeMs?: number;
    failClosedRetryAfterSeconds: number;
  };
  now?: () => number;
}

/** The signal workflow's input before its targets: shared by a new signal's launch and a replay's. */
export type LaunchBase = Omit<SignalWorkflowInput, 'targets'>;
