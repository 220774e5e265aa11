import fs from 'node:fs';
import path from 'node:path';
import type { BridgeReport } from '../domain/bridge-protocol';
import { readJsonLines } from './ledger';

/**
 * The exactly-once journal: commandId → the report recorded when the command was first handled (executed,
 * rejected or expired). A redelivered commandId is answered from here and never executed again.
 * The file is JSON lines `{accountId, commandId, recordedAt, report}`, shared by every account of one paper bridge
 * and reloaded at start.
 */

export interface Journal {
  get(commandId: string): BridgeReport | undefined;
  record(report: BridgeReport): void;
  readonly size: number;
}

interface JournalLine {
  accountId: string;
  commandId: string;
  recordedAt: string;
  report: BridgeReport;
}

export class MemoryJournal implements Journal {
  protected readonly reports = new Map<string, BridgeReport>();

  get(commandId: string): BridgeReport | undefined {
    return this.reports.get(commandId);
  }

  record(report: BridgeReport): void {
    if (!this.reports.has(report.commandId)) this.reports.set(report.commandId, report);
  }

  get size(): number {
    return this.reports.size;
  }
}

export class FileJournal extends MemoryJournal {
  constructor(
    readonly file: string,
    readonly accountId: string,
    private readonly clock: () => number = Date.now,
  ) {
    super();
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    for (const line of readJsonLines<JournalLine>(file)) {
      if (line.accountId === accountId && line.report && !this.reports.has(line.commandId)) this.reports.set(line.commandId, line.report);
    }
  }

  override record(report: BridgeReport): void {
    if (this.reports.has(report.commandId)) return;
    const line: JournalLine = { accountId: this.accountId, commandId: report.commandId, recordedAt: new Date(this.clock()).toISOString(), report };
    fs.appendFileSync(this.file, `${JSON.stringify(line)}\n`);
    super.record(report);
  }
}
