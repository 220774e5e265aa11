import type { RunFilter, RunPosition } from '../signals/account-runs';
import { accountWorkflow } from '../../workflows/account';
import { signalWorkflow } from '../../workflows/signal';
import { ActionKey, AccountIdKey, OutcomeKey, OwnerIdKey, ReceivedAtKey, SignalIdKey, SymbolKey } from './search-attributes';

/**
 * Temporal list queries built from values, never by pasting text: every value goes through `keyword` or `datetime`.
 * The SQL visibility stores (the dev server's SQLite, the cluster profile's PostgreSQL) take a single-quoted string
 * with `\'` for a quote, but a value holding `"` or `\` never matches whatever the escaping (tried on server
 * 1.29.1): such a value is refused here, so a query can neither be widened nor silently match nothing.
 */
export class UnqueryableValue extends Error {
  constructor(what: string) {
    super(`${what} cannot be searched in Temporal visibility (it holds a quote, a backslash or a control character)`);
    this.name = 'UnqueryableValue';
  }
}

// eslint-disable-next-line no-control-regex
const UNSAFE = /["\\\u0000-\u001f\u007f]/;

/** A Keyword literal: single-quoted, its quotes escaped. */
export function keyword(value: string, what = 'a value'): string {
  if (value.length === 0 || value.length > 256 || UNSAFE.test(value)) throw new UnqueryableValue(what);
  return `'${value.replace(/'/g, "\\'")}'`;
}

/** A Datetime literal, to the millisecond (the precision of acceptedAt). */
function datetime(at: Date): string {
  if (Number.isNaN(at.getTime())) throw new UnqueryableValue('a time');
  return `'${at.toISOString()}'`;
}

/** Which of the two visibility orders a query reads: running ones by StartTime, closed ones by CloseTime. */
export type RunSection = 'running' | 'closed';

/**
 * The account workflows of one owner matching the filter, in one section, older than `after` (newest first: by
 * ReceivedAt, then SignalId, both descending).
 */
export function accountRunsQuery(filter: RunFilter, section: RunSection, after?: RunPosition): string {
  const terms = [`WorkflowType = '${accountWorkflow.name}'`, `${OwnerIdKey.name} = ${keyword(filter.ownerId, 'the owner id')}`];
  if (filter.accountId !== undefined) terms.push(`${AccountIdKey.name} = ${keyword(filter.accountId, 'the account id')}`);
  if (filter.action !== undefined) terms.push(`${ActionKey.name} = ${keyword(filter.action, 'the action')}`);
  if (filter.symbol !== undefined) terms.push(`${SymbolKey.name} = ${keyword(filter.symbol, 'the symbol')}`);
  if (filter.outcome === 'pending') terms.push(`ExecutionStatus != 'Completed'`);
  else if (filter.outcome !== undefined) terms.push(`${OutcomeKey.name} = ${keyword(filter.outcome, 'the outcome')}`);
  if (filter.from !== undefined) terms.push(`${ReceivedAtKey.name} >= ${datetime(filter.from)}`);
  if (filter.to !== undefined) terms.push(`${ReceivedAtKey.name} < ${datetime(filter.to)}`);
  if (after !== undefined) {
    const at = datetime(after.receivedAt);
    terms.push(`(${ReceivedAtKey.name} < ${at} OR (${ReceivedAtKey.name} = ${at} AND ${SignalIdKey.name} < ${keyword(after.signalId, 'the signal id')}))`);
  }
  terms.push(section === 'running' ? `ExecutionStatus = 'Running'` : `ExecutionStatus != 'Running'`);
  return terms.join(' AND ');
}

/** The account workflows of one owner on one signal. */
export function signalRunsQuery(ownerId: string, signalId: string): string {
  return [
    `WorkflowType = '${accountWorkflow.name}'`,
    `${OwnerIdKey.name} = ${keyword(ownerId, 'the owner id')}`,
    `${SignalIdKey.name} = ${keyword(signalId, 'the signal id')}`,
  ].join(' AND ');
}

/** The parent workflows of these signals of one owner (their memos hold the recorded outcomes). */
export function signalParentsQuery(ownerId: string, signalIds: readonly string[]): string {
  return [
    `WorkflowType = '${signalWorkflow.name}'`,
    `${OwnerIdKey.name} = ${keyword(ownerId, 'the owner id')}`,
    `${SignalIdKey.name} IN (${signalIds.map((id) => keyword(id, 'a signal id')).join(', ')})`,
  ].join(' AND ');
}
