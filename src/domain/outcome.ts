/** What the account workflow decides for one account: the poll's account outcome item (spec §2.4). */
export interface AccountOutcome {
  accountId: string;
  /** filled/rejected for entries (reported by the poll); done/rejected for every other action. */
  outcome: 'filled' | 'rejected' | 'done';
  ticket: string | null;
  reason: string | null;
  occurredAt: string;
}
