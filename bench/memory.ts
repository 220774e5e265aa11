/** Memory: /proc/<pid>/status of the node process inside a program's process group. */
import fs from 'node:fs';
import path from 'node:path';
import { round } from './stats';

export function nodePidInGroup(pgid: number, entry: string): number | undefined {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0] ?? '').startsWith('node') && argv.some((a) => a.endsWith(entry))) return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

export function readMemory(pid: number): { rssKb: number; hwmKb: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    if (!rss || !hwm) return undefined;
    return { rssKb: Number(rss[1]), hwmKb: Number(hwm[1]) };
  } catch {
    return undefined;
  }
}

export interface MemoryFigures {
  pid: number;
  samples: number;
  /** Largest VmRSS sampled during the window (every 250 ms). */
  peakRssMb: number | null;
  /** VmHWM at the end of the window: the peak since the process started. */
  hwmMb: number | null;
  lastRssMb: number | null;
}

export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private readonly state = new Map<string, { pid: number; samples: number; peakKb: number; lastKb: number }>();

  constructor(targets: { name: string; pid: number }[]) {
    for (const t of targets) this.state.set(t.name, { pid: t.pid, samples: 0, peakKb: 0, lastKb: 0 });
  }

  start(intervalMs = 250): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    for (const s of this.state.values()) {
      const m = readMemory(s.pid);
      if (!m) continue;
      s.samples++;
      s.lastKb = m.rssKb;
      s.peakKb = Math.max(s.peakKb, m.rssKb);
    }
  }

  stop(): Record<string, MemoryFigures> {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const out: Record<string, MemoryFigures> = {};
    for (const [name, s] of this.state) {
      const m = readMemory(s.pid);
      out[name] = {
        pid: s.pid,
        samples: s.samples,
        peakRssMb: s.samples ? round(s.peakKb / 1024, 1) : null,
        hwmMb: m ? round(m.hwmKb / 1024, 1) : null,
        lastRssMb: s.samples ? round(s.lastKb / 1024, 1) : null,
      };
    }
    return out;
  }
}

/** Peak RSS of each program per phase of the whole run, sampled every 250 ms. */
export class MemoryTimeline {
  private timer: NodeJS.Timeout | undefined;
  private current = 'start';
  readonly peaks: Record<string, Record<string, number>> = {};

  constructor(private readonly targets: { name: string; pid: number }[]) {}

  start(intervalMs = 250): void {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  phase(name: string): void {
    this.sample();
    this.current = name;
  }

  private sample(): void {
    const row = (this.peaks[this.current] ??= {});
    for (const t of this.targets) {
      const m = readMemory(t.pid);
      if (m) row[t.name] = Math.max(row[t.name] ?? 0, round(m.rssKb / 1024, 1));
    }
  }

  stop(): void {
    this.sample();
    if (this.timer) clearInterval(this.timer);
  }
}
