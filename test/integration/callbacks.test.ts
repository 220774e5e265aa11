import net, { type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { type Client, type Connection, WorkflowNotFoundError } from '@temporalio/client';
import { temporalClient } from '../helpers/temporal';
import { Webhook } from 'standardwebhooks';
import type { PaperTerminal } from '../../src/paper/terminal';
import { ownerCallbacks, CallbackRegistrationRefused, type OwnerCallbacks } from '../../src/callbacks/owner-callbacks';
import { ownerCallbacksOf, callbackAttemptDeps } from '../../src/callbacks/wiring';
import { parseAllowedOrigin } from '../../src/callbacks/origins';
import { callbackWorkflowId } from '../../src/domain/ids';
import { waitFor } from '../../support/infra';
import { testEnv } from '../../support/env';
import { callbackEnv, callbackReceiver as receiver } from '../helpers/callback-receiver';
import { pollUntilReported, post, seedOwner, startPaperTerminal, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * Outcome callbacks end to end (docs/callbacks.md): the real ingress, worker, Temporal and Redis, the paper bridge in
 * this process, and a receiver on loopback that the allow-list lets callbacks reach. Every delivery is checked the
 * way a receiver would: the Standard Webhooks library verifies its signature with the secret shown at registration.
 */

/** A listener on 127.0.0.1 that is no HTTP receiver: `garbage` answers a line that is not HTTP, `reset` resets the connection. */
async function notHttp(kind: 'garbage' | 'reset') {
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    // Read what the client sends, or its end is never seen and the socket (and close()) waits for ever.
    socket.resume();
    if (kind === 'reset') socket.resetAndDestroy();
    else socket.end('SSH-2.0-OpenSSH_9.6\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('outcome callbacks', () => {
  let stack: Stack;
  let callbacks: OwnerCallbacks;
  let loopback: Awaited<ReturnType<typeof receiver>>;
  let other: Awaited<ReturnType<typeof receiver>>;
  let garbage: Awaited<ReturnType<typeof notHttp>>;
  let reset: Awaited<ReturnType<typeof notHttp>>;
  let connection: Connection;
  let client: Client;
  const terminals: PaperTerminal[] = [];

  beforeAll(async () => {
    loopback = await receiver('127.0.0.1');
    // Another loopback address the allow-list does not name: a private address callbacks must never reach.
    other = await receiver('127.0.0.2');
    garbage = await notHttp('garbage');
    reset = await notHttp('reset');
    stack = await startStack({ env: callbackEnv([loopback.origin(), garbage.origin, reset.origin]) });
    callbacks = ownerCallbacksOf(stack.config, stack.redis);
    ({ connection, client } = await temporalClient());
  });
  afterAll(async () => {
    await Promise.all(terminals.map((t) => t.stop()));
    await stack?.stop();
    await connection?.close();
    await loopback?.close();
    await other?.close();
    await garbage?.close();
    await reset?.close();
  });

  /** A fresh owner with one account on a paper bridge; `buy` sends a market buy and returns the poll's account item. */
  async function paperOwner() {
    const f: Fixture = await seedOwner(stack.registry);
    const { terminal } = await startPaperTerminal(stack, f.accounts[0]!);
    terminals.push(terminal);
    const buy = async () => {
      const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
      expect(res.status).toBe(202);
      const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 15_000);
      return { signalId: res.body.signalId as string, account: status.accounts[0] };
    };
    return { f, accountId: f.accounts[0]!.id, buy };
  }

  test('when an owner registered a receiver, then each fill reaches it signed, with the paper ticket, and the attempt is listed', async () => {
    const { f, accountId, buy } = await paperOwner();
    const { endpoint, secret } = await callbacks.register(f.owner, loopback.url(`/ok/${f.owner}`));
    expect(secret).toMatch(/^whsec_/);
    expect(await callbacks.list(f.owner)).toEqual([endpoint]);

    const { signalId, account } = await buy();
    expect(account).toMatchObject({ outcome: 'filled', ticket: expect.any(String) });
    const delivery = await waitFor('the outcome at the receiver', async () => loopback.received.find((r) => r.path === `/ok/${f.owner}`), 20_000);
    // The library verifies the signature, the id and the timestamp's freshness, and gives back the payload.
    const event = new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string; data: Record<string, unknown> };
    expect(delivery.headers['webhook-id']).toBe(callbackWorkflowId(signalId, accountId));
    expect(event).toEqual({
      type: 'signal.outcome',
      timestamp: account.occurredAt,
      data: {
        signalId,
        correlationId: expect.any(String),
        accountId,
        outcome: 'filled',
        ticket: account.ticket,
        reason: null,
        occurredAt: account.occurredAt,
        // The poll's additive fields too (docs/poll.md).
        entry: 'position',
        fill: account.fill,
      },
    });
    // Another secret does not verify it.
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(delivery.body, delivery.headers)).toThrow();

    const attempts = await waitFor(
      'the attempt recorded',
      async () => {
        const listed = await callbacks.recentAttempts(f.owner, 10);
        return listed.length > 0 ? listed : undefined;
      },
      5_000,
    );
    expect(attempts).toEqual([
      expect.objectContaining({
        endpointId: endpoint.id,
        messageId: callbackWorkflowId(signalId, accountId),
        attempt: 1,
        status: 200,
        error: null,
        delivered: true,
      }),
    ]);
    // Operators see attempts on the worker's /metrics.
    const metrics = await (await fetch(stack.worker!.metricsUrl!)).text();
    expect(metrics).toMatch(/^external_signals_callback_attempts_total\{result="delivered"\} [1-9]/m);
  });

  test('when the receiver answers 500 twice, then the outcome is delivered on the 3rd attempt and all three attempts are listed', async () => {
    const { f, buy } = await paperOwner();
    const hook = `/flaky/${f.owner}`;
    loopback.scripts.set(hook, [500, 500]);
    const { endpoint, secret } = await callbacks.register(f.owner, loopback.url(hook));
    const { signalId, account } = await buy();
    const attempts = await waitFor(
      'the third attempt delivered',
      async () => {
        const listed = await callbacks.recentAttempts(f.owner, 10);
        return listed.some((a) => a.delivered) ? listed : undefined;
      },
      30_000,
    );
    expect(attempts.map((a) => [a.attempt, a.status, a.error, a.delivered, a.endpointId])).toEqual([
      [3, 200, null, true, endpoint.id],
      [2, 500, 'http_5xx', false, endpoint.id],
      [1, 500, 'http_5xx', false, endpoint.id],
    ]);
    expect(await (await fetch(stack.worker!.metricsUrl!)).text()).toMatch(/^external_signals_callback_attempts_total\{result="failed"\} [2-9]/m);
    const deliveries = loopback.received.filter((r) => r.path === hook);
    expect(deliveries).toHaveLength(3);
    // Every attempt is the same message (one webhook-id), each signed afresh.
    expect(new Set(deliveries.map((d) => d.headers['webhook-id']))).toEqual(new Set([`callback:${signalId}:${account.accountId}`]));
    for (const d of deliveries) expect((new Webhook(secret).verify(d.body, d.headers) as { data: { ticket: string } }).data.ticket).toBe(account.ticket);
  });

  test('when a URL reaches a private address the allow-list does not name, then it is refused at registration and at delivery', async () => {
    const { f, accountId, buy } = await paperOwner();
    for (const url of [other.url('/x'), 'http://10.0.0.1/x', 'http://[::ffff:169.254.169.254]/x', 'http://localhost.:1/x']) {
      const refused = await callbacks.register(f.owner, url).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(CallbackRegistrationRefused);
    }
    expect(await callbacks.list(f.owner)).toEqual([]);

    // Registered while the operator's allow-list still named 127.0.0.2; the worker's no longer does.
    const before = ownerCallbacks({
      ...callbackAttemptDeps(stack.config, stack.redis),
      guard: { ...stack.config.callbacks.guard, allowedOrigins: [parseAllowedOrigin(other.origin())] },
      maxEndpointsPerOwner: 5,
    });
    const { endpoint } = await before.register(f.owner, other.url(`/refused/${f.owner}`));
    const { signalId } = await buy();
    // The poll shows the bridge's report before the signal workflow has it; the delivery starts once it has.
    await client.workflow.getHandle(`signal/${signalId}`).result();
    const result = await client.workflow.getHandle(callbackWorkflowId(signalId, accountId)).result();
    expect(result).toEqual({ [endpoint.id]: 'failed' });
    expect(await callbacks.recentAttempts(f.owner, 10)).toEqual([
      expect.objectContaining({
        endpointId: endpoint.id,
        attempt: 1,
        status: null,
        delivered: false,
        error: 'refused_by_guard',
      }),
    ]);
    expect(other.received).toEqual([]);
  });

  test('when the allow-list names a receiver on 127.0.0.1, then the other ports of 127.0.0.1 (Redis, Temporal, the admin listener) are refused', async () => {
    const { f } = await paperOwner();
    const port = (address: string) => new URL(address.includes('://') ? address : `tcp://${address}`).port;
    const neighbours = [
      `http://127.0.0.1:${port(stack.config.redis.url)}/`,
      `http://127.0.0.1:${port(testEnv().temporalAddress)}/`,
      `http://127.0.0.1:${port(stack.ingress.adminUrl!)}/readyz`,
      `http://127.0.0.1:${port(stack.ingress.url)}/healthz`,
      'http://127.0.0.1/',
      `https://127.0.0.1:${port(loopback.origin())}/`,
    ];
    for (const url of neighbours) {
      const refused = await callbacks.register(f.owner, url).then(
        () => 'registered',
        (err: unknown) => (err instanceof CallbackRegistrationRefused ? err.message : String(err)),
      );
      expect([url, refused]).toEqual([url, 'callback URL refused: private or reserved address (127.0.0.1)']);
    }
    expect(await callbacks.list(f.owner)).toEqual([]);
  });

  test('when an allowed origin is no HTTP receiver (a line of another protocol, a reset), then the owner reads connection_failed, never what answered', async () => {
    const { f, buy } = await paperOwner();
    const a = await callbacks.register(f.owner, `${garbage.origin}/hook`);
    const b = await callbacks.register(f.owner, `${reset.origin}/hook`);
    await buy();
    const attempts = await waitFor(
      'a first attempt to each',
      async () => {
        const listed = await callbacks.recentAttempts(f.owner, 50);
        return [a, b].every((e) => listed.some((x) => x.endpointId === e.endpoint.id)) ? listed : undefined;
      },
      20_000,
    );
    for (const attempt of attempts) expect(attempt).toMatchObject({ status: null, error: 'connection_failed', delivered: false });
    // What the transport said (hpe_invalid_constant, econnreset) tells one kind of listener from another: not the owner's to read.
    expect(JSON.stringify(attempts)).not.toMatch(/hpe_|econn|ssh|reset|refused/i);
    // Retried for a day otherwise: removed, the next attempt finds the endpoint gone.
    for (const e of [a, b]) await callbacks.remove(f.owner, e.endpoint.id);
  });

  test('when the owner has no endpoint, then no delivery workflow is started at all', async () => {
    const { accountId, buy } = await paperOwner();
    const { signalId } = await buy();
    // The signal is complete (the poll reported it, and the parent starts deliveries before the memo write completes).
    await client.workflow.getHandle(`signal/${signalId}`).result();
    await expect(client.workflow.getHandle(callbackWorkflowId(signalId, accountId)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});
