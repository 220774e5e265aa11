/** A private PostgreSQL 15 cluster for the cluster profile, and Temporal's schemas on it (support/temporal-cluster.ts). */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, GroupProcess, instanceName, runDir, waitFor, waitPortClosed } from './infra';

const run = promisify(execFile);
// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL

export interface PostgresServer {
  host: string;
  port: number;
  /** The role Temporal connects as, with its password (random per cluster; never logged). */
  user: string;
  password: string;
  dataDir: string;
  logFile: string;
  readonly pid: number;
  /** Fast shutdown (SIGINT: open transactions roll back, committed ones are on disk) and wait for the port to close. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it for good: a run's throwaway cluster kept outside the run dir is removed. */
  dispose(): Promise<void>;
}

const PG_BIN = process.env.POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const isRoot = () => process.getuid?.() === 0;
/**
 * initdb and postgres refuse to run as root: as root they run as the `postgres` user, through setpriv, which execs
 * the program in its place. (runuser stays in between and, sent SIGTERM, kills its child with SIGKILL 2 s later: a
 * PostgreSQL still closing its sessions then dies mid-shutdown and its next start fails.)
 */
const asPostgres = (cmd: string, args: string[]): [string, string[]] =>
  isRoot() ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', cmd, ...args]] : [cmd, args];

/**
 * As root, the cluster runs as `postgres`, which must reach its directory: a checkout under a 0700 directory (a
 * `mktemp -d` clone, /root) is out of its reach, so the data then lives under /var/tmp, named after the directory it
 * stands for (the same one on every run: `make cluster` keeps its state).
 */
function reachableByPostgres(dir: string): string {
  if (!isRoot()) return dir;
  fs.mkdirSync(dir, { recursive: true });
  if (spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', dir]).status === 0) return dir;
  const home = path.join('/var/tmp', 'external-signals-postgres', createHash('sha1').update(path.resolve(dir)).digest('hex').slice(0, 16));
  fs.mkdirSync(home, { recursive: true });
  fs.chmodSync(path.dirname(home), 0o711);
  return home;
}

export async function startPostgres(opts: { dir?: string; readyTimeoutMs?: number; keep?: boolean } = {}): Promise<PostgresServer> {
  const name = instanceName('postgres');
  const logDir = opts.dir ?? path.join(runDir(), name);
  const dir = reachableByPostgres(logDir);
  const relocated = dir !== logDir;
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(logDir, 'postgres.log');
  fs.mkdirSync(logDir, { recursive: true });
  const user = 'temporal';
  const passwordFile = path.join(dir, 'temporal.password');
  const superuserPasswordFile = path.join(dir, 'postgres.password');
  const fresh = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (fresh) {
    fs.writeFileSync(passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
    fs.writeFileSync(superuserPasswordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
  }
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  if (isRoot()) {
    execFileSync('chown', ['postgres:postgres', dir]);
    fs.chmodSync(dir, 0o711); // postgres must reach its data dir; nobody else may list it
    if (fresh) execFileSync('chown', ['postgres:postgres', superuserPasswordFile]); // initdb reads it as postgres
  }
  if (fresh) {
    const [cmd, args] = asPostgres(path.join(PG_BIN, 'initdb'), [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '-E',
      'UTF8',
      `--pwfile=${superuserPasswordFile}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
    ]);
    await run(cmd, args, { timeout: 60_000 });
  }
  const proc = new GroupProcess(name, logFile);
  // TCP on loopback only, no Unix socket: a socket file needs a short path on a filesystem that can hold one, which
  // a checkout (or its run dir) on some mounts cannot give.
  const launch = async (port: number) => {
    const [cmd, args] = asPostgres(path.join(PG_BIN, 'postgres'), [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      // For measurements only (what a commit's fsync costs): POSTGRES_SYNCHRONOUS_COMMIT=off; the profile keeps it on.
      ...(process.env.POSTGRES_SYNCHRONOUS_COMMIT ? ['-c', `synchronous_commit=${process.env.POSTGRES_SYNCHRONOUS_COMMIT}`] : []),
    ]);
    proc.spawn(cmd, args);
    try {
      await waitFor(
        `PostgreSQL on 127.0.0.1:${port}`,
        async () => {
          if (!proc.running) throw new Error(proc.describeExit());
          try {
            await run('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port)], { timeout: 2_000 });
            return true;
          } catch {
            return undefined;
          }
        },
        opts.readyTimeoutMs ?? 30_000,
        100,
      );
    } catch (err) {
      // Its own words last: a CI log that keeps only the end of the output still says why.
      const why = proc
        .logSinceSpawn()
        .split('\n')
        .filter((l) => /\b(FATAL|PANIC|ERROR|HINT):/.test(l));
      throw new Error(`${(err as Error).message}\nPostgreSQL said:\n${why.join('\n') || '(nothing)'}`);
    }
  };
  // The first start: if another process took the port in the meantime, take another one.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await launch(port);
      break;
    } catch (err) {
      await proc.stop();
      if (attempt >= 3 || !/could not bind|address already in use/i.test(proc.logSinceSpawn())) throw err;
    }
  }
  if (fresh) {
    // As the superuser over TCP (its password from initdb): the role Temporal uses, with its own password.
    const sql = `CREATE ROLE ${user} LOGIN CREATEDB PASSWORD '${password}'`;
    const env = { ...process.env, PGPASSWORD: fs.readFileSync(superuserPasswordFile, 'utf8').trim() };
    await run('psql', ['-q', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-c', sql], {
      env,
      timeout: 20_000,
    });
  }
  const stop = async () => {
    // Fast shutdown: open sessions (Temporal holds dozens) are ended, committed work is on disk.
    await proc.stop(30_000, 'SIGINT');
    await waitPortClosed(port, name);
  };
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    dataDir,
    logFile,
    get pid() {
      return proc.pid;
    },
    stop,
    async dispose() {
      await stop();
      // A run's throwaway cluster moved out of the run dir is removed with it; a kept one (make cluster) stays. Never
      // on stop(): a restart (the cluster fault test) needs its data directory.
      if (relocated && !opts.keep) fs.rmSync(dir, { recursive: true, force: true });
    },
    async start() {
      if (!proc.running) await launch(port);
    },
  };
}
