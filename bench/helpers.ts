/**
 * The test infrastructure helpers (test/helpers/infra.ts, test/helpers/processes.ts), used read-only from the built
 * bench.
 *
 * They find the repository as `path.resolve(__dirname, '..', '..')`, which is only right for the TypeScript sources
 * in test/helpers (compiled into dist/test/helpers they would take dist/ for the repository). So they are not
 * compiled with the bench: they are loaded from source through a small require hook that transpiles `.ts` with
 * @swc/core (a devDependency jest already uses). The bench keeps its own minimal view of their types below, so the
 * main `tsc` build never type-checks or emits test/.
 */
import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';

/** dist/bench → the repository. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly name: string;
  /** The process group id (the wrapper's pid); -1 when not running. */
  readonly pid: number;
  readonly running: boolean;
  readonly stdoutFile: string;
  readonly stderrFile: string;
  describe(): string;
  stop(graceMs?: number): Promise<ExitInfo | null>;
  start(): Promise<void>;
}

export interface IngressProcess extends ServiceProcess {
  readonly url: string;
  readonly port: number;
}

export interface PaperBridgeProcess extends ServiceProcess {
  readonly accountIds: string[];
}

export interface AdminRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface TemporalServer {
  address: string;
  port: number;
  uiUrl: string;
  dbFile: string;
  logFile: string;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface TemporalCluster extends TemporalServer {
  shards: number;
  metricsUrl: string;
  postgres: { readonly pid: number; dataDir: string; host: string; port: number };
}

export interface ClusterModule {
  startTemporalCluster(opts?: { namespaces?: string[]; shards?: number; dir?: string }): Promise<TemporalCluster>;
  clusterBinary(which: 'server' | 'sql' | 'ui'): string;
}

export interface RedisServer {
  url: string;
  port: number;
  logFile: string;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface InfraModule {
  startTemporal(opts?: { dbFile?: string; namespaces?: string[]; readyTimeoutMs?: number }): Promise<TemporalServer>;
  startRedis(opts?: { readyTimeoutMs?: number; durable?: boolean }): Promise<RedisServer>;
  waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number, intervalMs?: number): Promise<T>;
  freePort(): Promise<number>;
  temporalBinary(): string;
}

export interface ProcessesModule {
  ensureBuilt(): void;
  startIngressProcess(env: Record<string, string>, opts?: { label?: string; readyTimeoutMs?: number }): Promise<IngressProcess>;
  startWorkerProcess(env: Record<string, string>, opts?: { label?: string; readyTimeoutMs?: number }): Promise<ServiceProcess>;
  startPaperBridgeProcess(opts: {
    registryFile: string;
    ledgerFile?: string;
    ingressUrl: string;
    extraArgs?: string[];
    env?: Record<string, string>;
    label?: string;
    readyTimeoutMs?: number;
  }): Promise<PaperBridgeProcess>;
  runAdminProcess(args: string[], env: Record<string, string>, opts?: { stdin?: string; timeoutMs?: number }): Promise<AdminRun>;
}

let hooked = false;

/** Lets `require` load the TypeScript sources of test/helpers (and what they import from src/). */
function registerTypeScript(): void {
  if (hooked) return;
  hooked = true;
  const extensions = (Module as unknown as { _extensions: Record<string, (m: NodeJS.Module, filename: string) => void> })._extensions;
  if (extensions['.ts']) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const swc = require('@swc/core') as typeof import('@swc/core');
  extensions['.ts'] = (module, filename) => {
    const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
      filename,
      sourceMaps: 'inline',
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    (module as unknown as { _compile(code: string, filename: string): void })._compile(code, filename);
  };
}

/**
 * The helpers read their run directory and the infrastructure's coordinates from the environment that jest's
 * globalSetup would set; the bench sets the same variables (setHelperEnv) before starting any program.
 */
export function loadHelpers(): { infra: InfraModule; processes: ProcessesModule; cluster: ClusterModule } {
  registerTypeScript();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const cluster = require(path.join(REPO_ROOT, 'test', 'helpers', 'temporal-cluster.ts')) as ClusterModule;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const infra = require(path.join(REPO_ROOT, 'test', 'helpers', 'infra.ts')) as InfraModule;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const processes = require(path.join(REPO_ROOT, 'test', 'helpers', 'processes.ts')) as ProcessesModule;
  return { infra, processes, cluster };
}
