/** CPU: where the machine's CPU went during a stage (this machine is shared; what others used is reported too). */
import fs from 'node:fs';
import { round } from './stats';

const CLK_TCK = 100; // USER_HZ of /proc/stat and /proc/<pid>/stat on Linux

export interface CpuSnapshot {
  t: number;
  /** Busy ticks of the whole machine (/proc/stat: user nice system irq softirq steal). */
  busy: number;
  steal: number;
  /** Ticks of every process in each named process group (utime+stime+cutime+cstime). */
  groups: Record<string, number>;
  /** This process and its reaped children (the load generators). */
  self: number;
}

export interface CpuUsage {
  seconds: number;
  /** Cores busy on the whole machine. */
  machine: number;
  /** Cores used by each program of the stack. */
  byProgram: Record<string, number>;
  /** Cores used by the bench itself and its load generators. */
  benchAndLoad: number;
  /** Cores used by everything else on the machine (other people's processes). */
  others: number;
  /** Cores the hypervisor stole. */
  steal: number;
}

function ticksOf(statLine: string): { ppid: number; pgrp: number; ticks: number } {
  const f = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), pgrp: Number(f[2]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
}

/**
 * `groups`: program name → process group. `trees`: program name → a parent pid whose children count for it (a
 * PostgreSQL backend puts itself in a process group of its own, so its postmaster's group does not hold it).
 */
export function cpuSnapshot(groups: Record<string, number>, trees: Record<string, number> = {}): CpuSnapshot {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  const byPgid = new Map<number, string>();
  for (const [name, pgid] of Object.entries(groups)) if (pgid > 0) byPgid.set(pgid, name);
  const byParent = new Map<number, string>();
  for (const [name, pid] of Object.entries(trees)) if (pid > 0) byParent.set(pid, name);
  const out: Record<string, number> = Object.fromEntries([...Object.keys(groups), ...Object.keys(trees)].map((n) => [n, 0]));
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const { ppid, pgrp, ticks } = ticksOf(fs.readFileSync(`/proc/${d}/stat`, 'utf8'));
      const name = byPgid.get(pgrp) ?? byParent.get(ppid) ?? byParent.get(Number(d));
      if (name !== undefined) out[name] = (out[name] ?? 0) + ticks;
    } catch {
      // gone meanwhile
    }
  }
  return {
    t: Date.now(),
    busy: user + nice + system + irq + softirq + steal,
    steal,
    groups: out,
    self: ticksOf(fs.readFileSync('/proc/self/stat', 'utf8')).ticks,
  };
}

export function cpuUsage(a: CpuSnapshot, b: CpuSnapshot): CpuUsage {
  const seconds = Math.max(0.001, (b.t - a.t) / 1000);
  const cores = (ticks: number) => round(ticks / CLK_TCK / seconds, 2);
  const byProgram: Record<string, number> = {};
  let ours = b.self - a.self;
  for (const name of Object.keys(b.groups)) {
    const d = Math.max(0, (b.groups[name] ?? 0) - (a.groups[name] ?? 0));
    byProgram[name] = cores(d);
    ours += d;
  }
  return {
    seconds: round(seconds, 1),
    machine: cores(b.busy - a.busy),
    byProgram,
    benchAndLoad: cores(b.self - a.self),
    others: cores(Math.max(0, b.busy - a.busy - ours)),
    steal: cores(b.steal - a.steal),
  };
}

export function describeCpu(u: CpuUsage): string {
  const programs = Object.entries(u.byProgram)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `CPU (cores) over ${u.seconds} s: machine ${u.machine}; ${programs}, bench+load ${u.benchAndLoad}; other processes ${u.others}; steal ${u.steal}`;
}
