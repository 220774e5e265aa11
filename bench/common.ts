/** Logging and small helpers every part of the bench uses. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A stage that did not complete (by its deadline, or at all): the message says which and why. */
export class StageError extends Error {}

const benchStarted = Date.now();
export function log(message: string): void {
  process.stderr.write(`[bench +${((Date.now() - benchStarted) / 1000).toFixed(1)}s] ${message}\n`);
}

export function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'TZ']) if (process.env[name] !== undefined) out[name] = process.env[name]!;
  return out;
}

export function tailFile(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

export function credential(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** A timestamp usable as a file name everywhere (ISO 8601 with the colons as dashes). */
export function fileStamp(d: Date): string {
  return d.toISOString().replace(/:/g, '-');
}

export async function httpJson(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 10_000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/** Runs `fn` against a deadline; past it, a StageError naming the stage. */
export async function withDeadline<T>(stage: string, ms: number, fn: () => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const timeout = sleep(ms, 'timeout' as const, { signal: ac.signal }).catch(() => 'aborted' as const);
  try {
    const result = await Promise.race([fn(), timeout]);
    if (result === 'timeout') throw new StageError(`${stage} did not complete within ${Math.round(ms / 1000)} s`);
    return result as T;
  } finally {
    ac.abort();
  }
}
