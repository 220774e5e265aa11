/**
 * Shared by the process-level e2e suites (actions, shutdown, log-redaction): a private registry document imported
 * with the built admin CLI and waits on workflow results. Not a test file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runAdminProcess, serviceEnv } from '../../support/processes';

/** A registry document in a private temporary directory (never under the run's log directory: it holds credentials). */
export interface RegistryFile {
  file: string;
  remove(): void;
}

export function writeRegistry(doc: unknown, label: string): RegistryFile {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `es-${label}-`));
  const file = path.join(dir, 'registry.json');
  fs.writeFileSync(file, JSON.stringify(doc, null, 2), { mode: 0o600 });
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** `admin import FILE --json` with the built CLI against the run's Redis; throws with its stderr unless it exits 0. */
export async function importRegistry(file: string): Promise<{ accounts: number; secrets: number; tokens: number }> {
  const run = await runAdminProcess(['import', file, '--json'], serviceEnv());
  if (run.code !== 0) throw new Error(`admin import exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as { accounts: number; secrets: number; tokens: number };
}

/** `admin ARGS` with the built CLI; throws with its stderr unless it exits 0. */
export async function admin(args: string[]): Promise<string> {
  const run = await runAdminProcess(args, serviceEnv());
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}
