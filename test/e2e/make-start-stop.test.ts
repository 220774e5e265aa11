import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { adminCli } from '../../support/admin-cli';
import { isPortOpen, REPO_ROOT, startRedis, waitFor, type RedisServer } from '../../support/infra';
import { ensureBuilt } from '../../support/processes';
import { descendants, freeStartPorts, killLeftovers, spawnStart, startEnv, stillRunning, untilExit, type Proc, type Started } from './make-start';

/**
 * Stopping `make start` stops everything it started and nothing else, however it is stopped: one TERM to make (which
 * passes it on to scripts/start.sh), two TERMs to the script 1 s apart (the second lands mid-stop), INT to the
 * process group (Ctrl-C in a terminal), TERM to the process group (make and the script each get one: two at once).
 * Before the fix a second signal during the stop cut it short and left Temporal, Redis, the worker, the ingress and
 * the paper bridge running. In the last two ways the stack finds a Redis and a Temporal already running and uses
 * them: they must still answer afterwards. A stop by INT or TERM is a clean stop: scripts/start.sh exits 0, so make
 * reports no error (it printed `make: *** [Makefile:5: start] Error 143`), and a make that got no signal itself exits 0.
 */

interface Way {
  name: string;
  /** Whether make itself gets the signal (it then ends by that signal, passed on or re-raised), or only the script. */
  toMake: boolean;
  /** Use a Redis and a Temporal found running (the test's), rather than start its own. */
  reuse: boolean;
  stop(s: Started, script: Proc): Promise<void>;
}

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone: nothing to stop
  }
};

const WAYS: Way[] = [
  { name: 'one TERM to make', toMake: true, reuse: false, stop: async (s) => signal(s.pgid, 'SIGTERM') },
  {
    name: 'two TERMs to scripts/start.sh, 1 s apart',
    toMake: false,
    reuse: false,
    stop: async (_s, script) => {
      signal(script.pid, 'SIGTERM');
      // The reproduction's timing, not a wait for a condition: the second TERM arrives while the first stop runs.
      await delay(1000);
      signal(script.pid, 'SIGTERM');
    },
  },
  { name: 'INT to the process group (Ctrl-C)', toMake: true, reuse: true, stop: async (s) => signal(-s.pgid, 'SIGINT') },
  { name: 'TERM to the process group', toMake: true, reuse: true, stop: async (s) => signal(-s.pgid, 'SIGTERM') },
];

const show = (p: Proc) => `${p.pid} ${p.cmd.slice(0, 160)}`;

/** The processes of `procs` still running once `withinMs` has passed (or none, as soon as none is). */
async function leftAfter(procs: readonly Proc[], withinMs: number): Promise<Proc[]> {
  try {
    await waitFor('every process to be gone', async () => procs.every((p) => !stillRunning(p)), withinMs, 100);
    return [];
  } catch {
    return procs.filter(stillRunning);
  }
}

function temporalAnswers(address: string): boolean {
  try {
    execFileSync(process.env.TEMPORAL_BIN!, ['operator', 'namespace', 'describe', '--namespace', 'default', '--address', address, '--command-timeout', '5s'], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

function redisAnswers(url: string): boolean {
  try {
    return execFileSync('redis-cli', ['-u', url, 'ping'], { encoding: 'utf8', timeout: 5000 }).trim() === 'PONG';
  } catch {
    return false;
  }
}

/**
 * `make start` runs the Temporal dev server (or reuses one that answers): it has no cluster profile. Under
 * `make test-cluster` the run's own Temporal is the real server on PostgreSQL, which start.sh's readiness check does not
 * take for a dev server it may reuse, so these cases run in `make test` only (skipped, and counted so, in the cluster run).
 */
const describeOnDevProfile = process.env.TEST_TEMPORAL_PROFILE === 'cluster' ? describe.skip : describe;

describeOnDevProfile('stopping make start', () => {
  beforeAll(() => ensureBuilt());

  test.each(WAYS.map((w) => [w.name, w] as const))(
    '%s: every process it started is gone, and nothing else was stopped',
    async (_name, way) => {
      const ports = await freeStartPorts();
      let redis: RedisServer | undefined;
      const harnessTemporal = process.env.TEMPORAL_ADDRESS!;
      if (way.reuse) {
        redis = await startRedis();
        // The demo's accounts, as an operator would import them into a Redis of their own.
        expect((await adminCli(['import', path.join(REPO_ROOT, 'demo', 'registry.json')], redis.url)).code).toBe(0);
      }
      const env = startEnv(ports, way.reuse ? { temporalAddress: harnessTemporal, redisUrl: redis!.url } : {});
      const s = spawnStart(['make', 'start'], env);
      let started: Proc[] = [];
      try {
        await waitFor(
          'make start to say it is up',
          async () => {
            if (s.child.exitCode !== null || s.child.signalCode !== null) throw new Error(`make start exited before it was up:\n${s.out()}`);
            return s.out().includes('External Signals Service is up');
          },
          240_000,
          200,
        );
        started = descendants(s.pgid);
        const cmds = started.map((p) => p.cmd);
        // What it started, so that "all gone" below means something.
        for (const program of ['dist/src/worker.js', 'dist/src/server.js', 'dist/src/paper/main.js']) {
          expect({ program, running: cmds.some((c) => c.includes(program)) }).toEqual({ program, running: true });
        }
        expect(cmds.some((c) => c.includes('server start-dev'))).toBe(!way.reuse);
        expect(cmds.some((c) => c.startsWith('redis-server'))).toBe(!way.reuse);
        const script = started.find((p) => p.cmd.includes('scripts/start.sh'));
        expect(script).toBeDefined();

        await way.stop(s, script!);
        const exit = await untilExit(s, 120_000);
        expect(s.out()).not.toMatch(/make: \*\*\*/);
        if (!way.toMake) expect(exit).toEqual({ code: 0, signal: null });

        expect((await leftAfter(started, 5000)).map(show)).toEqual([]);
        expect(s.out()).toContain('start: stopped');
        const ownPorts = way.reuse ? [ports.PORT, ports.ADMIN_PORT, ports.WORKER_METRICS_PORT] : Object.values(ports);
        for (const port of ownPorts) expect({ port, open: await isPortOpen(port) }).toEqual({ port, open: false });
        if (way.reuse) {
          expect(redisAnswers(redis!.url)).toBe(true);
          expect(temporalAnswers(harnessTemporal)).toBe(true);
        }
      } finally {
        signal(-s.pgid, 'SIGKILL');
        killLeftovers(started);
        await redis?.stop();
      }
    },
    300_000,
  );
});
