import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { EquityMarks } from '../risk/equity-marks';

/**
 * The loss guards' equity marks of one account (the day's opening equity, the peak, the last drawdown reset
 * applied), on disk beside the account's command store (`<CTRADER_STATE_DIR>/<accountId>.marks.json`), so a
 * connector restarted on a bad day still measures from the opening it saw. Written whole to a temporary file,
 * fsynced, renamed into place and the directory fsynced: a crash leaves the old marks or the new, never half of one.
 */

const marksSchema = z.strictObject({
  day: z.string().max(16).optional(),
  dayOpen: z.number(),
  peak: z.number(),
  resetApplied: z.string().max(64),
});

export class MarksFile {
  /** In memory only when `file` is undefined (unit tests). */
  constructor(readonly file: string | undefined) {}

  /** The saved marks; a missing file is a first start (the marks begin from the equity seen next). */
  load(): EquityMarks {
    if (!this.file || !fs.existsSync(this.file)) return new EquityMarks();
    // A file that does not parse is not a first start: refuse to run rather than forget a bad day.
    return new EquityMarks(marksSchema.parse(JSON.parse(fs.readFileSync(this.file, 'utf8'))));
  }

  save(marks: EquityMarks): void {
    if (!this.file) return;
    const dir = path.dirname(path.resolve(this.file));
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify(marks.state()));
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
