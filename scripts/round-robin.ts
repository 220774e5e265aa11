import net from 'node:net';

/**
 * A loopback TCP round-robin in front of several ingress processes (`make cluster`): each new connection goes to the
 * next ingress that accepts it. It shows that the ingress keeps no state of its own; a real deployment puts a load
 * balancer (nginx, an L4 balancer) here instead.
 */
export interface RoundRobin {
  port: number;
  close(): Promise<void>;
}

export async function startRoundRobin(targets: { host: string; port: number }[], listen: { host: string; port: number }): Promise<RoundRobin> {
  if (targets.length === 0) throw new Error('round-robin: no target');
  let next = 0;
  const sockets = new Set<net.Socket>();
  const connect = (client: net.Socket, tried: number) => {
    const target = targets[next++ % targets.length]!;
    const upstream = net.connect(target);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.once('error', () => {
      // That ingress is down: the next one takes the connection, until every one was tried.
      if (!connected && tried + 1 < targets.length && !client.destroyed) connect(client, tried + 1);
      else client.destroy();
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    connect(client, 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
