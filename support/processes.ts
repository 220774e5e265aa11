/**
 * The service's programs started as processes (support/service-process.ts says how each runs, is watched and
 * stopped): the ingress, the worker, the paper bridge, the admin CLI, and a whole stack of them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, REPO_ROOT } from './infra';
import { ENTRIES, ensureBuilt, processLogDir, ServiceProcess, serviceEnv, testFileTag, type ExitInfo } from './service-process';

export * from './service-process';
// ---------------------------------------------------------------------------------------------------------------
// The programs

function uniqueName(kind: string, label?: string): string {
  return `${testFileTag()}-${label ?? kind}-${randomBytes(3).toString('hex')}`;
}

export interface IngressProcess extends ServiceProcess {
  readonly url: string;
  readonly port: number;
  /** The admin listener: /metrics, /readyz, /healthz. */
  readonly adminUrl: string;
}

/** GET url → status, or undefined when nothing answers within the deadline. */
async function httpStatus(url: string, timeoutMs = 1_000): Promise<number | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

/**
 * `node dist/src/server.js` on a free port, its admin listener on another; ready when the admin GET /readyz answers 200
 * (Redis and Temporal reachable). If another process took a port meanwhile (EADDRINUSE), it tries again on new ones.
 * Restarts keep the ports.
 */
export async function startIngressProcess(env: Record<string, string>, opts: { label?: string; readyTimeoutMs?: number } = {}): Promise<IngressProcess> {
  const name = uniqueName('ingress', opts.label);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const adminPort = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const proc = new ServiceProcess({
      kind: 'ingress',
      name,
      args: [],
      env: { ...env, HOST: '127.0.0.1', PORT: String(port), ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(adminPort) },
      ready: async () => (await httpStatus(`${adminUrl}/readyz`)) === 200,
      readyTimeoutMs: opts.readyTimeoutMs ?? 30_000,
    });
    try {
      await proc.start();
      return Object.assign(proc, { url, port, adminUrl });
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test(proc.stderr())) throw err;
    }
  }
}

/** `node dist/src/worker.js`; ready when it logged `worker running` (its Temporal workers are created and polling). */
export async function startWorkerProcess(env: Record<string, string>, opts: { label?: string; readyTimeoutMs?: number } = {}): Promise<ServiceProcess> {
  const proc = new ServiceProcess({
    kind: 'worker',
    name: uniqueName('worker', opts.label),
    args: [],
    env,
    ready: async (p) => p.jsonLines('stdout').some((l) => l.msg === 'worker running'),
    readyTimeoutMs: opts.readyTimeoutMs ?? 60_000,
  });
  await proc.start();
  return proc;
}

export interface PaperBridgeOptions {
  registryFile: string;
  ledgerFile?: string;
  ingressUrl: string;
  /** More flags, e.g. ['--fault', 'drop-before-report:1'] or ['--closed', 'US30']. */
  extraArgs?: string[];
  env?: Record<string, string>;
  label?: string;
  readyTimeoutMs?: number;
}

export interface PaperBridgeProcess extends ServiceProcess {
  /** The accounts it runs a terminal for (those of the registry document with a bridge token). */
  readonly accountIds: string[];
  /** The `event: "command"` lines of its stdout (current run). */
  commands(): Record<string, unknown>[];
}

/**
 * `node dist/src/paper/main.js --registry FILE [--ledger FILE] --ingress URL`; ready when its stderr has a `hello`
 * line for every account of the document that has a bridge token (each terminal is connected). After a restart only
 * the new run's lines count, so ready means connected again.
 */
export async function startPaperBridgeProcess(opts: PaperBridgeOptions): Promise<PaperBridgeProcess> {
  const doc = JSON.parse(fs.readFileSync(opts.registryFile, 'utf8')) as { accounts?: { id: string; bridgeToken?: string }[] };
  const accountIds = (doc.accounts ?? []).filter((a) => a.bridgeToken).map((a) => a.id);
  const args = ['--registry', opts.registryFile, '--ingress', opts.ingressUrl];
  if (opts.ledgerFile) args.push('--ledger', opts.ledgerFile);
  args.push(...(opts.extraArgs ?? []));
  const base: Record<string, string> = {};
  for (const n of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) if (process.env[n] !== undefined) base[n] = process.env[n]!;
  const proc = new ServiceProcess({
    kind: 'paper-bridge',
    name: uniqueName('paper-bridge', opts.label),
    args,
    env: { ...base, ...opts.env },
    ready: async (p) => {
      const hellos = new Set(
        p
          .jsonLines('stderr')
          .filter((l) => l.event === 'hello')
          .map((l) => l.accountId),
      );
      return accountIds.every((id) => hellos.has(id));
    },
    readyTimeoutMs: opts.readyTimeoutMs ?? 30_000,
  });
  const bridge = Object.assign(proc, {
    accountIds,
    commands: () => proc.jsonLines('stdout').filter((l) => l.event === 'command'),
  });
  await bridge.start();
  return bridge;
}

