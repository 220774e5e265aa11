import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The MT5 bridge package as a trader's PC sees it: unpacked with Python's own zip reader (not ours), files read back. */

const PYTHON = process.env.PYTHON ?? 'python3';

export function python(args: string[], options: { env?: Record<string, string> } = {}): string {
  const run = spawnSync(PYTHON, args, { encoding: 'utf8', env: { ...process.env, ...options.env } });
  if (run.status !== 0) throw new Error(`${PYTHON} ${args.join(' ')}: exit ${run.status ?? run.signal}\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

/** Writes the zip to `dir`/package.zip, checks it (CRC of every entry), unpacks it into `dir`/unpacked; returns its files. */
export function unpack(zip: Buffer, dir: string): { dir: string; files: Record<string, Buffer> } {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'package.zip');
  fs.writeFileSync(file, zip);
  python(['-m', 'zipfile', '-t', file]);
  const out = path.join(dir, 'unpacked');
  python(['-m', 'zipfile', '-e', file, out]);
  const files = Object.fromEntries(fs.readdirSync(out).map((name) => [name, fs.readFileSync(path.join(out, name))]));
  return { dir: out, files };
}

/** The `[bridge]` settings of an es-mt5-bridge.ini, as the bridge's configparser reads them. */
export function iniSettings(file: string): Record<string, string> {
  const script =
    'import configparser, json, sys; p = configparser.ConfigParser(interpolation=None); p.read(sys.argv[1], encoding="utf-8"); print(json.dumps(dict(p.items("bridge"))))';
  return JSON.parse(python(['-c', script, file])) as Record<string, string>;
}
