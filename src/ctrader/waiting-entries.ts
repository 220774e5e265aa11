import fs from 'node:fs';
import { writeFileWhole } from '../bridge-kit/durable-file';
import type { ManagementAsked } from '../bridge-kit/trade-management';

/**
 * Entries whose fill starts trade management: each command's management fields under its order's label, in one file
 * written whole and fsynced on every change (`<accountId>.management-entries.json`), so an entry that fills while the
 * connector is down is still managed after its start (found by the label on the broker's position).
 */

export interface WaitingEntry {
  label: string;
  asked: ManagementAsked;
  at: number;
}

export class WaitingEntries {
  private readonly byLabel = new Map<string, WaitingEntry>();

  constructor(private readonly file: string) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const parsed = JSON.parse(text) as { version?: number; entries?: WaitingEntry[] };
    // Not guessed at: a connector that cannot read what it promised to manage does not start.
    if (parsed.version !== 1 || !Array.isArray(parsed.entries)) throw new Error(`unreadable management entries in ${file}`);
    for (const w of parsed.entries) this.byLabel.set(w.label, w);
  }

  get(label: string | undefined): WaitingEntry | undefined {
    return label === undefined ? undefined : this.byLabel.get(label);
  }

  all(): WaitingEntry[] {
    return [...this.byLabel.values()];
  }

  add(entry: WaitingEntry): void {
    this.byLabel.set(entry.label, entry);
    this.write();
  }

  /** True when it was waiting. */
  remove(label: string | undefined): boolean {
    if (label === undefined || !this.byLabel.delete(label)) return false;
    this.write();
    return true;
  }

  private write(): void {
    writeFileWhole(this.file, JSON.stringify({ version: 1, entries: this.all() }), { durable: true });
  }
}
