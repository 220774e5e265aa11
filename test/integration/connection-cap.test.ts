import net from 'node:net';
import { postFrom, type HttpResult } from '../../support/http';
import { waitFor } from '../../support/infra';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * A burst from one address is answered, never reset (issue 28): TradingView posts every user's alerts from a handful
 * of addresses, and resends only on an answer. Past MAX_CONNECTIONS_PER_IP a request gets 503 backpressure with
 * Retry-After and its connection closes; a trusted proxy is not capped (it carries many clients). Real sockets, real
 * Redis and Temporal.
 */
const BURST = 300;
const buy = (secret: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });

/**
 * BURST posts at once from `address`, each on a connection of its own; a connection reset is kept as an error. A slow
 * answer on a loaded machine is still an answer: the client waits a minute.
 */
async function burst(stack: Stack, f: Fixture, address: string, body: object = buy(f.secret)): Promise<(HttpResult | { error: string })[]> {
  const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
  return Promise.all(
    Array.from({ length: BURST }, () =>
      postFrom(address, url, body, { connection: 'close' }, 60_000).catch((err: NodeJS.ErrnoException) => ({ error: err.code ?? err.message })),
    ),
  );
}

/** Connections from `address` that sent a request's headers and stop: each holds one of the address's slots. */
async function holdSlots(port: number, address: string, count: number): Promise<net.Socket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect({ host: '127.0.0.1', port, localAddress: address }, () => {
            socket.write('POST /webhook/custom/x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{', () => resolve(socket));
          });
          socket.on('error', reject);
        }),
    ),
  );
}

const statuses = (answers: (HttpResult | { error: string })[]) =>
  answers.reduce<Record<string, number>>((out, a) => {
    const k = 'error' in a ? a.error : String(a.status);
    out[k] = (out[k] ?? 0) + 1;
    return out;
  }, {});

describe('with the default connection cap', () => {
  let stack: Stack;
  let f: Fixture;
  beforeAll(async () => {
    // Limits that would answer 429 stay raised (the per-caller ones by the test stack's RATE_LIMIT_SCALE): this test is
    // about the connections, not the limiters.
    stack = await startStack({ worker: false, env: { WEBHOOK_PREAUTH_IP_MAX: '10000' } });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => stack?.stop());

  test(`when ${BURST} posts come from one address at the same instant, then every one is answered and none is reset`, async () => {
    // A signal the service refuses after authenticating the sender (a close with neither positionId nor a filter):
    // every request goes through the whole door (connection, body, pre-auth, secret, route limiter), and its answer
    // does not hang on how fast Temporal starts 300 workflows on a loaded machine (a buy's could be 202 or 503).
    const answers = await burst(stack, f, '127.0.0.7', { secret: f.secret, action: 'close' });
    const seen = statuses(answers);
    process.stdout.write(`connection-cap: default cap, burst of ${BURST}: ${JSON.stringify(seen)}\n`);
    expect(answers.filter((a) => 'error' in a)).toEqual([]);
    // Within the default cap every post is served as usual: each gets the same 400.
    expect(seen).toEqual({ 400: BURST });
    const refusal = 'close needs a positionId or at least one filter (symbol, side, pnl); use close_all to close everything';
    for (const a of answers as HttpResult[]) expect(a.body).toEqual({ error: `Invalid signal: ${refusal}`, details: [{ path: '', message: refusal }] });
  }, 60_000);
});

describe('with 50 connections per IP, its 50 slots held by half-sent requests', () => {
  let stack: Stack;
  let f: Fixture;
  let held: net.Socket[] = [];
  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { MAX_CONNECTIONS_PER_IP: '50' }, tuning: { ingress: { bodyReadTimeoutMs: 30_000 } } });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await stack?.stop();
  });

  test(`when ${BURST} more posts come from that address, then each is answered 503 backpressure with Retry-After, none reset; another address is served`, async () => {
    held = await holdSlots(stack.ingress.port, '127.0.0.8', 50);
    const answers = await burst(stack, f, '127.0.0.8');
    process.stdout.write(`connection-cap: cap 50 held, burst of ${BURST}: ${JSON.stringify(statuses(answers))}\n`);
    expect(answers.filter((a) => 'error' in a)).toEqual([]);
    for (const a of answers as HttpResult[]) {
      expect(a.status).toBe(503);
      expect(a.body).toEqual({ error: 'System under high load, retry later', backpressure: true });
      expect(a.headers.get('retry-after')).toBe('1');
      expect(a.headers.get('x-request-id')).toBeTruthy();
    }
    // Refused at the door: nothing of them reached Temporal or the bridge queue.
    expect(await stack.redis.zcard(bridgeKeys.commandQueue(f.accounts[0]!.id))).toBe(0);
    const other = await postFrom('127.0.0.9', `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, buy(f.secret));
    expect(other.status).toBe(202);
    // Once the held connections are gone, the address is served again.
    for (const s of held) s.destroy();
    await waitFor(
      'the address to be served again',
      async () => (await postFrom('127.0.0.8', `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, buy(f.secret))).status === 202,
      10_000,
      100,
    );
  }, 60_000);
});

describe('behind a trusted proxy (TRUST_PROXY=loopback) with 50 connections per IP', () => {
  let stack: Stack;
  let f: Fixture;
  let held: net.Socket[] = [];
  beforeAll(async () => {
    stack = await startStack({
      worker: false,
      env: { MAX_CONNECTIONS_PER_IP: '50', TRUST_PROXY: 'loopback' },
      tuning: { ingress: { bodyReadTimeoutMs: 30_000 } },
    });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await stack?.stop();
  });

  test("when the proxy's address holds 50 connections, then its next request is still served: the proxy is not capped", async () => {
    held = await holdSlots(stack.ingress.port, '127.0.0.10', 50);
    const res = await postFrom('127.0.0.10', `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, buy(f.secret));
    expect(res.status).toBe(202);
  });
});
