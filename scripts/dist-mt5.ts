import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CURRENT_BRIDGE_VERSION } from '../src/domain/capabilities';
import { CONFIG_FILE, PACKAGE_FOLDER, packageFileName, packageZip, type Mt5Manifest } from '../src/downloads/mt5-package';

/**
 * `make dist`: the MT5 bridge package (docs/mt5-bridge.md) into dist/mt5-bridge/. The wheel is built by pip from a
 * copy of bridges/mt5 (so no build/ or egg-info lands in the checkout) with the setuptools of the cached venv
 * (scripts/ensure-python.sh; PYTHON names its python), then the zip: the wheel, README.txt, es-mt5-bridge.ini and
 * the start scripts from bridges/mt5/package/ with the version and the wheel's name written in, in Windows line
 * endings. The version is the bridge's own `__version__` (the wheel's); it must be the service's current MT5 bridge
 * version (src/domain/capabilities.ts), or nothing is written.
 */

const ROOT = ((): string => {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'bridges', 'mt5', 'pyproject.toml'))) return dir;
  }
  throw new Error('bridges/mt5 not found above ' + __dirname);
})();
const BRIDGE = path.join(ROOT, 'bridges', 'mt5');
const TEMPLATES = path.join(BRIDGE, 'package');
const TEXT_FILES = ['README.txt', CONFIG_FILE, 'start-bridge.cmd', 'start-bridge.ps1'];

function buildWheel(python: string, work: string): string {
  const source = path.join(work, 'source');
  cpSync(BRIDGE, source, {
    recursive: true,
    filter: (p) => !/(__pycache__|\.egg-info|\.pytest_cache|\.mypy_cache|[\\/]build|[\\/]tests|[\\/]package)$/.test(p),
  });
  const out = path.join(work, 'wheel');
  const run = spawnSync(
    python,
    ['-m', 'pip', 'wheel', '--quiet', '--disable-pip-version-check', '--no-deps', '--no-build-isolation', '--no-index', '-w', out, source],
    {
      encoding: 'utf8',
    },
  );
  if (run.status !== 0) throw new Error(`pip wheel failed (${run.status ?? run.signal}):\n${run.stdout}\n${run.stderr}`);
  const wheels = readdirSync(out).filter((f) => f.endsWith('.whl'));
  if (wheels.length !== 1) throw new Error(`pip wheel made ${wheels.length} wheels`);
  return path.join(out, wheels[0]!);
}

export function buildMt5Package(python: string, distDir: string, builtAt = new Date()): Mt5Manifest {
  const work = mkdtempSync(path.join(tmpdir(), 'es-mt5-dist-'));
  try {
    const wheelPath = buildWheel(python, work);
    const wheel = path.basename(wheelPath);
    const version = /^es_mt5_bridge-(\d+\.\d+\.\d+)-/.exec(wheel)?.[1];
    if (version !== CURRENT_BRIDGE_VERSION.mt5) {
      throw new Error(
        `the wheel is ${wheel}, the service's current MT5 bridge version is ${CURRENT_BRIDGE_VERSION.mt5} (src/domain/capabilities.ts): change both together`,
      );
    }
    // Zip time has a 2 s resolution; the manifest keeps the same instant, so the service rebuilds the same bytes.
    const at = new Date(Math.floor(builtAt.getTime() / 2000) * 2000);
    const render = (name: string) =>
      Buffer.from(
        readFileSync(path.join(TEMPLATES, name), 'utf8').replaceAll('{{VERSION}}', version).replaceAll('{{WHEEL}}', wheel).replace(/\r?\n/g, '\r\n'),
        'utf8',
      );
    const files = [...TEXT_FILES.map((name) => ({ name, data: render(name) })), { name: wheel, data: readFileSync(wheelPath) }];
    const bytes = packageZip(files, files.find((f) => f.name === CONFIG_FILE)!.data.toString('utf8'), at);
    const manifest: Mt5Manifest = {
      version,
      builtAt: at.toISOString(),
      wheel,
      files: files.map((f) => f.name),
      zip: packageFileName(version),
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
    const staging = path.join(work, PACKAGE_FOLDER);
    mkdirSync(path.join(staging, 'contents'), { recursive: true });
    for (const f of files) writeFileSync(path.join(staging, 'contents', f.name), f.data);
    writeFileSync(path.join(staging, manifest.zip), bytes);
    writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    // Copied beside the target, then swapped in by renames: never a half-written folder under the target's name.
    const target = path.join(distDir, PACKAGE_FOLDER);
    mkdirSync(distDir, { recursive: true });
    const old = `${target}.old-${process.pid}`;
    try {
      renameSync(target, old);
    } catch {
      // no earlier package
    }
    cpSync(staging, `${target}.new-${process.pid}`, { recursive: true });
    renameSync(`${target}.new-${process.pid}`, target);
    rmSync(old, { recursive: true, force: true });
    return manifest;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  try {
    const manifest = buildMt5Package(process.env.PYTHON ?? 'python3', path.join(ROOT, 'dist'));
    console.log(`mt5 bridge package: dist/${PACKAGE_FOLDER}/${manifest.zip} (${manifest.wheel})`);
  } catch (err) {
    console.error(`make dist: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
