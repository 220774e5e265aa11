import type { Redis } from 'ioredis';
import { waitFor } from '../../support/run';

/**
 * The Redis commands (lower-case names, in order) that `run` sent on a connection of its own, as Redis's MONITOR
 * saw them: those of that connection between two ECHO markers, the markers left out. What a call costs Redis, counted
 * by Redis itself while other tests use the same server.
 */
export async function commandsOf<T>(redis: Redis, run: (conn: Redis) => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const conn = redis.duplicate();
  const watcher = redis.duplicate();
  const monitor = await watcher.monitor();
  try {
    await conn.ping();
    const source = `127.0.0.1:${(conn as unknown as { stream: { localPort: number } }).stream.localPort}`;
    const lines: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], from: string) => {
      if (from === source) lines.push(args);
    });
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
    monitor.disconnect();
    watcher.disconnect();
  }
}
