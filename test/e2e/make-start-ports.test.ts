import net from 'node:net';
import { once } from 'node:events';
import { isPortOpen } from '../../support/infra';
import { ensureBuilt } from '../../support/processes';
import { freeStartPorts, spawnStart, startEnv, untilExit, type StartPorts } from './make-start';

/**
 * Every port `make start` listens on is set by a variable and checked before anything starts: a port something else
 * holds makes it fail at once, naming the port and the variable to change, before the "is up" banner and without
 * starting a process. Before, a clash on the worker's metrics port (9464, not even settable through start.sh) came
 * after "is up", and the others as a process that "exited" with no word of a port.
 */

type PortName = keyof StartPorts;
const CASES: { port: PortName; variable: string }[] = [
  { port: 'PORT', variable: 'PORT' },
  { port: 'ADMIN_PORT', variable: 'ADMIN_PORT' },
  { port: 'WORKER_METRICS_PORT', variable: 'WORKER_METRICS_PORT' },
  { port: 'TEMPORAL_PORT', variable: 'TEMPORAL_ADDRESS' },
  { port: 'TEMPORAL_UI_PORT', variable: 'TEMPORAL_UI_PORT' },
  { port: 'REDIS_PORT', variable: 'REDIS_URL' },
];

/** Something else on the port: it accepts connections and never answers (neither Redis nor Temporal). */
async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer(() => undefined);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

async function runStart(ports: StartPorts, env: Record<string, string> = {}) {
  const s = spawnStart(['bash', 'scripts/start.sh'], { ...startEnv(ports), ...env });
  try {
    const exit = await untilExit(s, 90_000);
    return { exit, out: s.out() };
  } finally {
    // Whatever it started, stopped the way the stop test proves it is (test/e2e/make-start-stop.test.ts).
    try {
      process.kill(-s.pgid, 'SIGTERM');
    } catch {
      // it exited, as it should
    }
  }
}

async function nothingListens(ports: number[]): Promise<void> {
  for (const port of ports) expect({ port, open: await isPortOpen(port) }).toEqual({ port, open: false });
}

describe('make start: ports', () => {
  beforeAll(() => ensureBuilt());

  test.each(CASES.map((c) => [c.variable, c] as const))(
    'a clash on the port of %s: it fails before the banner, naming the port and the variable, having started nothing',
    async (_name, c) => {
      const ports = await freeStartPorts();
      const taken = ports[c.port];
      const other = await occupy(taken);
      try {
        const { exit, out } = await runStart(ports);
        expect(exit.code).not.toBe(0);
        expect(out).toMatch(new RegExp(`ERROR: port ${taken} \\(.+\\) is in use on 127\\.0\\.0\\.1: stop what holds it, or set ${c.variable} to another port`));
        expect(out).not.toContain('is up');
        expect(out).not.toContain('started (pid');
        await nothingListens(Object.values(ports).filter((p) => p !== taken));
        expect(other.listening).toBe(true);
      } finally {
        other.close();
      }
    },
    150_000,
  );

  test('one port given to two variables: both are named, nothing starts', async () => {
    const ports = await freeStartPorts();
    const { exit, out } = await runStart(ports, { ADMIN_PORT: String(ports.PORT) });
    expect(exit.code).not.toBe(0);
    expect(out).toContain(`ERROR: port ${ports.PORT} is set for both the ingress (PORT) and the ingress's admin listener (ADMIN_PORT)`);
    expect(out).not.toContain('started (pid');
    await nothingListens(Object.values(ports));
  }, 150_000);
});
