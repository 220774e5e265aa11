import fs from 'node:fs';
import type { BrokerState } from './broker-types';
import type { EquityMarksState } from '../risk/equity-marks';

/**
 * A paper terminal's state file (FILE.jsonl.<account>.state.json): the broker's positions and orders, and the loss
 * guards' equity marks, written whole and renamed into place after every change. A file written before 2026-11-24
 * holds the broker's state alone.
 */
export interface PaperState {
  broker: BrokerState;
  marks?: EquityMarksState;
}

export function readStateFile(file: string): PaperState | undefined {
  if (!fs.existsSync(file)) return undefined;
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<PaperState> & Partial<BrokerState>;
  return saved.broker ? { broker: saved.broker, ...(saved.marks ? { marks: saved.marks } : {}) } : { broker: saved as BrokerState };
}

export function writeStateFile(file: string, state: PaperState): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(state));
  fs.renameSync(tmp, file);
}
