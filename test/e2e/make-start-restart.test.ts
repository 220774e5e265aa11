import fs from 'node:fs';
import path from 'node:path';
import { adminCli } from '../../support/admin-cli';
import { get, post } from '../../support/http';
import { REPO_ROOT, startRedis, waitFor, type RedisServer } from '../../support/infra';
import { ensureBuilt } from '../../support/processes';
import { descendants, freeStartPorts, killLeftovers, spawnStart, startEnv, untilExit, type Proc, type Started } from './make-start';

/**
 * A process of `make start` that dies (kill -9 of the worker, then of the ingress) is started again by
 * scripts/start.sh, passes the same health check as at start, and the stack trades on: a buy to the demo MT5 account
 * fills after each restart. Before, the first death stopped the whole stack and every webhook failed until a re-run.
 * The stack uses the run's Temporal and a Redis of the test's own (the demo registry imported into it), as an operator's
 * found servers: its start is then quick.
 */
const describeOnDevProfile = process.env.TEST_TEMPORAL_PROFILE === 'cluster' ? describe.skip : describe;

const demo = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'demo', 'registry.json'), 'utf8')) as {
  secrets: { secret: string }[];
  tokens: { token: string }[];
};

describeOnDevProfile('make start supervises its processes', () => {
  let redis: RedisServer;
  let s: Started | undefined;
  let seen: Proc[] = [];
  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis();
    expect((await adminCli(['import', path.join(REPO_ROOT, 'demo', 'registry.json')], redis.url)).code).toBe(0);
  });
  afterAll(async () => {
    try {
      if (s) process.kill(-s.pgid, 'SIGKILL');
    } catch {
      // already gone
    }
    killLeftovers(seen);
    await redis?.stop();
  });

  /** The one process of the stack running `program`, as /proc shows it now. */
  function processOf(program: string): Proc {
    const all = descendants(s!.pgid);
    seen = [...seen, ...all];
    // npm runs `sh -c node …` under it: the process to kill is node's own.
    const node = all.find((p) => p.cmd.includes(program) && !/^(\/bin\/)?sh /.test(p.cmd));
    if (!node) throw new Error(`no process runs ${program}: ${all.map((p) => p.cmd).join(' | ')}`);
    return node;
  }

  async function buyFills(ingressUrl: string): Promise<void> {
    const res = await post(`${ingressUrl}/webhook/custom/demo-mt5`, { secret: demo.secrets[0]!.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
    expect(res.status).toBe(202);
    await waitFor(
      `signal ${res.body.signalId} to be filled`,
      async () => {
        const poll = await get(`${ingressUrl}/v1/signals/${res.body.signalId}`, { authorization: `Bearer ${demo.tokens[0]!.token}` });
        return poll.body?.accounts?.[0]?.outcome === 'filled';
      },
      60_000,
      200,
    );
  }

  test('when the worker and then the ingress are killed with SIGKILL, then each is started again and buys fill after each', async () => {
    const ports = await freeStartPorts();
    const env = startEnv(ports, { temporalAddress: process.env.TEMPORAL_ADDRESS!, redisUrl: redis.url });
    s = spawnStart(['make', 'start'], env);
    const ingressUrl = `http://127.0.0.1:${ports.PORT}`;
    const saysSoon = (text: string | RegExp, timeoutMs: number) =>
      waitFor(
        `make start to say ${String(text)}`,
        async () => {
          if (s!.child.exitCode !== null || s!.child.signalCode !== null) throw new Error(`make start exited:\n${s!.out()}`);
          return typeof text === 'string' ? s!.out().includes(text) : text.test(s!.out());
        },
        timeoutMs,
        200,
      );
    await saysSoon('External Signals Service is up', 240_000);
    await buyFills(ingressUrl);

    for (const [name, program] of [
      ['worker', 'dist/src/worker.js'],
      ['ingress', 'dist/src/server.js'],
    ] as const) {
      const before = processOf(program);
      process.kill(before.pid, 'SIGKILL');
      await saysSoon(new RegExp(`${name} exited \\(status \\d+\\); starting it again in 1s \\(restart 1 of 5\\)`), 30_000);
      await saysSoon(`${name} is back`, 120_000);
      expect(processOf(program).pid).not.toBe(before.pid);
      await buyFills(ingressUrl);
    }

    // A TERM to the script alone (as systemd would send it): make then ends as the script does, 0 for a clean stop.
    const script = descendants(s.pgid).find((p) => p.cmd.includes('scripts/start.sh'));
    process.kill(script!.pid, 'SIGTERM');
    expect(await untilExit(s, 120_000)).toEqual({ code: 0, signal: null });
    expect(s.out()).toContain('start: stopped');
    s = undefined;
  }, 480_000);
});
