/**
 * Work counted rather than timed (stable across runs on a noisy machine): Temporal's own metrics (the dev server's
 * Prometheus endpoint: persistence calls and their latency per stage) and Redis's command counter.
 */
import fs from 'node:fs';
import path from 'node:path';
import { round } from './stats';

/** The metrics port of the Temporal dev server in a process group, from its command line. */
export function temporalMetricsPort(pgid: number): number | undefined {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      const i = argv.indexOf('--metrics-port');
      if (i >= 0 && path.basename(argv[0] ?? '') === 'temporal') return Number(argv[i + 1]);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** The postmaster of a PostgreSQL cluster: its backends are its children (each in a process group of its own). */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export type PersistenceTotals = Record<string, { count: number; sumS: number }>;

export async function scrapePersistence(port: number | undefined): Promise<PersistenceTotals | undefined> {
  if (!port) return undefined;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
    const text = await res.text();
    const out: PersistenceTotals = {};
    for (const line of text.split('\n')) {
      const m = /^(visibility_)?persistence_latency_(count|sum)\{([^}]*)\} ([0-9.e+-]+)$/.exec(line);
      if (!m) continue;
      const op = `${m[1] ? 'visibility:' : ''}${/operation="([^"]*)"/.exec(m[3]!)?.[1] ?? '?'}`;
      const entry = (out[op] ??= { count: 0, sumS: 0 });
      if (m[2] === 'count') entry.count += Number(m[4]);
      else entry.sumS += Number(m[4]);
    }
    return out;
  } catch {
    return undefined;
  }
}

export interface PersistenceUsage {
  calls: number;
  meanMs: number;
  /** Summed latency of all calls (they overlap; SQLite serializes writes). */
  totalMs: number;
  callsPerSignal: number | null;
  top: { op: string; calls: number; meanMs: number; totalMs: number }[];
}

export function persistenceUsage(a: PersistenceTotals | undefined, b: PersistenceTotals | undefined, signals: number): PersistenceUsage | undefined {
  if (!a || !b) return undefined;
  const ops = Object.keys(b).map((op) => {
    const calls = (b[op]?.count ?? 0) - (a[op]?.count ?? 0);
    const totalMs = ((b[op]?.sumS ?? 0) - (a[op]?.sumS ?? 0)) * 1000;
    return { op, calls, totalMs: round(totalMs, 1), meanMs: calls > 0 ? round(totalMs / calls, 2) : 0 };
  });
  const calls = ops.reduce((s, o) => s + o.calls, 0);
  const totalMs = ops.reduce((s, o) => s + o.totalMs, 0);
  return {
    calls,
    meanMs: calls > 0 ? round(totalMs / calls, 2) : 0,
    totalMs: round(totalMs, 0),
    callsPerSignal: signals > 0 ? round(calls / signals, 1) : null,
    top: ops
      .filter((o) => o.calls > 0)
      .sort((x, y) => y.totalMs - x.totalMs)
      .slice(0, 8),
  };
}

export async function redisCommandsProcessed(redis: { info(section: string): Promise<string> }): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0);
}

/** Calls per Redis command name since the server started (INFO commandstats). */
export async function redisCommandStats(redis: { info(section: string): Promise<string> }): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

export interface SignalPathCommands {
  /** Every command Redis processed in the window. */
  total: number;
  /** Less each command's idle rate (the bridges' long-polls and presence, nothing else going on) over the window. */
  signalPath: number;
  perAccepted: number | null;
  /** The signal path's commands by name, most first. */
  byCommand: { command: string; calls: number }[];
}

/**
 * Redis commands on the signal path: the window's calls per command name, less that command's calls at rest (measured
 * just before over `idle`, scaled to the window's length); `info` (the bench's own counter reads) left out.
 */
export function signalPathCommands(
  idle: { before: Record<string, number>; after: Record<string, number>; seconds: number },
  window: { before: Record<string, number>; after: Record<string, number>; seconds: number },
  accepted: number,
): SignalPathCommands {
  const byCommand: { command: string; calls: number }[] = [];
  let total = 0;
  for (const [command, after] of Object.entries(window.after)) {
    if (command === 'info') continue;
    const calls = after - (window.before[command] ?? 0);
    total += calls;
    const idleRate = ((idle.after[command] ?? 0) - (idle.before[command] ?? 0)) / Math.max(0.001, idle.seconds);
    const onPath = Math.max(0, Math.round(calls - idleRate * window.seconds));
    if (onPath > 0) byCommand.push({ command, calls: onPath });
  }
  byCommand.sort((a, b) => b.calls - a.calls);
  const signalPath = byCommand.reduce((s, c) => s + c.calls, 0);
  return { total, signalPath, perAccepted: accepted > 0 ? round(signalPath / accepted, 1) : null, byCommand };
}
