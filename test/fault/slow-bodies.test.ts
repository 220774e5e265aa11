import net from 'node:net';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { get, timed } from '../../support/http';
import { waitFor } from '../../support/infra';

/**
 * Slow bodies (issue 12 item 5): clients that send the headers of a webhook request and then only part of the body,
 * over real sockets. They must not take the in-flight slots that real signals need, must be cut off after the body
 * deadline (408, connection closed), and one client IP can hold only so many connections. Other clients come from
 * other loopback addresses (127.0.0.2 …), which Linux routes to the same listener.
 */

const buy = (secret: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });

interface HalfSent {
  socket: net.Socket;
  /** The status line's code when the server answered, or undefined when it closed without a word. */
  ended: Promise<{ status: number | undefined; at: number }>;
}

/** Opens a connection from `localAddress`, sends the headers of a POST and the first bytes of its body, and stops. */
async function halfSent(port: number, path: string, localAddress: string): Promise<HalfSent> {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  let received = '';
  const ended = new Promise<{ status: number | undefined; at: number }>((resolve) => {
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () =>
      resolve({ status: /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ? Number(/^HTTP\/1\.1 (\d{3})/.exec(received)![1]) : undefined, at: Date.now() }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  }).catch(() => undefined);
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"secret":"`;
  await new Promise<void>((resolve) => socket.write(head, () => resolve()));
  return { socket, ended };
}

/** A full round trip from that address: every byte sent before it has been read by the server's event loop. */
async function barrier(url: string): Promise<void> {
  expect((await get(`${url}/healthz`)).status).toBe(200);
}

describe('with the default settings (512 in flight, 5 s body deadline, 1024 connections per IP)', () => {
  let stack: Stack;
  let f: Fixture;
  beforeAll(async () => {
    // 512 in flight, fewer than the 600 half-sent bodies: a half-sent body that held a slot would leave none for the
    // good signal, which would then wait for their deadlines (or be refused).
    stack = await startStack({ worker: false, env: { MAX_IN_FLIGHT: '512' } });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => stack?.stop());

  test('when 600 half-sent bodies from three IPs are open, then a well-formed signal from another client gets its 202 promptly, and each half-sent one gets 408 at the deadline and is closed', async () => {
    const path = `/webhook/custom/${f.accounts[0]!.id}`;
    const started = Date.now();
    const slow: HalfSent[] = [];
    for (const ip of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
      slow.push(...(await Promise.all(Array.from({ length: 200 }, () => halfSent(stack.ingress.port, path, ip)))));
    }
    await barrier(stack.ingress.url);
    let closed = 0;
    for (const s of slow) void s.ended.then(() => closed++);

    // Which came first, not how fast: the good signal is answered while every half-sent body still holds its
    // connection, so it waited for none of their deadlines.
    const good = await timed(() => post(`${stack.ingress.url}${path}`, buy(f.secret)));
    const closedBeforeTheGoodOne = closed;
    expect(good.value.status).toBe(202);
    expect(closedBeforeTheGoodOne).toBe(0);

    // Each is cut off by the body deadline (408): waited for, well past that deadline.
    await waitFor('every half-sent body to be closed', async () => closed === slow.length, 30_000, 100);
    const ends = await Promise.all(slow.map((s) => s.ended));
    expect(ends.map((e) => e.status)).toEqual(slow.map(() => 408));
    const late = ends.map((e) => e.at - started);

    console.log(`good signal answered in ${Math.round(good.ms)} ms; half-sent bodies closed after ${Math.min(...late)}-${Math.max(...late)} ms`);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(4_900);
  }, 60_000);
});

describe('with 50 connections per IP and a 3 s body deadline', () => {
  let stack: Stack;
  let f: Fixture;
  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { MAX_CONNECTIONS_PER_IP: '50' }, tuning: { ingress: { bodyReadTimeoutMs: 3000 } } });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => stack?.stop());

  test('when one IP opens 80 connections, then the 30 past the cap are answered 503 with Retry-After at once and closed; another client gets its 202; once they are gone the IP is served again', async () => {
    const path = `/webhook/custom/${f.accounts[0]!.id}`;
    const slow = await Promise.all(Array.from({ length: 80 }, () => halfSent(stack.ingress.port, path, '127.0.0.2')));
    const refused = await waitFor(
      '30 connections to be answered 503',
      async () => {
        const closed = await Promise.all(slow.map((s) => Promise.race([s.ended, Promise.resolve(undefined)])));
        // Answered at once, long before the 3 s body deadline: past the cap. (The 50 within it end 408 later.)
        const done = closed.filter((c) => c !== undefined && c.status === 503);
        return done.length >= 30 ? done : undefined;
      },
      2_500,
    );
    expect(refused).toHaveLength(30);

    expect((await post(`${stack.ingress.url}${path}`, buy(f.secret))).status).toBe(202);
    expect((await get(`${stack.ingress.adminUrl}/metrics`)).text).toMatch(/^external_signals_connections_refused_total 30$/m);

    const ends = await Promise.all(slow.map((s) => s.ended));
    expect(ends.filter((e) => e.status === 408)).toHaveLength(50);
    expect(ends.filter((e) => e.status === undefined)).toHaveLength(0);
    // The cap counts open connections, not history: the same IP is served again.
    const again = await halfSent(stack.ingress.port, path, '127.0.0.2');
    expect((await again.ended).status).toBe(408);
  }, 30_000);

  test('when a body arrives slowly but within the deadline, then it is served as usual', async () => {
    const path = `/webhook/custom/${f.accounts[0]!.id}`;
    const body = JSON.stringify(buy(f.secret));
    const socket = net.connect({ host: '127.0.0.1', port: stack.ingress.port });
    let received = '';
    const answered = new Promise<void>((resolve) => socket.on('data', (c) => ((received += c.toString()), resolve())));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket.write(body.slice(0, 10));
    // Well inside the 1 s deadline, the rest.
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.write(body.slice(10));
    await answered;
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 202/);
  });
});
