import { RedisTradeJournal } from '../../src/trades/journal';
import { tradesBodySchema, type TradeRecord } from '../../src/domain/trade-events';
import { recordTrades } from '../../src/trades/record';
import type { TradeCallbackEvent } from '../../src/trades/callback-events';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { bookOrder, bookPosition, closed, commandOf, iso, opened, placed, sendTrades, sigId } from '../helpers/trades';

/**
 * `POST /bridge/v1/trades` (protocol 1.5; docs/trades.md) over HTTP against the real Redis: each event recorded once per
 * (account, eventId) and applied to its trade, refusals final and named, malformed bodies a 400 naming the path with
 * nothing of the call recorded, the book bounded and reconciled with the journal both ways.
 */
let stack: Stack;
let journal: RedisTradeJournal;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  journal = new RedisTradeJournal(stack.redis);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const send = (f: Fixture, body: unknown, account = 0) => sendTrades(stack.ingress.url, f.accounts[account]!.bridgeToken, body);
async function trade(accountId: string, tradeId: string): Promise<TradeRecord | undefined> {
  const [raw] = await journal.readRaw(accountId, [tradeId]);
  return raw ? (JSON.parse(raw) as TradeRecord) : undefined;
}

describe('trade events', () => {
  test('when a bridge sends a position opened by a signal and closed at its TP, then the trade is recorded once, linked to the signal, with its P&L', async () => {
    const f = await seedOwner(stack.registry);
    const id = f.accounts[0]!.id;
    const signalId = sigId();
    const now = Date.now();
    const open = opened('500001', now - 60_000, { commandId: commandOf(signalId, id), sl: 1.07, tp: 1.09 });
    const close = closed('500001', now - 1_000);
    const first = await send(f, { events: [open, close] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      events: [
        { eventId: open.eventId, result: 'recorded' },
        { eventId: close.eventId, result: 'recorded' },
      ],
      book: 'absent',
    });
    const again = await send(f, { events: [open, close] });
    expect(again.body.events.map((e: { result: string }) => e.result)).toEqual(['duplicate', 'duplicate']);
    const t = await trade(id, '500001');
    expect(t).toMatchObject({
      tradeId: '500001',
      accountId: id,
      status: 'closed',
      origin: 'signal',
      signalId,
      openCommandId: open.commandId,
      side: 'buy',
      openPrice: 1.08,
      volume: 0,
      closedVolume: 0.1,
      realizedProfit: 100,
      commission: -0.7,
      closeCause: 'take_profit',
      closedAt: close.at,
    });
    expect(t!.events.map((e) => e.eventId)).toEqual([open.eventId, close.eventId]);
  });

  test('when a pending order is placed and then triggered, then it is one trade: pending as order:<ticket>, then open under the position ticket', async () => {
    const f = await seedOwner(stack.registry);
    const id = f.accounts[0]!.id;
    const signalId = sigId();
    const now = Date.now();
    const order = placed('700', now - 5_000, { volume: 0.2, commandId: commandOf(signalId, id) });
    expect((await send(f, { events: [order] })).status).toBe(200);
    expect(await trade(id, 'order:700')).toMatchObject({ status: 'pending', signalId, orderPrice: 1.05, volume: 0.2 });
    const triggered = {
      eventId: 'order:700/filled',
      type: 'order_triggered',
      at: iso(now - 1_000),
      ticket: '700',
      symbol: 'EURUSD',
      positionTicket: '701',
      price: 1.0502,
    };
    expect((await send(f, { events: [triggered] })).body.events[0].result).toBe('recorded');
    expect(await trade(id, 'order:700')).toBeUndefined();
    expect(await trade(id, '701')).toMatchObject({ status: 'open', signalId, origin: 'signal', orderTicket: '700', openPrice: 1.0502, volume: 0.2 });
  });

  test('when events name another account, lie in the future or before the retention, then each is refused with its reason and the rest are recorded', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [mine, other] = [f.accounts[0]!.id, f.accounts[1]!.id];
    const now = Date.now();
    const foreign = opened('900', now, { commandId: commandOf(sigId(), other) });
    const future = opened('901', now + 10 * 60_000);
    const old = opened('902', now - 91 * 86_400_000);
    const fine = opened('903', now);
    const res = await send(f, { events: [foreign, future, old, fine] });
    expect(res.status).toBe(200);
    expect(res.body.events).toEqual([
      { eventId: foreign.eventId, result: 'refused', reason: 'foreign_ticket' },
      { eventId: future.eventId, result: 'refused', reason: 'future' },
      { eventId: old.eventId, result: 'refused', reason: 'too_old' },
      { eventId: fine.eventId, result: 'recorded' },
    ]);
    for (const ticket of ['900', '901', '902']) expect(await trade(mine, ticket)).toBeUndefined();
    expect(await trade(other, '900')).toBeUndefined();
    // A ticket this account journaled before is its own: a later event for it is applied.
    const later = closed('903', now, { cause: 'manual' });
    expect((await send(f, { events: [later] })).body.events[0]).toEqual({ eventId: later.eventId, result: 'recorded' });
    expect(await trade(mine, '903')).toMatchObject({ status: 'closed', closeCause: 'manual' });
  });

  test.each([
    ['a number past the float range', 'events.1.volume', (e: string) => e.replace('"volume":0.1', '"volume":1e999')],
    ['a price of 0', 'events.1.price', (e: string) => e.replace('"price":1.08', '"price":0')],
    ['a string for a number', 'events.1.volume', (e: string) => e.replace('"volume":0.1', '"volume":"0.1"')],
    ['an unknown type', 'events.1.type', (e: string) => e.replace('"position_opened"', '"position_teleported"')],
    ['an eventId too long', 'events.1.eventId', (e: string) => e.replace(/"eventId":"[^"]+"/, `"eventId":"${'x'.repeat(129)}"`)],
  ])('when the second event has %s, then the call is a 400 naming %s and its first event is not recorded', async (_what, path, spoil) => {
    const f = await seedOwner(stack.registry);
    const now = Date.now();
    const good = opened('1', now);
    const text = `{"events":[${JSON.stringify(good)},${spoil(JSON.stringify(opened('2', now)))}]}`;
    const res = await send(f, text);
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await trade(f.accounts[0]!.id, '1')).toBeUndefined();
    // The same first event alone is recorded: it was not seen before.
    expect((await send(f, { events: [good] })).body.events[0].result).toBe('recorded');
  });

  test('when a call has neither events nor a book, or more than 100 events, then it is a 400', async () => {
    const f = await seedOwner(stack.registry);
    expect((await send(f, { events: [] })).status).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => opened(String(i), Date.now()));
    const res = await send(f, { events: many });
    expect(res.status).toBe(400);
    expect(res.body.details[0].path).toBe('events');
  });
});