export interface AdminRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Admin CLI runs in flight; SIGKILLed if this process exits first. */
const liveAdmins = new Set<ChildProcess>();
function killLiveAdmins(): void {
  for (const c of liveAdmins) c.kill('SIGKILL');
}

/**
 * `node dist/src/cli/admin.js ARGS` to completion (SIGKILLed past `timeoutMs`). Its output is returned and also
 * appended to `admin.log` in the run's process directory.
 */
export function runAdminProcess(args: string[], env: Record<string, string>, opts: { stdin?: string; timeoutMs?: number } = {}): Promise<AdminRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENTRIES.admin, ...args], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    if (liveAdmins.size === 0) process.on('exit', killLiveAdmins);
    liveAdmins.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    const forget = () => {
      clearTimeout(timer);
      liveAdmins.delete(child);
      if (liveAdmins.size === 0) process.removeListener('exit', killLiveAdmins);
    };
    child.on('error', (err) => {
      forget();
      reject(err);
    });
    child.on('close', (code, signal) => {
      forget();
      // Not the stdout: it may hold credentials the CLI printed once.
      fs.appendFileSync(
        path.join(processLogDir(), 'admin.log'),
        `--- ${new Date().toISOString()} admin ${args.join(' ')} → code ${code} signal ${signal}\n${stderr}`,
      );
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin ?? '');
  });
}

// ---------------------------------------------------------------------------------------------------------------
// A whole stack

export interface ProcessStack {
  env: Record<string, string>;
  worker: ServiceProcess;
  ingress: IngressProcess;
  bridge: PaperBridgeProcess;
  /** Every process, in the order they are stopped: bridge, ingress, worker. */
  all(): ServiceProcess[];
  /** SIGTERM (then SIGKILL) to each, bridge first; how each ended, by name. */
  stop(graceMs?: number): Promise<Record<string, ExitInfo | null>>;
}

/**
 * Worker and ingress (in parallel, same task queue), then a paper bridge for `registryFile` pointed at the ingress.
 * The registry document must already be imported. On any failure, whatever started is stopped again.
 */
export async function startProcessStack(opts: {
  registryFile: string;
  ledgerFile?: string;
  env?: Record<string, string>;
  bridgeArgs?: string[];
}): Promise<ProcessStack> {
  ensureBuilt();
  const env = serviceEnv(opts.env);
  // A start that fails stops its own process; the ones that did start are stopped here.
  const [w, i] = await Promise.allSettled([startWorkerProcess(env), startIngressProcess(env)]);
  if (w.status === 'rejected' || i.status === 'rejected') {
    await Promise.allSettled([w, i].flatMap((r) => (r.status === 'fulfilled' ? [r.value.stop()] : [])));
    throw w.status === 'rejected' ? w.reason : (i as PromiseRejectedResult).reason;
  }
  const worker = w.value;
  const ingress = i.value;
  try {
    const bridge = await startPaperBridgeProcess({
      registryFile: opts.registryFile,
      ledgerFile: opts.ledgerFile,
      ingressUrl: ingress.url,
      extraArgs: opts.bridgeArgs,
    });
    const all = () => [bridge, ingress, worker];
    return {
      env,
      worker,
      ingress,
      bridge,
      all,
      async stop(graceMs?: number) {
        const result: Record<string, ExitInfo | null> = {};
        for (const p of all()) result[p.name] = await p.stop(graceMs);
        return result;
      },
    };
  } catch (err) {
    await ingress.stop();
    await worker.stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP: the same helpers as the in-process tests (support/http.ts loads none of the service's modules)

export { get as httpGet, post as httpPost, type HttpResult } from './http';
