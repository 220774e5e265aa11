import type { Redis } from 'ioredis';
import { monitorRedis } from '../../support/redis-monitor';
import { waitFor } from '../../support/run';

/**
 * The Redis commands (lower-case names, in order) that `run` sent on a connection of its own, as Redis's MONITOR
 * saw them: those of that connection between two ECHO markers, the markers left out. What a call costs Redis, counted
 * by Redis itself while other tests use the same server.
 */
export async function commandsOf<T>(redis: Redis, run: (conn: Redis) => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const conn = redis.duplicate();
  const lines: string[][] = [];
  let source = '';
  const monitor = await monitorRedis(`redis://${redis.options.host ?? '127.0.0.1'}:${redis.options.port ?? 6379}`, (c) => {
    if (c.from === source) lines.push(c.args);
  });
  try {
    await conn.ping();
    source = `127.0.0.1:${(conn as unknown as { stream: { localPort: number } }).stream.localPort}`;
    const marker = (what: string) =>
      waitFor(`MONITOR to show ${what}`, async () => (await conn.echo(what), lines.some((l) => l[1] === what)) || undefined, 10_000);
    await marker('call-begins');
    const result = await run(conn);
    await marker('call-ended');
    const from = lines.findIndex((l) => l[1] === 'call-begins');
    const to = lines.findIndex((l) => l[1] === 'call-ended');
    const commands = lines
      .slice(from + 1, to)
      .map((l) => l[0]!.toLowerCase())
      .filter((c) => c !== 'echo');
    return { result, commands };
  } finally {
    conn.disconnect();
    monitor.stop();
  }
}