describe('the book', () => {
  test('when a book lists 1,001 positions, then it is a 400 naming book.positions; 10,000 positions are refused by the body bound; nothing is kept', async () => {
    const f = await seedOwner(stack.registry);
    const id = f.accounts[0]!.id;
    const now = Date.now();
    const positions = (n: number) => Array.from({ length: n }, (_, i) => bookPosition(String(i + 1), now - 60_000));
    const over = await send(f, { book: { takenAt: iso(now), truncated: false, positions: positions(1001), orders: [] } });
    expect(over.status).toBe(400);
    expect(over.body.details).toEqual([{ path: 'book.positions', message: 'at most 1000 positions' }]);
    const huge = await send(f, { book: { takenAt: iso(now), truncated: false, positions: positions(10_000), orders: [] } });
    expect(huge.status).toBe(413);
    expect(huge.body.error).toBe('Request body exceeds the 512 KB limit');
    expect(await journal.book(id)).toBeUndefined();
    expect(await journal.openTradeIds(id, 10)).toEqual([]);
    // The bound holds a whole book: 1,000 positions and 1,000 orders in one call.
    const orders = Array.from({ length: 1000 }, (_, i) => bookOrder(String(50_000 + i), now - 60_000));
    const whole = await send(f, { book: { takenAt: iso(now), truncated: false, positions: positions(1000), orders } });
    expect(whole.status).toBe(200);
    expect(await journal.openTradeIds(id, 3000)).toHaveLength(2000);
  });

  test('when the book lists a position the journal does not know, then it is recorded opened outside; when it no longer lists an open one, that one is closed with cause unknown', async () => {
    const f = await seedOwner(stack.registry);
    const id = f.accounts[0]!.id;
    const now = Date.now();
    const known = opened('10', now - 120_000);
    const pending = placed('20', now - 120_000, { side: 'sell', orderType: 'stop', price: 1.07 });
    await send(f, { events: [known, pending] });
    const manual = bookPosition('11', now - 90_000, { side: 'sell', volume: 0.3, openPrice: 1.081, profit: -2.5 });
    const book = { takenAt: iso(now - 1_000), truncated: false, positions: [manual], orders: [bookOrder('21', now - 30_000)] };
    const res = await send(f, { book });
    expect(res.body).toEqual({ events: [], book: 'recorded' });
    expect(await trade(id, '11')).toMatchObject({ status: 'open', origin: 'outside', side: 'sell', volume: 0.3, openPrice: 1.081 });
    expect(await trade(id, 'order:21')).toMatchObject({ status: 'pending', origin: 'outside', orderPrice: 1.05 });
    expect(await trade(id, '10')).toMatchObject({ status: 'closed', closeCause: 'unknown', closedAt: book.takenAt, volume: 0, closedVolume: 0.1 });
    expect(await trade(id, 'order:20')).toMatchObject({ status: 'cancelled', closeCause: 'unknown' });
    // The same book again changes nothing.
    const before = await journal.readRaw(id, ['10', '11', 'order:20', 'order:21']);
    await send(f, { book });
    expect(await journal.readRaw(id, ['10', '11', 'order:20', 'order:21'])).toEqual(before);
  });

  test('when the book is truncated, or a position opened after the book was taken, then nothing is closed', async () => {
    const f = await seedOwner(stack.registry);
    const id = f.accounts[0]!.id;
    const now = Date.now();
    await send(f, { events: [opened('30', now - 60_000), opened('31', now - 1_000)] });
    await send(f, { book: { takenAt: iso(now - 60_000), truncated: true, positions: [], orders: [] } });
    expect(await trade(id, '30')).toMatchObject({ status: 'open' });
    await send(f, { book: { takenAt: iso(now - 30_000), truncated: false, positions: [], orders: [] } });
    expect(await trade(id, '30')).toMatchObject({ status: 'closed', closeCause: 'unknown' });
    expect(await trade(id, '31')).toMatchObject({ status: 'open' });
  });
});

