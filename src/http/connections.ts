import type { Server } from 'node:net';

/**
 * At most `max` open connections per client IP on this listener; one more is closed at once, before a byte of it is
 * read. A client cannot then hold every socket of the process with half-sent requests (each of which the body
 * deadline ends within seconds anyway). 0 turns the cap off: behind a TLS-terminating proxy every connection comes
 * from the proxy, so cap per client there instead.
 */
export function capConnectionsPerIp(server: Server, max: number, onRefused?: () => void): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  server.prependListener('connection', (socket) => {
    const ip = socket.remoteAddress ?? 'unknown';
    const count = open.get(ip) ?? 0;
    if (count >= max) {
      onRefused?.();
      socket.destroy();
      return;
    }
    open.set(ip, count + 1);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left <= 0) open.delete(ip);
      else open.set(ip, left);
    });
  });
}
