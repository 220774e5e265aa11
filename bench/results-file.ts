/** Where the figures are kept: bench/results/<timestamp>.json and latest.json, with the code they measured. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers';

/** The code measured: the commit and whether src/workflows/activities differ from it (at the start), and when dist/ was built. */
export function gitState(): { commit: string | null; dirty: boolean | null; distBuiltAt: string | null } {
  let distBuiltAt: string | null = null;
  try {
    distBuiltAt = fs.statSync(path.join(REPO_ROOT, 'dist', 'src', 'server.js')).mtime.toISOString();
  } catch {
    // not built
  }
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'workflows', 'activities'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty, distBuiltAt };
  } catch {
    return { commit: null, dirty: null, distBuiltAt };
  }
}

export function writeResults(doc: unknown, stamp: string, prefix = ''): string {
  const dir = path.join(REPO_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const file = path.join(dir, `${prefix}${stamp}.json`);
  for (const target of [file, path.join(dir, `${prefix}latest.json`)]) {
    fs.writeFileSync(`${target}.tmp`, text);
    fs.renameSync(`${target}.tmp`, target);
  }
  return file;
}
