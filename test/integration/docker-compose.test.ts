import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';

const root = path.resolve(__dirname, '..', '..');
const composeFile = path.join(root, 'docker-compose.yml');
// scripts/test.sh installs Debian's docker-compose when it is missing, so CI always runs these.
const hasDockerCompose = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;
if (!hasDockerCompose) {
  process.stderr.write('SKIPPED docker-compose.yml checks: the docker-compose binary is not installed (scripts/test.sh installs it)\n');
}
const describeIfCompose = hasDockerCompose ? describe : describe.skip;

function compose(...args: string[]): string {
  return execFileSync('docker-compose', ['-f', composeFile, ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The lines of one service in the normalized `docker-compose config` output (two-space indented keys). */
function serviceBlock(config: string, service: string): string {
  const lines = config.split('\n');
  const start = lines.indexOf(`  ${service}:`);
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && /^ {0,2}\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** Whether a service block maps host port `port` to container port `port`, in either syntax compose prints. */
function publishes(block: string, port: number): boolean {
  const long = new RegExp(`published: "?${port}"?\\n\\s+target: ${port}\\b`);
  const short = new RegExp(`- '?(?:[\\d.]+:)?${port}:${port}(?:/tcp)?'?$`, 'm');
  return long.test(block) || short.test(block);
}

describeIfCompose('docker-compose.yml', () => {
  let config = '';
  beforeAll(() => {
    config = compose('config');
  });

  it('when docker-compose validates it, then the file is accepted', () => {
    expect(() => compose('config', '-q')).not.toThrow();
  });

  it('when the services are listed, then temporal, redis, worker, ingress, paper-bridge and registry-import are there', () => {
    const services = compose('config', '--services').trim().split('\n').sort();
    expect(services).toEqual(expect.arrayContaining(['ingress', 'paper-bridge', 'redis', 'temporal', 'worker']));
    expect(services).toContain('registry-import');
  });

  it('when the config is resolved, then ingress publishes port 8080 and the UI of Temporal 8233', () => {
    const ingress = serviceBlock(config, 'ingress');
    expect(ingress).not.toBe('');
    expect(publishes(ingress, 8080)).toBe(true);
    expect(publishes(serviceBlock(config, 'temporal'), 8233)).toBe(true);
    expect(publishes(ingress, 8081)).toBe(false);
  });

  it('when any long-running process dies, then Docker starts it again; only the one-shot registry import is not restarted', () => {
    const services = [...config.matchAll(/^ {2}([a-z0-9-]+):$/gm)].map((m) => m[1]!).filter((s) => serviceBlock(config, s).includes('image:'));
    expect(services.sort()).toEqual(['ingress', 'paper-bridge', 'redis', 'registry-import', 'temporal', 'worker']);
    for (const service of services) {
      const policy = /restart: (\S+)/.exec(serviceBlock(config, service))?.[1];
      expect({ service, policy }).toEqual({ service, policy: service === 'registry-import' ? '"no"' : 'unless-stopped' });
    }
  });

  it('when Redis starts, then it keeps an append-only file (fsync every second) on a named volume and restarts by itself', () => {
    const redis = serviceBlock(config, 'redis');
    expect(redis).toMatch(/- --appendonly\n\s+- "?yes"?\n\s+- --appendfsync\n\s+- everysec\n/);
    expect(redis).toMatch(/- redis-data:\/data(:rw)?$/m);
    expect(redis).toMatch(/restart: unless-stopped/);
    expect(config).toMatch(/^volumes:\n {2}redis-data:/m);
  });

  it('when the stack comes up again, then the demo registry is imported only into a Redis that holds no account', () => {
    const importer = serviceBlock(config, 'registry-import');
    expect(importer).toContain('account list --json)" = "[]" ]; then node');
    expect(importer).toContain('dist/src/cli/admin.js import demo/registry.json');
  });

  it("when the ingress runs, then its admin listener (/metrics, /readyz) is published on the host's loopback only", () => {
    const ingress = serviceBlock(config, 'ingress');
    expect(ingress).toMatch(/ADMIN_PORT: '?"?9465/);
    expect(ingress).toMatch(/- '?127\.0\.0\.1:9465:9465(\/tcp)?'?$/m);
    expect(publishes(ingress, 9465)).toBe(true);
    expect(ingress).not.toMatch(/- '?(0\.0\.0\.0:)?9465:9465/m);
  });

  it('when the Temporal service starts, then it registers every search attribute of ours with its type', () => {
    const temporal = serviceBlock(config, 'temporal');
    expect(SEARCH_ATTRIBUTES.map((a) => a.name)).toEqual(
      expect.arrayContaining(['SignalId', 'AccountId', 'Action', 'Symbol', 'Outcome', 'OwnerId', 'ReceivedAt']),
    );
    for (const { name, type } of SEARCH_ATTRIBUTES) expect(temporal).toContain(`${name}=${type}`);
  });
});
