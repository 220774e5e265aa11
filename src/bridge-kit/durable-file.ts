import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes a file whole: a temporary file renamed into place, so a reader (or a restart after a crash) finds the old
 * content or the new, never half of one. `durable`: the temporary file is fsynced before the rename and the directory
 * after it, so the new content also survives the machine going down (what a bridge's outbox and marks need).
 */
export function writeFileWhole(file: string, text: string, options: { durable?: boolean; mode?: number } = {}): void {
  const dir = path.dirname(path.resolve(file));
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', options.mode ?? 0o600);
  try {
    fs.writeSync(fd, text);
    if (options.durable) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  if (!options.durable) return;
  const dirFd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}
