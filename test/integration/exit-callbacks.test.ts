import { randomBytes } from 'node:crypto';
import { type Client, type Connection } from '@temporalio/client';
import { temporalClient } from '../helpers/temporal';
import { Webhook } from 'standardwebhooks';
import type { PaperTerminal } from '../../src/paper/terminal';
import type { OwnerCallbacks } from '../../src/callbacks/owner-callbacks';
import { ownerCallbacksOf, tradeEventPublisherOf } from '../../src/callbacks/wiring';
import type { PublishTradeEvent } from '../../src/callbacks/trade-events';
import type { TradeCallbackEvent } from '../../src/domain/callback';
import { callbackWorkflowId, tradeCallbackWorkflowId } from '../../src/domain/ids';
import { Regions } from '../../src/temporal/regions';
import { waitFor } from '../../support/infra';
import { callbackEnv, callbackReceiver, type Received } from '../helpers/callback-receiver';
import { pollUntilReported, post, seedOwner, startPaperTerminal, startStack, type Stack } from '../helpers/stack';
import { closed, opened, sendTrades } from '../helpers/trades';

/**
 * What became of an exit, and trade events, at the owner's callbacks (docs/callbacks.md): the real ingress, worker,
 * Temporal and Redis, the paper bridge in this process, a receiver on loopback. Each delivery is verified as a
 * receiver would, with the Standard Webhooks library and the secret shown at registration.
 */
