/** The process table as Linux's /proc shows it: enough to find a process's children, its group, and whether it runs. */
import fs from 'node:fs';

export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  /** Start time in clock ticks since boot: with the pid, names one process even after the pid is reused. */
  startedAt: string;
  state: string;
  cmd: string;
}

export function readProc(pid: number): Proc | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp … starttime (22nd field).
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, ppid: Number(f[1]), pgid: Number(f[2]), startedAt: f[19]!, state: f[0]!, cmd };
  } catch {
    return undefined; // gone while we read
  }
}

export function processTable(): Proc[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .flatMap((n) => readProc(Number(n)) ?? []);
}
