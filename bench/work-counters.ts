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
