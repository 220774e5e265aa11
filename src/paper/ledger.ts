import fs from 'node:fs';
import path from 'node:path';
import type { BrokerOp } from './broker';

/**
 * The ledger: one JSON object per line for every broker operation of every paper account (open, place, trigger,
 * stop_limit_trigger, close, partial_close, modify, modify_order, cancel, expire). Each line is written with
 * appendFileSync, so a reader (a test counting orders) sees it as soon as the operation happened.
 */

export type LedgerEntry = { accountId: string } & BrokerOp;

export interface Ledger {
  append(accountId: string, ops: readonly BrokerOp[]): void;
  /**
   * The first operation one command of the account performed, as the ledger held it when this process began (a
   * broker's own record of what it did); absent on a ledger that passes its lines on to another.
   */
  firstOpOf?(accountId: string, commandId: string): LedgerEntry | undefined;
}

/** Field order of a line: the fields a reader looks for first. */
function entryOf(accountId: string, op: BrokerOp): LedgerEntry {
  const { time, commandId, action, op: kind, ticket, symbol, side, volume, price, ...rest } = op;
  return { time, accountId, commandId, action, op: kind, ticket, symbol, side, volume, price, ...rest };
}

export class FileLedger implements Ledger {
  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  }

  append(accountId: string, ops: readonly BrokerOp[]): void {
    if (ops.length === 0) return;
    fs.appendFileSync(this.file, ops.map((op) => `${JSON.stringify(entryOf(accountId, op))}\n`).join(''));
  }

  /** Read once, on the first question: what an earlier process did is all a restart needs to find. */
  private earlier: Map<string, LedgerEntry> | undefined;

  firstOpOf(accountId: string, commandId: string): LedgerEntry | undefined {
    this.earlier ??= firstOps(readLedger(this.file));
    return this.earlier.get(`${accountId}|${commandId}`);
  }
}

function firstOps(entries: readonly LedgerEntry[]): Map<string, LedgerEntry> {
  const out = new Map<string, LedgerEntry>();
  for (const e of entries)
    if (e.cause === 'command' && e.commandId !== null && !out.has(`${e.accountId}|${e.commandId}`)) out.set(`${e.accountId}|${e.commandId}`, e);
  return out;
}

/** The ledger when no file is given: kept in memory (and readable by tests). */
export class MemoryLedger implements Ledger {
  readonly entries: LedgerEntry[] = [];

  append(accountId: string, ops: readonly BrokerOp[]): void {
    for (const op of ops) this.entries.push(entryOf(accountId, op));
  }

  firstOpOf(accountId: string, commandId: string): LedgerEntry | undefined {
    return this.entries.find((e) => e.accountId === accountId && e.commandId === commandId && e.cause === 'command');
  }
}

/** Every line of a ledger file, parsed; a missing file is an empty ledger, a torn last line is skipped. */
export function readLedger(file: string): LedgerEntry[] {
  return readJsonLines<LedgerEntry>(file);
}

export function readJsonLines<T>(file: string): T[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A line cut short by a crash mid-write: nothing after it was acknowledged.
    }
  }
  return out;
}

/** Files kept next to a ledger: the exactly-once journal, each account's broker state and its trade-event outbox. */
export function journalFileFor(ledgerFile: string): string {
  return `${ledgerFile}.journal`;
}

/** The account's trade events not yet answered by the service (src/bridge-kit/trade-outbox.ts). */
export function tradesFileFor(ledgerFile: string, accountId: string): string {
  return `${ledgerFile}.${accountId}.trades.json`;
}

export function stateFileFor(ledgerFile: string, accountId: string): string {
  return `${ledgerFile}.${accountId}.state.json`;
}

/** The account's managed positions (trade management, protocol 1.6; src/bridge-kit/managed-trades.ts). */
export function managementFileFor(ledgerFile: string, accountId: string): string {
  return `${ledgerFile}.${accountId}.managed.json`;
}
