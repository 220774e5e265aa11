import type { AccountOutcome } from '../domain/outcome';

/**
 * The owner's signal log's view of where signals execute: the account workflows as Temporal's visibility lists them
 * (the same records and search attributes operators filter in the Temporal UI), and the outcomes the signal
 * workflows recorded. Eventually consistent: a workflow shows up, and its search attributes change, within about a
 * second of the fact.
 */
export interface AccountRuns {
  /**
   * The runs of the `signals` newest signals that match, older than `after`, newest first (ReceivedAt, then
   * signalId, descending). `more`: older matching signals may exist.
   */
  newestSignals(filter: RunFilter, signals: number, after?: RunPosition): Promise<{ runs: AccountRun[]; more: boolean }>;
  /** One owner's account runs of one signal ([] when none is that owner's). */
  ofSignal(ownerId: string, signalId: string): Promise<AccountRun[]>;
  /** What the signals' workflows recorded per account (the poll's record: ticket, full reason, time), by signalId. */
  recordedOutcomes(ownerId: string, signalIds: readonly string[]): Promise<Map<string, AccountOutcome[]>>;
  /** What the signal asked (its order fields, from its workflow's memo); null for one started before it kept them. */
  sent(ownerId: string, signalId: string): Promise<Record<string, unknown> | null>;
}

/**
 * A page would read more rows than a page may (a page of broadcasts to hundreds of accounts, or thousands of signals
 * closing out of order): refused rather than answered with a page that may have skipped a newer signal.
 */
export class PageTooLarge extends Error {
  constructor(readonly rows: number) {
    super(`a page of the signal log would read more than ${rows} account workflows`);
    this.name = 'PageTooLarge';
  }
}

/** One signal on one account: its account workflow as visibility lists it. */
export interface AccountRun {
  signalId: string;
  accountId: string;
  action: string;
  symbol: string | null;
  /** When the signal was accepted (ISO, the same on every account of the signal). */
  receivedAt: string;
  /** running; completed (it has its Outcome); stopped: it failed or was ended by hand, and awaits an operator. */
  state: 'running' | 'completed' | 'stopped';
  outcome: 'filled' | 'done' | 'rejected' | null;
  /** The Reason search attribute: our code, or a broker's code alone (`broker:10019`). */
  reason: string | null;
  closedAt: string | null;
  /**
   * What the bridge reported with its outcome (the account workflow's `execution` memo): the lots it placed (sized by
   * risk, they are the bridge's, not the signal's), the price, and its message (for a sized entry, the figures used).
   * Null while running, and for a workflow that ended before it kept them.
   */
  execution: ExecutionReport | null;
}

export interface ExecutionReport {
  volume: number | null;
  price: number | null;
  message: string | null;
}

/** What an owner's log filters account workflows by; `outcome: 'pending'` is every account not completed yet. */
export interface RunFilter {
  ownerId: string;
  accountId?: string;
  action?: string;
  symbol?: string;
  outcome?: 'filled' | 'done' | 'rejected' | 'pending';
  /** Received at or after (inclusive). */
  from?: Date;
  /** Received before (exclusive). */
  to?: Date;
}

/** A place in the newest-first order: everything strictly older than this signal. */
export interface RunPosition {
  receivedAt: Date;
  signalId: string;
}
