/** The ledger of the paper bridge, read incrementally: when each order was filled. */
import fs from 'node:fs';

export interface Fill {
  /** ms since the epoch: the ledger line's time (when the paper broker filled the order). */
  t: number;
  accountId: string;
}

export class LedgerTail {
  private offset = 0;
  private rest = '';
  /** commandId → the fill (op open or place). */
  readonly fills = new Map<string, Fill>();
  /** signalId → its fills. */
  readonly bySignal = new Map<string, Fill[]>();

  constructor(readonly file: string) {}

  update(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size <= this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      const read = fs.readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += read;
      const lines = (this.rest + buf.subarray(0, read).toString('utf8')).split('\n');
      this.rest = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        let entry: { time?: string; op?: string; commandId?: string; accountId?: string };
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if ((entry.op !== 'open' && entry.op !== 'place') || !entry.commandId || !entry.time || this.fills.has(entry.commandId)) continue;
        const fill = { t: Date.parse(entry.time), accountId: entry.accountId ?? '' };
        this.fills.set(entry.commandId, fill);
        const signalId = entry.commandId.split('/')[1];
        if (signalId) {
          const list = this.bySignal.get(signalId) ?? [];
          list.push(fill);
          this.bySignal.set(signalId, list);
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}
