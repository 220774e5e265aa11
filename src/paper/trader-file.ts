import fs from 'node:fs';
import { z } from 'zod';

/**
 * What a trader does by hand in a paper terminal, steered from outside like the market (`--trader FILE`): a JSON-lines
 * file a test or a demo appends to, one click a line:
 *
 *   {"accountId": "acc-1", "op": "close", "ticket": "1000003"}     close a position by hand
 *   {"accountId": "acc-1", "op": "cancel", "ticket": "1000004"}    delete a pending order by hand
 *
 * Each terminal reads the lines of its account once, in order, on its market tick. After a restart the file is read
 * from the start again: a click on a ticket already closed is refused by the broker (position not found), never done
 * twice. A line that does not parse is skipped and said so; lines are at most 1 KiB and a file at most 1 MiB is read.
 */

const clickSchema = z.strictObject({
  accountId: z.string().min(1).max(128),
  op: z.enum(['close', 'cancel']),
  ticket: z.string().min(1).max(64),
});
export type TraderClick = z.infer<typeof clickSchema>;

const MAX_FILE_BYTES = 1024 * 1024;
const MAX_LINE = 1024;

export class TraderFile {
  private offset = 0;

  constructor(
    readonly file: string,
    private readonly accountId: string,
    private readonly diag: (line: Record<string, unknown>) => void,
  ) {}

  /** The clicks for this account written since the last look. */
  take(): TraderClick[] {
    let size: number;
    try {
      size = fs.statSync(this.file).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const end = Math.min(size, MAX_FILE_BYTES);
    if (end <= this.offset) return [];
    const fd = fs.openSync(this.file, 'r');
    let text: string;
    try {
      const buf = Buffer.alloc(end - this.offset);
      fs.readSync(fd, buf, 0, buf.length, this.offset);
      text = buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
    // Only whole lines: one being written is read on the next look.
    const whole = text.lastIndexOf('\n') + 1;
    this.offset += Buffer.byteLength(text.slice(0, whole));
    const clicks: TraderClick[] = [];
    for (const line of text.slice(0, whole).split('\n')) {
      if (line.trim() === '') continue;
      const parsed = line.length <= MAX_LINE ? clickSchema.safeParse(safeJson(line)) : undefined;
      if (!parsed?.success) {
        this.diag({ time: new Date().toISOString(), event: 'trader_line_unreadable', accountId: this.accountId, line: line.slice(0, 200) });
        continue;
      }
      if (parsed.data.accountId === this.accountId) clicks.push(parsed.data);
    }
    return clicks;
  }
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
