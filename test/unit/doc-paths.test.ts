import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The docs are reference for their readers: every repository path they name exists, and none reads as a diary.
 * Scanned: README.md and every docs/**\/*.md. CHANGELOG.md is not scanned: it is history, and a history entry may
 * rightly name a file that a later change removed or renamed.
 */
const REPO = path.resolve(__dirname, '..', '..');

const TOP_DIRS = ['src', 'test', 'docs', 'scripts', 'bench', 'bridges', 'dashboard', 'support', 'workflows', 'activities', 'demo'];

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(path.join(REPO, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return markdownFiles(rel);
    return e.name.endsWith('.md') ? [rel] : [];
  });
}

const DOCS = ['README.md', ...markdownFiles('docs')];

/** `a/{b,c}/d` → `a/b/d`, `a/c/d` (one level of braces is all the docs use). */
function expandBraces(p: string): string[] {
  const m = /\{([^{}]*)\}/.exec(p);
  if (!m) return [p];
  return m[1]!.split(',').flatMap((alt) => expandBraces(p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)));
}

/**
 * The repository's files, as a clone has them: the tracked files and their folders (a file that exists only in this
 * checkout, such as an untracked bench result, would be missing from a clone). Outside a git checkout, the disk.
 */
function trackedPaths(): Set<string> | undefined {
  let out: string;
  try {
    out = execFileSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  const paths = new Set<string>();
  for (const file of out.split('\0').filter(Boolean)) {
    paths.add(file);
    for (let i = file.indexOf('/'); i > 0; i = file.indexOf('/', i + 1)) paths.add(file.slice(0, i));
  }
  return paths;
}
const TRACKED = trackedPaths();

/** A path with a wildcard exists when the folder before its first wildcard does. */
function exists(p: string): boolean {
  const wild = p.search(/[*…]/);
  const concrete = (wild < 0 ? p : p.slice(0, p.lastIndexOf('/', wild) + 1)).replace(/\/+$/, '');
  if (concrete === '') return true;
  // A file this change adds is not tracked yet: it counts once it is on disk and git is asked about it.
  if (TRACKED) return TRACKED.has(concrete) || (fs.existsSync(path.join(REPO, concrete)) && !ignored(concrete));
  return fs.existsSync(path.join(REPO, concrete));
}

/** Whether git ignores the path (so a clone would not have it). */
function ignored(p: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', p], { cwd: REPO, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const REPO_PATH = new RegExp(String.raw`(?<![\w.\/@:~-])((?:${TOP_DIRS.join('|')})\/[\w.\/*{},@…-]*)`, 'g');
const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

/** The repository paths a doc names, written out (`src/…`) or as relative markdown links, each relative to the root. */
function pathsNamed(doc: string, text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(REPO_PATH)) {
    const p = m[1]!.replace(/[.,:;)]+$/, '');
    for (const e of expandBraces(p)) found.add(e);
  }
  for (const m of text.matchAll(LINK)) {
    const target = m[1]!;
    if (/^[a-z][\w+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('/')) continue;
    const file = target.split('#')[0]!;
    if (file === '') continue;
    found.add(path.posix.normalize(path.posix.join(path.posix.dirname(doc), decodeURI(file))));
  }
  // `../` leaves the repository (another person's checkout); a host name (`demo/live.ctraderapi.com`) is no path.
  return [...found].filter((p) => !p.startsWith('../') && !/\.(com|net|org|io)$/.test(p));
}

describe('docs name only paths that exist', () => {
  test.each(DOCS)('%s', (doc) => {
    const text = fs.readFileSync(path.join(REPO, doc), 'utf8');
    const missing = pathsNamed(doc, text).filter((p) => !exists(p));
    expect(missing).toEqual([]);
  });
});

describe('docs/README.md, the index by reader', () => {
  test('links every page of docs/', () => {
    const index = fs.readFileSync(path.join(REPO, 'docs/README.md'), 'utf8');
    const linked = new Set(pathsNamed('docs/README.md', index));
    const unlisted = DOCS.filter((d) => d.startsWith('docs/') && d !== 'docs/README.md' && !linked.has(d));
    expect(unlisted).toEqual([]);
  });
});

/** Words of a working diary, not of reference: first person, the working session, a tracker's numbers. */
const DIARY = /my own|this stop|the lead\b|issue [0-9]+|session.s changes/i;

describe('docs read as reference, not as a diary', () => {
  test.each(DOCS)('%s', (doc) => {
    const lines = fs.readFileSync(path.join(REPO, doc), 'utf8').split('\n');
    const hits = lines.flatMap((line, i) => (DIARY.test(line) ? [`${doc}:${i + 1}: ${line.trim()}`] : []));
    expect(hits).toEqual([]);
  });
});
