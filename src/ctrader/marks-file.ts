import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { EquityMarks } from '../risk/equity-marks';
import type { StopOutMark } from '../risk/stop-out';

/**
 * The loss guards' equity marks of one account (the day's opening equity, the peak, the last drawdown reset
 * applied), on disk beside the account's command store (`<CTRADER_STATE_DIR>/<accountId>.marks.json`), so a
 * connector restarted on a bad day still measures from the opening it saw. Written whole to a temporary file,
 * fsynced, renamed into place and the directory fsynced: a crash leaves the old marks or the new, never half of one.
 */

const ticketResult = z.strictObject({ ticket: z.string(), result: z.string(), message: z.string().optional() });

/** The stop-out's mark (docs/risk-sizing.md, "Stop-out"), beside the equity marks in the same file. */
const stopOutSchema = z.strictObject({
  resetAt: z.string().nullable(),
  trippedAt: z.string(),
  equity: z.number(),
  peak: z.number(),
  currency: z.string(),
  maxDrawdownPercent: z.number(),
  positions: z.array(z.string()),
  orders: z.array(z.string()),
  state: z.enum(['closing', 'done']),
  closed: z.array(ticketResult),
  cancelled: z.array(ticketResult),
  acknowledged: z.boolean(),
  /** Earlier stop-outs' events not yet acknowledged (as sent: the service's schema judges them, not this file). */
  unsent: z.array(z.looseObject({ eventId: z.string() })).optional(),
});

const marksSchema = z.strictObject({
  day: z.string().max(16).optional(),
  dayOpen: z.number(),
  peak: z.number(),
  resetApplied: z.string().max(64),
  stopOut: stopOutSchema.optional(),
});

export class MarksFile {
  /** In memory only when `file` is undefined (unit tests). */
  constructor(readonly file: string | undefined) {}

  /** The saved marks; a missing file is a first start (the marks begin from the equity seen next). */
  load(): EquityMarks {
    return this.loadAll().marks;
  }

  /** The equity marks and the stop-out's mark, if one was written. */
  loadAll(): { marks: EquityMarks; stopOut?: StopOutMark } {
    if (!this.file || !fs.existsSync(this.file)) return { marks: new EquityMarks() };
    // A file that does not parse is not a first start: refuse to run rather than forget a bad day.
    const { stopOut, ...marks } = marksSchema.parse(JSON.parse(fs.readFileSync(this.file, 'utf8')));
    return { marks: new EquityMarks(marks), ...(stopOut ? { stopOut: stopOut as StopOutMark } : {}) };
  }

  /** Writes the equity marks, and the stop-out's mark when there is one (always give it: the file is written whole). */
  save(marks: EquityMarks, stopOut?: StopOutMark): void {
    if (!this.file) return;
    const dir = path.dirname(path.resolve(this.file));
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify({ ...marks.state(), ...(stopOut ? { stopOut } : {}) }));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
    const dirFd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(dirFd);
    } finally {
      fs.closeSync(dirFd);
    }
  }
}
