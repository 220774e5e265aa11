import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CURRENT_BRIDGE_VERSION } from '../domain/capabilities';
import { zip, type ZipEntry } from './zip';

/**
 * The MT5 bridge package (docs/mt5-bridge.md): the wheel of bridges/mt5, a one-page README, the config file
 * es-mt5-bridge.ini and the Windows start scripts, in one zip. `make dist` builds it into dist/mt5-bridge/
 * (scripts/dist-mt5.ts): the zip with the config template, and the same files loose under contents/ with a manifest.
 * The ingress reads that folder (the Dockerfile copies it into the image) and builds an owner's personal zip from the
 * same files with the service URL and a new bridge token written into the config.
 */

export const CONFIG_FILE = 'es-mt5-bridge.ini';
export const PACKAGE_FOLDER = 'mt5-bridge';
export const packageFileName = (version: string) => `mt5-bridge-${version}.zip`;

export interface Mt5Manifest {
  version: string;
  builtAt: string;
  wheel: string;
  /** The zip's files in order (the wheel among them), each under contents/. */
  files: string[];
  zip: string;
  sha256: string;
}

export interface Mt5Package {
  manifest: Mt5Manifest;
  files: ZipEntry[];
  zip: Buffer;
}

/** The package's zip with `config` as its config file: the one function that makes both the generic and a personal zip. */
export function packageZip(files: ZipEntry[], config: string, builtAt: Date): Buffer {
  if (!files.some((f) => f.name === CONFIG_FILE)) throw new Error(`the package has no ${CONFIG_FILE}`);
  return zip(
    files.map((f) => (f.name === CONFIG_FILE ? { name: f.name, data: Buffer.from(config, 'utf8') } : f)),
    builtAt,
  );
}

const TOKEN = /^brg_[A-Za-z0-9_-]{20,200}$/;

/** The service URL as the config file holds it, or undefined when it cannot be one (not http(s), or a character INI reads otherwise). */
export function configUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if ((parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || /[\s;#]/.test(url)) return undefined;
  return url.replace(/\/+$/, '');
}

/** Whether the service URL names this machine (127.0.0.0/8, ::1, localhost, 0.0.0.0): on the trader's PC, that PC itself. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]' || host === '0.0.0.0' || host === 'localhost' || host.endsWith('.localhost');
}

/**
 * What the owner is told when the package's url is a loopback address (docs/mt5-bridge.md, "PUBLIC_URL"): the
 * download is not refused (one machine running both the service and the bridge is a real test set-up), but the
 * page warns before it and the package's config says so beside its url line.
 */
export function loopbackWarning(url: string): string | null {
  if (!isLoopbackUrl(url)) return null;
  return (
    `This service's address is ${url.replace(/\/+$/, '')}, a loopback address: a bridge on another PC reaches itself there, not this service. ` +
    'Set PUBLIC_URL to the address the PC of the MT5 terminal reaches this service at (for example https://signals.example.com or ' +
    'http://192.168.1.20:8080), restart the service, then download again. On this same machine the package works as it is.'
  );
}

/** The template with the service URL and the bridge token written in (its `url =` and `token =` lines). */
export function personalConfig(template: string, url: string, token: string): string {
  const serviceUrl = configUrl(url);
  if (serviceUrl === undefined) throw new Error('the service URL cannot go into the config');
  if (!TOKEN.test(token)) throw new Error('not a bridge token');
  const warning = loopbackWarning(serviceUrl);
  const eol = template.includes('\r\n') ? '\r\n' : '\n';
  let written = 0;
  const out = template.replace(/^(url|token)[ \t]*=.*$/gm, (_line, key: string) => {
    written += 1;
    if (key === 'url' && warning) return `; WARNING: ${warning}${eol}url = ${serviceUrl}`;
    return `${key} = ${key === 'url' ? serviceUrl : token}`;
  });
  if (written !== 2) throw new Error(`the config template needs one url and one token line, found ${written}`);
  return out;
}

/** dist/mt5-bridge beside the running code: dist/src/downloads/ when built, src/downloads/ from source. */
export function findMt5PackageDir(from: string = __dirname): string | undefined {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    for (const candidate of [path.join(dir, PACKAGE_FOLDER), path.join(dir, 'dist', PACKAGE_FOLDER)]) {
      if (existsSync(path.join(candidate, 'manifest.json'))) return candidate;
    }
  }
  return undefined;
}

/**
 * Reads a built package; refuses one whose version is not the service's current MT5 bridge version (a dist/ left
 * from before a version change: the 412 would name one version and the download hand out another).
 */
export function loadMt5Package(dir: string): Mt5Package {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Mt5Manifest;
  if (manifest.version !== CURRENT_BRIDGE_VERSION.mt5) {
    throw new Error(
      `the MT5 bridge package in ${dir} is ${manifest.version}, the service's current MT5 bridge is ${CURRENT_BRIDGE_VERSION.mt5}: run make dist`,
    );
  }
  const files = manifest.files.map((name) => ({ name, data: readFileSync(path.join(dir, 'contents', path.basename(name))) }));
  const bytes = readFileSync(path.join(dir, path.basename(manifest.zip)));
  if (createHash('sha256').update(bytes).digest('hex') !== manifest.sha256)
    throw new Error(`${manifest.zip} in ${dir} does not match its manifest: run make dist`);
  return { manifest, files, zip: bytes };
}

/** The package the ingress serves: read on first use, kept; a missing or stale one is read again on the next ask. */
export class Mt5Packages {
  private loaded: Mt5Package | undefined;

  constructor(
    private readonly locate: () => string | undefined = findMt5PackageDir,
    private readonly onProblem: (message: string) => void = () => undefined,
  ) {}

  current(): Mt5Package | undefined {
    if (this.loaded) return this.loaded;
    const dir = this.locate();
    if (dir === undefined) {
      this.onProblem('the MT5 bridge package is not built (dist/mt5-bridge): run make dist');
      return undefined;
    }
    try {
      this.loaded = loadMt5Package(dir);
    } catch (err) {
      this.onProblem(err instanceof Error ? err.message : String(err));
    }
    return this.loaded;
  }

  /** A personal copy: the service URL and this bridge token in the config file. */
  personal(pkg: Mt5Package, url: string, token: string): Buffer {
    const template = pkg.files.find((f) => f.name === CONFIG_FILE)!.data.toString('utf8');
    return packageZip(pkg.files, personalConfig(template, url, token), new Date(pkg.manifest.builtAt));
  }
}
