/** Child processes of the bench (load generators, the floor client): each runs in its own process so its CPU is not the bench's. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from './helpers';
import { baseEnv, StageError, tailFile } from './common';
import type { LoadResult, LoadSpec } from './load';
import type { Stack } from './stack';

export const liveChildren = new Set<ChildProcess>();

export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const ac = new AbortController();
  const graceful = await Promise.race([exited.then(() => true), sleep(graceMs, false, { signal: ac.signal }).catch(() => false)]);
  ac.abort();
  if (!graceful) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** `node dist/bench/<script>.js SPEC OUT` to completion within `deadlineMs`; its result file, parsed. */
export async function runChild<T>(runDir: string, label: string, script: 'load' | 'floor' | 'bare/floor', spec: unknown, deadlineMs: number): Promise<T> {
  const specFile = path.join(runDir, `${label}.spec.json`);
  const outFile = path.join(runDir, `${label}.out.json`);
  const logFile = path.join(runDir, `${label}.log`);
  fs.writeFileSync(specFile, JSON.stringify(spec, null, 2));
  fs.rmSync(outFile, { force: true });
  const fd = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [path.join(__dirname, `${script}.js`), specFile, outFile], {
      cwd: REPO_ROOT,
      env: baseEnv(),
      stdio: ['pipe', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  liveChildren.add(child);
  child.stdin?.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  try {
    const ac = new AbortController();
    const result = await Promise.race([exited, sleep(deadlineMs, 'timeout' as const, { signal: ac.signal }).catch(() => 'aborted' as const)]);
    ac.abort();
    if (result === 'timeout') {
      await stopChild(child);
      throw new StageError(`${label} did not finish within ${Math.round(deadlineMs / 1000)} s; last lines of ${logFile}:\n${tailFile(logFile)}`);
    }
    if (result === 'aborted' || result.code !== 0) {
      throw new StageError(`${label} failed (exit ${JSON.stringify(result)}); last lines of ${logFile}:\n${tailFile(logFile)}`);
    }
    return JSON.parse(fs.readFileSync(outFile, 'utf8')) as T;
  } finally {
    liveChildren.delete(child);
    child.stdin?.destroy();
  }
}

export function loadSpec(stack: Stack, spec: Omit<LoadSpec, 'baseUrl'>): LoadSpec {
  return { baseUrl: stack.ingress.url, ...spec };
}

export function loadDeadline(durationSec: number): number {
  return (durationSec + 45) * 1000;
}

export function describeLoad(r: LoadResult): string {
  const s = r.okLatencyMs;
  return `${r.requests} answers ${JSON.stringify(r.statusCounts)}, ${r.okPerSec.toFixed(1)} ok/s, p50 ${s.p50?.toFixed(1)} ms, p99 ${s.p99?.toFixed(1)} ms, errors ${r.errors}, timeouts ${r.timeouts}`;
}

export function stripLoad(r: LoadResult | undefined): Omit<LoadResult, 'accepted'> | undefined {
  if (!r) return undefined;
  const { accepted: _accepted, ...rest } = r;
  return rest;
}
