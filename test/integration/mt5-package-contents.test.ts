import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../support/infra';
import { CURRENT_BRIDGE_VERSION, capabilityGap } from '../../src/domain/capabilities';
import { CTRADER_CONNECTOR_VERSION } from '../../src/ctrader/bridge';
import { accountSchema } from '../../src/domain/account';
import {
  CONFIG_FILE,
  findMt5PackageDir,
  isLoopbackUrl,
  loadMt5Package,
  loopbackWarning,
  personalConfig,
  type Mt5Manifest,
} from '../../src/downloads/mt5-package';
import { iniSettings, python, unpack } from '../helpers/mt5-package';

/**
 * The MT5 bridge package `make dist` built (scripts/test.sh runs it before jest): one version everywhere, the files a
 * trader needs, and a config that takes exactly the service URL and token written into it.
 */

const BRIDGE = path.join(REPO_ROOT, 'bridges', 'mt5');
const bridgeVersion = /^__version__ = "([^"]+)"$/m.exec(fs.readFileSync(path.join(BRIDGE, 'src', 'es_mt5_bridge', '__init__.py'), 'utf8'))![1]!;
const dir = findMt5PackageDir(path.join(REPO_ROOT, 'src', 'downloads'))!;
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Mt5Manifest;
const work = path.join(REPO_ROOT, '.run', `mt5-package-unit-${process.pid}`);

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe('one MT5 bridge version', () => {
  test('when the bridge, its wheel, the package and the service are asked their version, then they all say the bridge’s __version__', () => {
    // pyproject takes the version from __version__ and states none of its own.
    const pyproject = fs.readFileSync(path.join(BRIDGE, 'pyproject.toml'), 'utf8');
    expect(pyproject).toMatch(/^dynamic = \["version"\]$/m);
    expect(pyproject).toMatch(/^version = \{ attr = "es_mt5_bridge.__version__" \}$/m);
    expect(pyproject).not.toMatch(/^version = "/m);
    expect(CURRENT_BRIDGE_VERSION.mt5).toBe(bridgeVersion);
    expect(manifest.version).toBe(bridgeVersion);
    expect(manifest.wheel).toBe(`es_mt5_bridge-${bridgeVersion}-py3-none-any.whl`);
    const wheel = path.join(dir, 'contents', manifest.wheel);
    const metadata = python([
      '-c',
      'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())',
      wheel,
      `es_mt5_bridge-${bridgeVersion}.dist-info/METADATA`,
    ]);
    expect(metadata).toMatch(new RegExp(`^Version: ${bridgeVersion.replaceAll('.', '\\.')}$`, 'm'));
    // The hello's version is __version__ (bridge.py sends it), as the installed wheel reports it.
    expect(python(['-c', 'import sys; sys.path.insert(0, sys.argv[1]); import es_mt5_bridge; print(es_mt5_bridge.__version__)', wheel]).trim()).toBe(
      bridgeVersion,
    );
    expect(CURRENT_BRIDGE_VERSION.ctrader).toBe(CTRADER_CONNECTOR_VERSION);
  });

  test('when an MT5 bridge is too old for an action, then the refusal names the version to install; a venue without the order type names none', () => {
    const account = (bridgeVersion: string, stopLimit = true) =>
      accountSchema.parse({ id: 'acc-1', owner: 'alice', platform: 'mt5', bridgeVersion, venue: { stopLimit } });
    const gap = capabilityGap(account('1.9.0'), 'buy_stop_limit')!;
    expect(gap.install).toBe(bridgeVersion);
    expect(gap.message).toContain(`install the MT5 bridge ${bridgeVersion}`);
    expect(gap.message).toContain('update the bridge and retry');
    expect(capabilityGap(account(bridgeVersion, false), 'buy_stop_limit')).toEqual({ message: 'the venue of this account offers no stop-limit orders' });
    expect(capabilityGap(account(bridgeVersion), 'buy_stop_limit')).toBeUndefined();
  });
});

describe('the package make dist built', () => {
  const pkg = loadMt5Package(dir);
  const { files } = unpack(pkg.zip, path.join(work, 'generic'));

  test('when it is unpacked, then it holds the wheel, the README, the config template and both start scripts, in Windows line endings', () => {
    expect(Object.keys(files).sort()).toEqual(['README.txt', 'es-mt5-bridge.ini', manifest.wheel, 'start-bridge.cmd', 'start-bridge.ps1'].sort());
    expect(files[manifest.wheel]).toEqual(fs.readFileSync(path.join(dir, 'contents', manifest.wheel)));
    for (const name of ['README.txt', CONFIG_FILE, 'start-bridge.cmd', 'start-bridge.ps1']) {
      const text = files[name]!.toString('utf8');
      expect(text).not.toMatch(/[^\r]\n/);
      expect(text).not.toContain('{{');
    }
    expect(files['README.txt']!.toString()).toContain(`MT5 bridge ${bridgeVersion}`);
  });

  test('when the start scripts run, then they install this zip’s wheel and start the bridge with this zip’s config file', () => {
    for (const script of ['start-bridge.cmd', 'start-bridge.ps1']) {
      const text = files[script]!.toString('utf8');
      expect(text).toContain(manifest.wheel);
      expect(text).toContain(`-m es_mt5_bridge --config ${CONFIG_FILE}`);
      expect(text).toContain('-m venv .venv');
    }
  });

  test('when the template is read as the bridge reads it, then url and token are placeholders to fill in', () => {
    expect(iniSettings(path.join(work, 'generic', 'unpacked', CONFIG_FILE))).toEqual({
      url: 'https://signals.example.com',
      token: 'brg_paste_the_bridge_token_of_your_account_here',
    });
  });

  test('when a URL and a token are written into the template, then the bridge reads exactly those, and nothing else changed', () => {
    const template = files[CONFIG_FILE]!.toString('utf8');
    const token = `brg_${'A'.repeat(43)}`;
    const written = personalConfig(template, 'https://signals.example.org/', token);
    const file = path.join(work, 'written.ini');
    fs.writeFileSync(file, written);
    expect(iniSettings(file)).toEqual({ url: 'https://signals.example.org', token });
    expect(written.split('\r\n').length).toBe(template.split('\r\n').length);
  });

  test('when the URL is a loopback address, then the config warns above its url line and says to set PUBLIC_URL; the bridge still reads the same settings', () => {
    const template = files[CONFIG_FILE]!.toString('utf8');
    const token = `brg_${'A'.repeat(43)}`;
    const written = personalConfig(template, 'http://127.0.0.1:8080/', token);
    const warning = loopbackWarning('http://127.0.0.1:8080')!;
    expect(warning).toMatch(/^This service's address is http:\/\/127\.0\.0\.1:8080, a loopback address: .* Set PUBLIC_URL to /);
    expect(written).toContain(`\r\n; WARNING: ${warning}\r\nurl = http://127.0.0.1:8080\r\n`);
    const file = path.join(work, 'loopback.ini');
    fs.writeFileSync(file, written);
    expect(iniSettings(file)).toEqual({ url: 'http://127.0.0.1:8080', token });
    expect(personalConfig(template, 'https://signals.example.org', token)).not.toContain('WARNING');
    const loopback = ['http://127.0.0.1:8080', 'http://127.1.2.3', 'http://localhost:3000', 'http://app.localhost', 'http://[::1]:8080', 'http://0.0.0.0:8080'];
    const reachable = ['https://signals.example.com', 'http://192.168.1.20:8080', 'http://10.0.0.5', 'http://127.0.0.1.example.com'];
    expect(loopback.map(isLoopbackUrl)).toEqual(loopback.map(() => true));
    expect(reachable.map(isLoopbackUrl)).toEqual(reachable.map(() => false));
    expect(loopbackWarning('https://signals.example.com')).toBeNull();
  });

  test('when the URL or the token could change the file’s meaning, or the template lacks a line, then nothing is written', () => {
    const template = files[CONFIG_FILE]!.toString('utf8');
    const token = `brg_${'A'.repeat(43)}`;
    expect(() => personalConfig(template, 'https://a.example.com\ntoken = brg_x', token)).toThrow();
    expect(() => personalConfig(template, 'https://a.example.com/;x', token)).toThrow();
    expect(() => personalConfig(template, 'ftp://a.example.com', token)).toThrow();
    expect(() => personalConfig(template, 'https://a.example.com', 'brg_short\nurl = x')).toThrow();
    expect(() => personalConfig('[bridge]\nurl = x\n', 'https://a.example.com', token)).toThrow(/one url and one token line/);
  });
});
