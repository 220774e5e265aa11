/**
 * Where a .cpuprofile's time went: `node dist/bench/profile-summary.js FILE.cpuprofile [TOP]`.
 * Prints the share of samples by package/area (self time, by the file of the function on top of the stack) and the
 * top functions by self time, plus inclusive ("total") time of the service's own entry points.
 */
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

function area(url: string, fn: string): string {
  if (!url)
    return fn === '(garbage collector)'
      ? 'GC'
      : fn === '(idle)'
        ? 'idle'
        : fn === '(program)'
          ? 'program (native, unattributed)'
          : `native: ${fn || '(anonymous)'}`;
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = u.slice(nm + 'node_modules/'.length).split('/');
    return `npm: ${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (u.startsWith('node:')) return `node: ${u.slice(5).split('/')[0]}`;
  const d = u.indexOf('/dist/');
  if (d >= 0)
    return `ours: ${u
      .slice(d + 6)
      .split('/')
      .slice(0, 2)
      .join('/')}`;
  return u;
}

export function summarizeProfile(file: string, top = 25): string {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Self time per node from the samples (time deltas), falling back to hit counts.
  const self = new Map<number, number>();
  if (p.samples && p.timeDeltas) {
    for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i + 1] ?? 0));
  } else {
    const per =
      (p.endTime - p.startTime) /
      Math.max(
        1,
        p.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0),
      );
    for (const n of p.nodes) self.set(n.id, (n.hitCount ?? 0) * per);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((s, [, v]) => s + v, 0);
  const busy = total - idle;
  const byArea = new Map<string, number>();
  const byFn = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const a = area(n.callFrame.url, n.callFrame.functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
    if (n.callFrame.functionName === '(idle)') continue;
    const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url ? `${path.basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}` : ''} [${a}]`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  // Inclusive time of functions whose name we care about (each sample counted once per function).
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      const name = n.callFrame.functionName;
      if (!name || seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const pct = (us: number) => `${((100 * us) / Math.max(1, busy)).toFixed(1).padStart(5)}%`;
  const lines: string[] = [];
  lines.push(
    `${path.basename(file)}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / Math.max(1, total)).toFixed(0)}%)`,
  );
  lines.push('', 'self time by area (share of busy):');
  for (const [a, us] of [...byArea]
    .filter(([a]) => a !== 'idle')
    .sort((x, y) => y[1] - x[1])
    .slice(0, top))
    lines.push(`  ${ms(us)} ms ${pct(us)}  ${a}`);
  lines.push('', 'top functions by self time:');
  for (const [f, us] of [...byFn].sort((x, y) => y[1] - x[1]).slice(0, top)) lines.push(`  ${ms(us)} ms ${pct(us)}  ${f}`);
  const interesting = [
    'acceptSignal',
    'readSignalStatus',
    'bridgeCommands',
    'bridgeReports',
    'bridgeHello',
    'launch',
    'resolveTargets',
    'validateSignal',
    'authenticateSecret',
    'authenticateToken',
    'authenticateBridge',
    'getAccounts',
    'hit',
    'next',
    'takeOrWait',
    'take',
    'recordReport',
    'deliverReport',
    'outcomes',
    'started',
    'call',
    'start',
    'describe',
    'signal',
    'write',
    'asJson',
    'parse',
    'stringify',
    'sendCommand',
    'evalsha',
  ];
  lines.push('', 'inclusive time of selected functions (share of busy):');
  for (const name of interesting) {
    const us = inclusive.get(name);
    if (us) lines.push(`  ${ms(us)} ms ${pct(us)}  ${name}`);
  }
  return lines.join('\n');
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/bench/profile-summary.js FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarizeProfile(file, top ? Number(top) : 25)}\n`);
}
