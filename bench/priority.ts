/** CPU priority of a program of the stack: every thread of every process in its process group (Linux nice is per thread). */
import fs from 'node:fs';
import os from 'node:os';

/** Sets the nice value of every thread in the process group; the threads they start later inherit it. */
export function reniceGroup(pgid: number, nice: number): number {
  let threads = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      for (const tid of fs.readdirSync(`/proc/${d}/task`)) {
        os.setPriority(Number(tid), nice);
        threads++;
      }
    } catch {
      // gone meanwhile
    }
  }
  return threads;
}