describe('exit outcomes and trade events at the callbacks', () => {
  let stack: Stack;
  let callbacks: OwnerCallbacks;
  let receiver: Awaited<ReturnType<typeof callbackReceiver>>;
  let connection: Connection;
  let client: Client;
  let regions: Regions;
  let publishTradeEvent: PublishTradeEvent;
  const terminals: PaperTerminal[] = [];

  beforeAll(async () => {
    receiver = await callbackReceiver('127.0.0.1');
    stack = await startStack({ env: callbackEnv([receiver.origin()]) });
    callbacks = ownerCallbacksOf(stack.config, stack.redis);
    ({ connection, client } = await temporalClient());
    regions = new Regions(stack.config.temporal.regions, 5_000);
    publishTradeEvent = tradeEventPublisherOf(stack.config, stack.redis, regions, stack.registry);
  });
  afterAll(async () => {
    await Promise.all(terminals.map((t) => t.stop()));
    await stack?.stop();
    await connection?.close();
    await regions?.close();
    await receiver?.close();
  });

  /** A fresh owner with one account on a paper bridge, and `send` to POST a signal to it and get its signalId. */
  async function paperOwner() {
    const f = await seedOwner(stack.registry);
    const { terminal } = await startPaperTerminal(stack, f.accounts[0]!);
    terminals.push(terminal);
    const accountId = f.accounts[0]!.id;
    const send = async (signal: Record<string, unknown>) => {
      const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: f.secret, ...signal });
      expect(res.status).toBe(202);
      return { signalId: res.body.signalId as string, correlationId: res.body.correlationId as string };
    };
    return { f, accountId, send };
  }

  const at = (p: string) => (r: Received) => r.path === p;
  const arrived = (p: string, what: string, count = 1) =>
    waitFor(`${what} at ${p}`, async () => (receiver.received.filter(at(p)).length >= count ? receiver.received.filter(at(p)) : undefined), 30_000);
  const verified = (secret: string, r: Received) =>
    new Webhook(secret).verify(r.body, r.headers) as { type: string; timestamp: string; data: Record<string, unknown> };

  test('when a close is done and a modify is rejected, then each exit outcome arrives signed as signal.exit_outcome', async () => {
    const { f, accountId, send } = await paperOwner();
    const hook = `/exits/${f.owner}`;
    const { secret } = await callbacks.register(f.owner, receiver.url(hook));

    const buy = await send({ action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const ticket = (await pollUntilReported(stack.ingress.url, buy.signalId, f.token, 1, 20_000)).accounts[0].ticket as string;
    await arrived(hook, 'the buy');

    const close = await send({ action: 'close', positionId: ticket });
    const [, closed] = await arrived(hook, 'the close', 2);
    expect(closed!.headers['webhook-id']).toBe(callbackWorkflowId(close.signalId, accountId));
    expect(verified(secret, closed!)).toEqual({
      type: 'signal.exit_outcome',
      timestamp: expect.any(String),
      data: {
        signalId: close.signalId,
        correlationId: close.correlationId,
        accountId,
        action: 'close',
        outcome: 'done',
        reason: null,
        occurredAt: expect.any(String),
      },
    });

    // The position is closed now: moving its stop loss is refused by the broker.
    const modify = await send({ action: 'modify_sl', positionId: ticket, sl: 1.07, idempotencyKey: `modify-${randomBytes(4).toString('hex')}` });
    const [, , refused] = await arrived(hook, 'the modify', 3);
    const event = verified(secret, refused!);
    expect(event).toMatchObject({
      type: 'signal.exit_outcome',
      data: { signalId: modify.signalId, accountId, action: 'modify_sl', outcome: 'rejected', reason: expect.stringMatching(/^broker:/) },
    });
    // The poll still reports entries only.
    const polled = await (await fetch(`${stack.ingress.url}/v1/signals/${modify.signalId}`, { headers: { authorization: `Bearer ${f.token}` } })).json();
    expect(polled).toEqual({ signalId: modify.signalId, status: 'pending_or_unknown', reported: 0, accounts: [] });
  });

  test("when an endpoint lists event types, then it gets only those, while an endpoint that lists none gets the signals' outcomes", async () => {
    const { f, accountId, send } = await paperOwner();
    const all = `/all/${f.owner}`;
    const exitsOnly = `/exits-only/${f.owner}`;
    await callbacks.register(f.owner, receiver.url(all));
    const { endpoint: narrow, secret } = await callbacks.register(f.owner, receiver.url(exitsOnly), ['signal.exit_outcome']);
    expect(narrow.eventTypes).toEqual(['signal.exit_outcome']);
    expect((await callbacks.list(f.owner)).find((e) => e.id === narrow.id)?.eventTypes).toEqual(['signal.exit_outcome']);

    const buy = await send({ action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const ticket = (await pollUntilReported(stack.ingress.url, buy.signalId, f.token, 1, 20_000)).accounts[0].ticket as string;
    // The buy's delivery went to the endpoint that lists no types (the signals' outcomes), and only to it. (The poll shows the bridge's
    // report before the signal workflow has it; the delivery starts once it has.)
    await client.workflow.getHandle(`signal/${buy.signalId}`).result();
    const delivered = await client.workflow.getHandle(callbackWorkflowId(buy.signalId, accountId)).result();
    expect(Object.keys(delivered)).toHaveLength(1);
    expect(Object.keys(delivered)).not.toContain(narrow.id);

    const close = await send({ action: 'close', positionId: ticket });
    const [got] = await arrived(exitsOnly, 'the close');
    expect(verified(secret, got!)).toMatchObject({ type: 'signal.exit_outcome', data: { signalId: close.signalId, outcome: 'done' } });
    await arrived(all, 'the buy and the close', 2);
    expect(receiver.received.filter(at(exitsOnly))).toHaveLength(1);
  });

  test('when the journal publishes a trade event twice, then it is delivered once, signed, to the endpoints that want it', async () => {
    const { f, accountId } = await paperOwner();
    const hook = `/trades/${f.owner}`;
    const { secret } = await callbacks.register(f.owner, receiver.url(hook), ['position.closed']);
    await callbacks.register(f.owner, receiver.url(`/outcomes-only/${f.owner}`), ['signal.outcome']);
    const event: TradeCallbackEvent = {
      eventId: `deal:${randomBytes(4).toString('hex')}`,
      type: 'position.closed',
      at: '2026-11-26T12:00:00.000Z',
      data: {
        accountId,
        tradeId: '1000003',
        symbol: 'EURUSD',
        side: 'buy',
        volume: 0.1,
        remainingVolume: 0,
        price: 1.085,
        profit: 49,
        commission: -0.7,
        swap: 0,
        cause: 'take_profit',
      },
    };
    expect(await publishTradeEvent(f.owner, event)).toBe('started');
    expect(await publishTradeEvent(f.owner, event)).toBe('duplicate');
    const workflowId = tradeCallbackWorkflowId(accountId, event.eventId);
    expect(Object.values(await client.workflow.getHandle(workflowId).result())).toEqual(['delivered']);
    const [got] = await arrived(hook, 'the trade event');
    expect(got!.headers['webhook-id']).toBe(workflowId);
    expect(verified(secret, got!)).toEqual({ type: 'position.closed', timestamp: event.at, data: event.data });
    expect(receiver.received.filter(at(hook))).toHaveLength(1);
    expect(receiver.received.filter(at(`/outcomes-only/${f.owner}`))).toHaveLength(0);

    // An owner with no endpoint for the type costs no delivery; another owner's account is never published to.
    expect(
      await publishTradeEvent(f.owner, {
        ...event,
        eventId: `${event.eventId}:b`,
        type: 'order.expired',
        data: { accountId, tradeId: 'order:7', symbol: 'EURUSD' },
      }),
    ).toBe('no_endpoints');
    // Both are final answers, not failures: the journal must not have the bridge resend them.
    expect(await publishTradeEvent('someone-else', { ...event, eventId: `${event.eventId}:c` })).toBe('foreign_account');
    expect(await publishTradeEvent(f.owner, { ...event, eventId: `${event.eventId}:d`, data: { ...event.data, accountId: 'acc-nobody' } })).toBe(
      'unknown_account',
    );
    await expect(client.workflow.getHandle(tradeCallbackWorkflowId(accountId, `${event.eventId}:c`)).describe()).rejects.toThrow();
  });

  test("when a bridge reports a position closed by its take profit, then the owner's endpoint gets position.closed with the P&L, signed, once", async () => {
    const f = await seedOwner(stack.registry);
    const accountId = f.accounts[0]!.id;
    const hook = `/journal/${f.owner}`;
    const { secret } = await callbacks.register(f.owner, receiver.url(hook), ['position.closed']);
    const now = Date.now();
    const open = opened('5001', now - 60_000);
    const close = closed('5001', now - 1_000, { profit: 20, commission: -0.7, swap: -0.1, price: 1.087, cause: 'take_profit' });
    // As a protocol 1.5 bridge sends them; the resend of the close (its answer lost) is recorded once and delivered once.
    const first = await sendTrades(stack.ingress.url, f.accounts[0]!.bridgeToken, { events: [open, close] });
    expect(first.status).toBe(200);
    expect(first.body.events.map((e: { result: string }) => e.result)).toEqual(['recorded', 'recorded']);
    const again = await sendTrades(stack.ingress.url, f.accounts[0]!.bridgeToken, { events: [close] });
    expect(again.body.events.map((e: { result: string }) => e.result)).toEqual(['duplicate']);

    const [got] = await arrived(hook, 'the close');
    expect(got!.headers['webhook-id']).toBe(tradeCallbackWorkflowId(accountId, close.eventId));
    expect(verified(secret, got!)).toEqual({
      type: 'position.closed',
      timestamp: close.at,
      data: expect.objectContaining({
        accountId,
        tradeId: '5001',
        symbol: 'EURUSD',
        side: 'buy',
        volume: 0.1,
        price: 1.087,
        profit: 20,
        commission: -0.7,
        swap: -0.1,
        cause: 'take_profit',
      }),
    });
    await client.workflow.getHandle(tradeCallbackWorkflowId(accountId, close.eventId)).result();
    expect(receiver.received.filter(at(hook))).toHaveLength(1);
  });
});
