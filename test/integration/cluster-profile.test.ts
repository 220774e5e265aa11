import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  clusterServerConfig,
  connectionsFor,
  dynamicConfigYaml,
  TEMPORAL_CLUSTER_DYNAMIC_CONFIG,
  type ClusterPorts,
} from '../../scripts/temporal-cluster-profile';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';

const root = path.resolve(__dirname, '..', '..');
const composeFile = path.join(root, 'docker-compose.cluster.yml');
const ports: ClusterPorts = {
  frontendGrpc: 21001,
  frontendHttp: 21002,
  frontendMembership: 21003,
  historyGrpc: 21004,
  historyMembership: 21005,
  matchingGrpc: 21006,
  matchingMembership: 21007,
  workerGrpc: 21008,
  workerMembership: 21009,
  metrics: 21010,
};
const render = (shards: number) =>
  clusterServerConfig({ ports, postgres: { host: '127.0.0.1', port: 25432, user: 'temporal', password: 'p"w' }, shards, dynamicConfigFile: '/tmp/dc.yaml' });

/** The cluster profile's Temporal server config, and the compose file that runs the same topology with Docker. */
describe('the cluster profile', () => {
  test('when the server config is rendered, then it has the shards, every service on loopback and both stores on PostgreSQL', () => {
    const yaml = render(8);
    expect(yaml).toMatch(/numHistoryShards: 8\n/);
    expect(yaml.match(/pluginName: "postgres12"/g)).toHaveLength(2);
    expect(yaml).toContain('databaseName: "temporal"');
    expect(yaml).toContain('databaseName: "temporal_visibility"');
    expect(yaml).toContain('connectAddr: "127.0.0.1:25432"');
    // The password is quoted as a YAML string, whatever it holds.
    expect(yaml).toContain('password: "p\\"w"');
    for (const p of Object.values(ports)) expect(yaml).toContain(String(p));
    expect(yaml.match(/bindOnIP: "127.0.0.1"/g)).toHaveLength(4);
    expect(yaml).toContain(`maxConns: ${connectionsFor(8).default}`);
  });

  test('when the shards are out of range, then rendering refuses', () => {
    expect(() => render(0)).toThrow(/history shards/);
    expect(() => render(2.5)).toThrow(/history shards/);
    expect(render(16)).toMatch(/numHistoryShards: 16\n/);
  });

  test('when the dynamic config is written, then each setting is there and says why', () => {
    const yaml = dynamicConfigYaml();
    for (const s of TEMPORAL_CLUSTER_DYNAMIC_CONFIG) {
      expect(yaml).toContain(`${s.key}:\n  - value: ${JSON.stringify(s.value)}\n`);
      expect(s.why.length).toBeGreaterThan(30);
    }
  });

  test('when the docs describe the profile, then they name every dynamic setting', () => {
    const doc = fs.readFileSync(path.join(root, 'docs', 'cluster-profile.md'), 'utf8');
    for (const s of TEMPORAL_CLUSTER_DYNAMIC_CONFIG) expect(doc).toContain(`\`${s.key}\``);
  });

  const hasCompose = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;
  (hasCompose ? test : test.skip)('when docker-compose checks the cluster file, then it is valid with a password and refused without one', () => {
    const env = { ...process.env, POSTGRES_PASSWORD: 'from-the-test' };
    const config = execFileSync('docker-compose', ['-f', composeFile, 'config'], { env, encoding: 'utf8' });
    for (const s of ['postgres', 'temporal', 'temporal-schema', 'temporal-setup', 'worker-1', 'worker-2', 'ingress-1', 'ingress-2', 'balancer'])
      expect(config).toContain(`\n  ${s}:`);
    const { POSTGRES_PASSWORD: _, ...without } = process.env;
    const refused = spawnSync('docker-compose', ['-f', composeFile, 'config', '-q'], { env: without, encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/POSTGRES_PASSWORD/);
  });

  test('when the compose files register search attributes, then they are exactly ours, with their types', () => {
    const ours = SEARCH_ATTRIBUTES.map((a) => `${a.name}=${a.type}`);
    const cluster = /for a in ([A-Za-z= ]+); do/.exec(fs.readFileSync(composeFile, 'utf8'))?.[1]?.trim().split(/\s+/);
    expect(cluster).toEqual(ours);
    const dev = [...fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8').matchAll(/- --search-attribute\n\s+- (\S+)/g)].map((m) => m[1]);
    expect(dev).toEqual(ours);
  });
});
