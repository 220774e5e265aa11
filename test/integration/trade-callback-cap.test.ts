import { randomBytes } from 'node:crypto';
import { type Client, type Connection } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { temporalClient } from '../helpers/temporal';
import { ownerCallbacksOf } from '../../src/callbacks/wiring';
import type { OwnerCallbacks } from '../../src/callbacks/owner-callbacks';
import { RedisEndpointStore } from '../../src/callbacks/endpoints';
import { RedisTradeCallbackCap } from '../../src/callbacks/trade-coalescing';
import { tradeEventPublisher, type PublishTradeEvent } from '../../src/callbacks/trade-events';
import type { TradeCallbackEvent } from '../../src/domain/callback';
import { coalescedTradeCallbackWorkflowId, tradeCallbackWorkflowId } from '../../src/domain/ids';
import { TemporalCallbackDeliveries } from '../../src/temporal/callback-deliveries';
import { Regions } from '../../src/temporal/regions';
import { waitFor } from '../../support/infra';
import { callbackEnv, callbackReceiver, type Received } from '../helpers/callback-receiver';
import { seedOwner, startStack, type Stack } from '../helpers/stack';

/**
 * A burst of trade events for one owner at the callbacks (src/callbacks/trade-coalescing.ts): the first of the owner's
 * window each start a delivery of their own, the rest go in one `trade.coalesced` delivery once the window ends, and
 * another owner's first event in the same window starts its own. The real worker, Temporal and Redis; a window of
 * 15 s and a cap of 5 (the service's: 60 a minute) so the test waits seconds, not a minute. The publisher's clock is
 * held at the burst's start, so a loaded machine's slow publishing cannot carry the burst into the next window.
 */
const WINDOW_MS = 15_000;
const CAP = 5;

let stack: Stack;
let callbacks: OwnerCallbacks;
let receiver: Awaited<ReturnType<typeof callbackReceiver>>;
let connection: Connection;
let client: Client;
let regions: Regions;
let publish: PublishTradeEvent;
let clock = Date.now();

beforeAll(async () => {
  receiver = await callbackReceiver('127.0.0.1');
  stack = await startStack({ env: callbackEnv([receiver.origin()]) });
  callbacks = ownerCallbacksOf(stack.config, stack.redis);
  ({ connection, client } = await temporalClient());
  regions = new Regions(stack.config.temporal.regions, 5_000);
  publish = tradeEventPublisher({
    endpoints: new RedisEndpointStore(stack.redis),
    accountOf: async (id) => {
      const [a] = await stack.registry.getAccounts([id]);
      return a ? { owner: a.owner, region: a.region } : null;
    },
    deliveries: new TemporalCallbackDeliveries(regions, stack.config.temporal.taskQueue),
    cap: new RedisTradeCallbackCap(stack.redis, WINDOW_MS, CAP),
    now: () => clock,
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await connection?.close();
  await regions?.close();
  await receiver?.close();
});

const modified = (accountId: string, n: number): TradeCallbackEvent => ({
  eventId: `mod:${randomBytes(4).toString('hex')}:${n}`,
  type: 'position.modified',
  at: new Date(Date.now() - 1_000 + n).toISOString(),
  data: { accountId, tradeId: String(7000 + (n % 5)), symbol: 'EURUSD', sl: 1.07, tp: 1.09, cause: 'trailing_stop' },
});

test("when one owner's bridge brings 40 trade events in a window, then 5 are delivered alone and the other 35 in one coalesced delivery; another owner is not held back", async () => {
  const f = await seedOwner(stack.registry);
  const other = await seedOwner(stack.registry);
  const accountId = f.accounts[0]!.id;
  const hook = `/burst/${f.owner}`;
  const { secret } = await callbacks.register(f.owner, receiver.url(hook), ['position.modified']);
  await callbacks.register(other.owner, receiver.url(`/calm/${other.owner}`), ['position.modified']);
  // The burst starts at the beginning of a window, so all 40 fall in one.
  await waitFor('a fresh window', async () => (Date.now() % WINDOW_MS < WINDOW_MS / 3 ? true : undefined), WINDOW_MS * 2);
  clock = Date.now();
  const window = Math.floor(clock / WINDOW_MS);
  const events = Array.from({ length: 40 }, (_, n) => modified(accountId, n));
  const answers: string[] = [];
  for (const e of events) answers.push(await publish(f.owner, e));
  expect(answers).toEqual([...Array(CAP).fill('started'), ...Array(40 - CAP).fill('coalesced')]);
  const calm = modified(other.accounts[0]!.id, 0);
  expect(await publish(other.owner, calm)).toBe('started');
  // A resend of a coalesced event in the same window is kept once.
  expect(await publish(f.owner, events[39]!)).toBe('coalesced');

  const coalescedId = coalescedTradeCallbackWorkflowId(f.owner, window);
  expect(Object.values(await client.workflow.getHandle(coalescedId).result())).toEqual(['delivered']);
  await expect(client.workflow.getHandle(tradeCallbackWorkflowId(accountId, events[CAP]!.eventId)).describe()).rejects.toThrow();
  const got = await waitFor(
    'six messages',
    async () => {
      const mine = receiver.received.filter((r: Received) => r.path === hook);
      return mine.length >= CAP + 1 ? mine : undefined;
    },
    30_000,
  );
  expect(got).toHaveLength(CAP + 1);
  const verify = (r: Received) =>
    new Webhook(secret).verify(r.body, r.headers) as { type: string; data: { events?: { webhookId: string }[]; omitted?: number } };
  const batch = got.find((r) => r.headers['webhook-id'] === coalescedId)!;
  const body = verify(batch);
  expect(body.type).toBe('trade.coalesced');
  expect(body.data.omitted).toBe(0);
  expect(body.data.events!.map((e) => e.webhookId).sort()).toEqual(
    events
      .slice(CAP)
      .map((e) => tradeCallbackWorkflowId(accountId, e.eventId))
      .sort(),
  );
  const alone = got
    .filter((r) => r !== batch)
    .map((r) => r.headers['webhook-id'])
    .sort();
  expect(alone).toEqual(
    events
      .slice(0, CAP)
      .map((e) => tradeCallbackWorkflowId(accountId, e.eventId))
      .sort(),
  );
  await waitFor("the other owner's event", async () => receiver.received.find((r) => r.path === `/calm/${other.owner}`), 30_000);
}, 60_000);
