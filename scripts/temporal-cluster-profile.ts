/**
 * The cluster profile's Temporal: the real server (go.temporal.io/server, all services in one process) on PostgreSQL,
 * listed once here: the test helpers (support/temporal-cluster.ts), `make cluster` and the bench render its
 * config with `clusterServerConfig`. docs/cluster-profile.md says why each setting is there and what it measured.
 */

export interface ClusterDynamicSetting {
  key: string;
  value: number | boolean;
  why: string;
}

/** History shards: fixed for the life of a database (Temporal cannot reshard), so chosen once per deployment. */
export const DEFAULT_HISTORY_SHARDS = 8;

export const TEMPORAL_CLUSTER_DYNAMIC_CONFIG: readonly ClusterDynamicSetting[] = [
  {
    key: 'frontend.namespaceRPS.visibility',
    value: 100,
    why: 'the default (10/s per frontend) throttles the poll-free operator queries and the drains of the bench and tests; the dev server raises it the same way',
  },
  {
    key: 'system.forceSearchAttributesCacheRefreshOnRead',
    value: false,
    why: 'the server default, written down: search attributes are registered before any worker starts, so no request needs to re-read cluster metadata',
  },
  {
    key: 'history.transferProcessorMaxPollRPS',
    value: 1000,
    why: 'per shard; the default (20/s) caps how often a shard reads the tasks that start children and dispatch workflow tasks: a 200-account fan-out took 10.9 s with it',
  },
  {
    key: 'history.timerProcessorMaxPollRPS',
    value: 1000,
    why: 'as above, for timers (command expiry, idempotency windows)',
  },
  {
    key: 'history.visibilityProcessorMaxPollRPS',
    value: 1000,
    why: 'as above, for the visibility records operators search',
  },
];

export interface ClusterPorts {
  frontendGrpc: number;
  frontendHttp: number;
  frontendMembership: number;
  historyGrpc: number;
  historyMembership: number;
  matchingGrpc: number;
  matchingMembership: number;
  workerGrpc: number;
  workerMembership: number;
  metrics: number;
}

export interface ClusterServerConfigInput {
  ports: ClusterPorts;
  postgres: { host: string; port: number; user: string; password: string };
  shards: number;
  dynamicConfigFile: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * TLS on the frontend, client certificates required (mTLS), all signed by one CA; the server's own system worker
   * connects to the frontend with a certificate of its own. Internode traffic stays on loopback, in the clear.
   */
  tls?: { caFile: string; certFile: string; keyFile: string; serverName: string; systemWorkerCertFile: string; systemWorkerKeyFile: string };
}

/** PostgreSQL connections per store: history shards share them, so they grow with the shards. */
export function connectionsFor(shards: number): { default: number; visibility: number } {
  return { default: Math.max(20, shards * 4), visibility: 10 };
}

const yamlString = (s: string) => JSON.stringify(s);

/** The server's YAML config (static config; the dynamic config goes to its own file, `dynamicConfigYaml`). */
export function clusterServerConfig(input: ClusterServerConfigInput): string {
  const { ports, postgres, shards } = input;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) throw new Error(`history shards must be 1 to 1024, not ${shards}`);
  const conns = connectionsFor(shards);
  const store = (database: string, maxConns: number) => `      sql:
        pluginName: "postgres12"
        databaseName: ${yamlString(database)}
        connectAddr: ${yamlString(`${postgres.host}:${postgres.port}`)}
        connectProtocol: "tcp"
        user: ${yamlString(postgres.user)}
        password: ${yamlString(postgres.password)}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: "1h"`;
  const service = (grpc: number, membership: number, http?: number) => `    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: "127.0.0.1"${http ? `\n      httpPort: ${http}` : ''}`;
  return `log:
  stdout: true
  level: ${input.logLevel ?? 'warn'}

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${shards}
  datastores:
    postgres-default:
${store('temporal', conns.default)}
    postgres-visibility:
${store('temporal_visibility', conns.visibility)}

global:${tlsSection(input.tls)}
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  metrics:
    prometheus:
      framework: "tally"
      timerType: "histogram"
      listenAddress: "127.0.0.1:${ports.metrics}"

services:
  frontend:
${service(ports.frontendGrpc, ports.frontendMembership, ports.frontendHttp)}
  matching:
${service(ports.matchingGrpc, ports.matchingMembership)}
  history:
${service(ports.historyGrpc, ports.historyMembership)}
  worker:
${service(ports.workerGrpc, ports.workerMembership)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${ports.frontendGrpc}"
      httpAddress: "127.0.0.1:${ports.frontendHttp}"

dcRedirectionPolicy:
  policy: "noop"

dynamicConfigClient:
  filepath: ${yamlString(input.dynamicConfigFile)}
  pollInterval: "10s"
`;
}

function tlsSection(tls: ClusterServerConfigInput['tls']): string {
  if (!tls) return '';
  const client = `
      client:
        serverName: ${yamlString(tls.serverName)}
        rootCaFiles: [${yamlString(tls.caFile)}]`;
  return `
  tls:
    frontend:
      server:
        certFile: ${yamlString(tls.certFile)}
        keyFile: ${yamlString(tls.keyFile)}
        requireClientAuth: true
        clientCaFiles: [${yamlString(tls.caFile)}]${client}
    systemWorker:
      certFile: ${yamlString(tls.systemWorkerCertFile)}
      keyFile: ${yamlString(tls.systemWorkerKeyFile)}${client}`;
}

/** The dynamic config file the server polls. */
export function dynamicConfigYaml(settings: readonly ClusterDynamicSetting[] = TEMPORAL_CLUSTER_DYNAMIC_CONFIG): string {
  return settings.map((s) => `${s.key}:\n  - value: ${JSON.stringify(s.value)}\n    constraints: {}\n`).join('');
}
