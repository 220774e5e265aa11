import type { BridgeReport } from './bridge-protocol';

/** What the account workflow decides for one account: the poll's account outcome item (spec §2.4). */
export interface AccountOutcome {
  accountId: string;
  /** filled/rejected for entries (reported by the poll); done/rejected for every other action. */
  outcome: 'filled' | 'rejected' | 'done';
  ticket: string | null;
  reason: string | null;
  occurredAt: string;
}

/**
 * What a bridge's report decides for its account: the workflow's outcome, and the poll's as soon as the report is
 * delivered (src/signals/reported-outcomes.ts). One function, so both always agree.
 */
export function outcomeOfReport(report: BridgeReport, opening: boolean): Omit<AccountOutcome, 'accountId' | 'occurredAt'> {
  switch (report.status) {
    case 'filled':
    case 'done':
      return { outcome: opening ? 'filled' : 'done', ticket: report.ticket ?? null, reason: null };
    case 'expired':
      return { outcome: 'rejected', ticket: null, reason: 'signal_expired' };
    case 'rejected':
      return { outcome: 'rejected', ticket: null, reason: rejectionReason(report) };
  }
}

/** A bridge-side rule refusal is already one of our codes; anything else is the broker's own diagnostic. */
function rejectionReason(report: BridgeReport): string {
  const code = report.retcode ?? 'unknown';
  if (typeof code === 'string' && /^(risk|signal|bridge)_[a-z_]+$/.test(code)) return code;
  return `broker:${code}${report.message ? ` ${report.message}` : ''}`;
}