describe('the bound on trades', () => {
  test('when the journal holds the most trades an account may have, then an event that begins a trade is refused journal_full, and one of a held trade is recorded', async () => {
    const f = await seedOwner(stack.registry);
    const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
    const deps = { journal: new RedisTradeJournal(stack.redis, 2), retentionMs: stack.config.trades.retentionMs };
    const now = Date.now();
    const body = tradesBodySchema.parse({ events: [opened('1', now), opened('2', now), opened('3', now), closed('1', now)] });
    const answer = await recordTrades(deps, account, body, now);
    expect(answer.events.map((e) => e.reason ?? e.result)).toEqual(['recorded', 'recorded', 'journal_full', 'recorded']);
    expect(await trade(account.id, '3')).toBeUndefined();
  });
});

describe('callbacks', () => {
  test('each recorded event is published for its owner; a duplicate again (delivered once by its id); a publish that fails fails the call, and the resend publishes it', async () => {
    const f = await seedOwner(stack.registry);
    const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
    const published: TradeCallbackEvent[] = [];
    let failing = true;
    const publish = async (owner: string, event: TradeCallbackEvent) => {
      expect(owner).toBe(f.owner);
      if (failing) throw new Error('Temporal unavailable');
      published.push(event);
    };
    const body = tradesBodySchema.parse({ events: [opened('42', Date.now() - 1_000), closed('42', Date.now())] });
    const deps = { journal, retentionMs: stack.config.trades.retentionMs, publish };
    await expect(recordTrades(deps, account, body, Date.now())).rejects.toMatchObject({ kind: 'backpressure' });
    failing = false;
    // The call's events were recorded in one step before their callbacks went: the resend finds both recorded.
    const answer = await recordTrades(deps, account, body, Date.now());
    expect(answer.events.map((e) => e.result)).toEqual(['duplicate', 'duplicate']);
    expect(published.map((e) => [e.type, e.eventId, e.data.tradeId])).toEqual([
      ['position.opened', body.events[0]!.eventId, '42'],
      ['position.closed', body.events[1]!.eventId, '42'],
    ]);
  });
});
