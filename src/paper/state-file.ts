import fs from 'node:fs';
import { writeFileWhole } from '../bridge-kit/durable-file';
import type { BrokerState } from './broker-types';
import type { EquityMarksState } from '../risk/equity-marks';
import type { StopOutMark } from '../risk/stop-out';

/**
 * A paper terminal's state file (FILE.jsonl.<account>.state.json): the broker's positions and orders, and the loss
 * guards' equity marks, written whole and renamed into place after every change. A file written before 2026-11-24
 * holds the broker's state alone.
 */
export interface PaperState {
  broker: BrokerState;
  marks?: EquityMarksState;
  /** The stop-out's mark (docs/risk-sizing.md, "Stop-out"): written durably before anything is closed. */
  stopOut?: StopOutMark;
}

export function readStateFile(file: string): PaperState | undefined {
  if (!fs.existsSync(file)) return undefined;
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<PaperState> & Partial<BrokerState>;
  return saved.broker
    ? { broker: saved.broker, ...(saved.marks ? { marks: saved.marks } : {}), ...(saved.stopOut ? { stopOut: saved.stopOut } : {}) }
    : { broker: saved as BrokerState };
}

/** `durable`: fsynced before the rename and the directory after it (the stop-out's mark must survive a crash). */
export function writeStateFile(file: string, state: PaperState, durable = false): void {
  writeFileWhole(file, JSON.stringify(state), { durable });
}
