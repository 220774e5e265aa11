import type { Logger } from 'pino';
import type { Account } from '../domain/account';
import type { StopOutDirective, StopOutEvent } from '../domain/bridge-protocol';
import type { AuditEntry } from '../domain/owner';
import type { StopOutStore } from './stop-outs';

/**
 * The service's side of the stop-out (docs/risk-sizing.md, "Stop-out"; protocol 1.4): what arms a bridge, and what
 * becomes of the events a bridge sends after it closed everything.
 */

export interface StopOutDeps {
  store: StopOutStore;
  /** Writes to the owner's audit log (src/owners/owner-store.ts), which the owner reads back. */
  audit: (owner: string, entry: AuditEntry) => Promise<void>;
  /** Counts a recorded stop-out (a metric without account labels). */
  counted?: () => void;
  logger?: Logger;
}

/** The `stopOut` of hello's and the commands' answers: present only while the account's owner has it on. */
export function stopOutDirectiveOf(account: Account, figuresMaxAgeMs: number): { stopOut?: StopOutDirective } {
  const guards = account.risk.lossGuards;
  if (guards?.stopOut !== true || guards.maxDrawdownPercent === undefined) return {};
  return { stopOut: { maxDrawdownPercent: guards.maxDrawdownPercent, drawdownResetAt: guards.drawdownResetAt ?? null, figuresMaxAgeMs } };
}

export interface EventResult {
  eventId: string;
  result: 'recorded' | 'duplicate';
}

/**
 * Each event once per (account, eventId), with its audit entry. The record stays `unaudited` until the entry is
 * written: when the entry cannot be written the call fails, and the bridge's resend (which finds the record
 * unaudited) writes it then; never acknowledged before the owner can see it. A resend racing the first attempt may
 * write the entry twice: a repeated line in the audit log, never a missing one.
 */
export async function recordStopOutEvents(deps: StopOutDeps, account: Account, events: readonly StopOutEvent[], nowMs: number): Promise<EventResult[]> {
  const results: EventResult[] = [];
  for (const event of events) {
    const record = await deps.store.record(account.id, event, nowMs);
    // Counted and logged by the one call that ended the record's unaudited state (a racing copy finds it ended).
    const first = record !== 'duplicate' && (await auditOnce(deps, account, event, nowMs));
    if (first) {
      deps.counted?.();
      const failed = [...event.closed, ...event.cancelled].filter((t) => t.result === 'failed').length;
      deps.logger?.warn(
        {
          accountId: account.id,
          eventId: event.eventId,
          trippedAt: event.trippedAt,
          drawdownPercent: event.drawdownPercent,
          maxDrawdownPercent: event.maxDrawdownPercent,
          closed: event.closed.length,
          cancelled: event.cancelled.length,
          failed,
        },
        'account stopped out by its bridge',
      );
    }
    results.push({ eventId: event.eventId, result: first ? 'recorded' : 'duplicate' });
  }
  return results;
}

async function auditOnce(deps: StopOutDeps, account: Account, event: StopOutEvent, nowMs: number): Promise<boolean> {
  await deps.audit(account.owner, auditEntryOf(account.id, event, nowMs));
  return deps.store.audited(account.id, event.eventId);
}

function auditEntryOf(accountId: string, event: StopOutEvent, nowMs: number): AuditEntry {
  return {
    at: new Date(nowMs).toISOString(),
    by: 'bridge',
    action: 'account.stopped_out',
    accountId,
    detail: {
      eventId: event.eventId,
      trippedAt: event.trippedAt,
      equity: event.equity,
      peak: event.peak,
      drawdownPercent: event.drawdownPercent,
      maxDrawdownPercent: event.maxDrawdownPercent,
      currency: event.currency,
      closed: event.closed,
      cancelled: event.cancelled,
    },
  };
}
