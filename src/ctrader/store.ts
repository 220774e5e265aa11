import fs from 'node:fs';
import path from 'node:path';
import type { BridgeReport } from '../domain/bridge-protocol';
import { readJsonLines } from '../paper/ledger';

/**
 * The connector's exactly-once store for one account, keyed by commandId. Two kinds of lines, each synced to disk
 * before the connector goes on:
 * - `intent`: written before the first Open API request of a command. An intent without a report after a crash or a
 *   lost connection means "it may have reached the broker": the command is resolved against the broker's state
 *   (ProtoOAReconcileReq, the order's label) instead of being sent again.
 * - `report`: the outcome; a redelivered commandId is answered from it and never executed again.
 */

export interface Intent {
  commandId: string;
  action: string;
  /** The label the order was sent with (ProtoOANewOrderReq.label), to find it again. */
  label: string;
  at: string;
}

type Line = { kind: 'intent'; intent: Intent } | { kind: 'report'; report: BridgeReport; at: string };

export class CommandStore {
  private readonly intents = new Map<string, Intent>();
  private readonly reports = new Map<string, BridgeReport>();
  /** commandId by the label its order carried: the trade events name the command that opened a position. */
  private readonly byLabel = new Map<string, string>();
  private fd: number | undefined;

  /** In memory only when `file` is undefined (tests of the mapping); a real connector always has a file. */
  constructor(
    readonly file: string | undefined,
    private readonly clock: () => number = Date.now,
  ) {
    if (!file) return;
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    for (const line of readJsonLines<Line>(file)) {
      if (line.kind === 'intent' && line.intent?.commandId) this.remember(line.intent);
      if (line.kind === 'report' && line.report?.commandId && !this.reports.has(line.report.commandId)) this.reports.set(line.report.commandId, line.report);
    }
    this.fd = fs.openSync(file, 'a', 0o600);
  }

  report(commandId: string): BridgeReport | undefined {
    return this.reports.get(commandId);
  }

  /** The intent of a command that was started and has no outcome yet. */
  unresolved(commandId: string): Intent | undefined {
    return this.reports.has(commandId) ? undefined : this.intents.get(commandId);
  }

  /** Every started command without an outcome, oldest first. */
  allUnresolved(): Intent[] {
    return [...this.intents.values()].filter((i) => !this.reports.has(i.commandId));
  }

  begin(intent: Omit<Intent, 'at'>): Intent {
    const full = { ...intent, at: new Date(this.clock()).toISOString() };
    this.append({ kind: 'intent', intent: full });
    this.remember(full);
    return full;
  }

  private remember(intent: Intent): void {
    this.intents.set(intent.commandId, intent);
    if (intent.label) this.byLabel.set(intent.label, intent.commandId);
  }

  /** The command whose order was sent with this label, if this connector sent it. */
  commandOfLabel(label: string): string | undefined {
    return this.byLabel.get(label);
  }

  /** The first report for a commandId wins; later ones are ignored. */
  record(report: BridgeReport): BridgeReport {
    const existing = this.reports.get(report.commandId);
    if (existing) return existing;
    this.append({ kind: 'report', report, at: new Date(this.clock()).toISOString() });
    this.reports.set(report.commandId, report);
    return report;
  }

  get size(): number {
    return this.reports.size;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private append(line: Line): void {
    if (this.fd === undefined) return;
    fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fs.fdatasyncSync(this.fd);
  }
}
