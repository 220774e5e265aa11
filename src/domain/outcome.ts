import { isMarketEntry, isOpening, type Action } from './actions';
import type { BridgeReport } from './bridge-protocol';
import { isReasonCode, REASON_CODES } from './reason-codes';

/** What a filled entry became at the broker: a position (market entries) or a pending order (limit, stop, stop-limit). */
type EntryKind = 'position' | 'order';

/** The price and lots a market entry filled at, as the bridge reported them. */
interface Fill {
  price: number;
  volume: number;
}

/** What the account workflow decides for one account: the poll's account outcome item (spec §2.4). */
export interface AccountOutcome {
  accountId: string;
  /** filled/rejected for entries (reported by the poll); done/rejected for every other action. */
  outcome: 'filled' | 'rejected' | 'done';
  ticket: string | null;
  reason: string | null;
  occurredAt: string;
  /**
   * Additive to the spec (docs/poll.md): on a filled entry, whether the ticket is a position or a pending order.
   * Absent on rejections, on exits, and on outcomes recorded before it existed.
   */
  entry?: EntryKind;
  /** Additive to the spec: a filled market entry's price and lots, when the bridge reported both. */
  fill?: Fill;
}

/** An entry's outcome as the poll shows it (spec §2.4, with the additive entry and fill) and signal.outcome pushes it. */
export interface EntryOutcome {
  accountId: string;
  outcome: 'filled' | 'rejected';
  ticket: string | null;
  reason: string | null;
  occurredAt: string;
  entry?: EntryKind;
  fill?: Fill;
}

/**
 * What a bridge's report decides for its account: the workflow's outcome, and the poll's as soon as the report is
 * delivered (src/signals/reported-outcomes.ts). One function, so both always agree.
 */
export function outcomeOfReport(report: BridgeReport, action: Action): Omit<AccountOutcome, 'accountId' | 'occurredAt'> {
  const opening = isOpening(action);
  switch (report.status) {
    case 'filled':
    case 'done': {
      const ticket = report.ticket ?? null;
      if (!opening) return { outcome: 'done', ticket, reason: null };
      const entry: EntryKind = isMarketEntry(action) ? 'position' : 'order';
      // A pending order's price is where it waits, not a fill: only a position has one.
      const fill = entry === 'position' ? fillOf(report) : undefined;
      return { outcome: 'filled', ticket, reason: null, entry, ...(fill ? { fill } : {}) };
    }
    case 'expired':
      return { outcome: 'rejected', ticket: null, reason: 'signal_expired' };
    case 'rejected':
      return { outcome: 'rejected', ticket: null, reason: rejectionReason(report) };
  }
}

function fillOf(report: BridgeReport): Fill | undefined {
  const { price, volume } = report;
  if (typeof price !== 'number' || typeof volume !== 'number') return undefined;
  if (!Number.isFinite(price) || !Number.isFinite(volume) || price <= 0 || volume <= 0) return undefined;
  return { price, volume };
}

/**
 * A bridge-side rule refusal is already one of our codes (the `risk_`, `signal_` and `bridge_` families, and the
 * bridge-raised codes of the reason table, e.g. protocol 1.6's `spread_too_wide`); anything else is the broker's own
 * diagnostic.
 */
function rejectionReason(report: BridgeReport): string {
  const code = report.retcode ?? 'unknown';
  if (typeof code === 'string' && /^(risk|signal|bridge)_[a-z_]+$/.test(code)) return code;
  if (typeof code === 'string' && isReasonCode(code) && REASON_CODES[code].raisedBy === 'bridge') return code;
  return `broker:${code}${report.message ? ` ${report.message}` : ''}`;
}
