import net from 'node:net';

/** One command as Redis's MONITOR shows it: the client that sent it (`127.0.0.1:port`, or `lua`) and its arguments. */
export interface MonitoredCommand {
  from: string;
  args: string[];
}

/**
 * Redis's MONITOR read off a plain socket, every line `+<time> [<db> <client>] "<command>" "<arg>" …` handed to
 * `onCommand`. Not ioredis's `monitor()`: lines that arrive in the same read as MONITOR's `+OK` are taken there for
 * replies to commands it never sent ("Command queue state error"), which a busy server makes likely.
 */
export async function monitorRedis(url: string, onCommand: (c: MonitoredCommand) => void): Promise<{ stop: () => void }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let rest = '';
  let started!: () => void;
  const ok = new Promise<void>((resolve) => (started = resolve));
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\r\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '+OK') started();
      const m = /^\+\d+\.\d+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
      if (m) onCommand({ from: m[1]!, args: [...m[2]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((a) => a[1]!) });
    }
  });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write('MONITOR\r\n');
  await ok;
  return { stop: () => socket.destroy() };
}
