import { RedisFigures } from '../../src/bridge/figures';
import { RedisTradeJournal, journalKeys } from '../../src/trades/journal';
import { recordTrades } from '../../src/trades/record';
import { tradesBodySchema } from '../../src/domain/trade-events';
import { post } from '../../support/http';
import { startStack, type Fixture, type Stack } from '../helpers/stack';
import { asBrowser, ownerKeyFile, signedInOwner, type OwnerBrowser } from '../helpers/owner';
import { bookPosition, closed, commandOf, iso, opened, placed, sendTrades, sigId } from '../helpers/trades';

/**
 * The trade journal on the owner API (docs/trades.md) over HTTP against the real Redis: positions and orders with the
 * data's age, trades filtered and paged, one trade with its events, the equity curve, the day's gauges, a signal's
 * trades, another owner's account answered 404, and retention.
 */
let stack: Stack;
let a: Fixture;

let browserA: OwnerBrowser;
let browserB: OwnerBrowser;
const DAY = 86_400_000;

beforeAll(async () => {
  stack = await startStack({ worker: false, env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
  ({ f: a, browser: browserA } = await signedInOwner(stack, [{}, {}, {}]));
  ({ browser: browserB } = await signedInOwner(stack, [{}]));
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const read = (browser: OwnerBrowser, path: string) => asBrowser(browser, 'GET', `${stack.ingress.url}${path}`);
const send = (f: Fixture, body: unknown, account = 0) => sendTrades(stack.ingress.url, f.accounts[account]!.bridgeToken, body);

test('the book: open positions and pending orders with their signal, the floating P&L from the last book, and the age of the data', async () => {
  const id = a.accounts[0]!.id;
  const signalId = sigId();
  const now = Date.now();
  await send(a, {
    events: [
      opened('100', now - 60_000, { commandId: commandOf(signalId, id) }),
      placed('101', now - 50_000, { symbol: 'GBPUSD', side: 'sell', volume: 0.2, price: 1.3 }),
    ],
    book: { takenAt: iso(now - 10_000), truncated: false, positions: [bookPosition('100', now - 60_000, { profit: 12.5 })], orders: [] },
  });
  const res = await read(browserA, `/v1/owner/accounts/${id}/book`);
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.body).toMatchObject({ asOf: iso(now - 10_000), reportedByBridge: false });
  expect(res.body.ageSeconds).toBeGreaterThanOrEqual(10);
  expect(res.body.positions).toEqual([expect.objectContaining({ ticket: '100', tradeId: '100', signalId, profit: 12.5, volume: 0.1, openPrice: 1.08 })]);
  // The order placed before the book was taken and missing from it is gone; the book says so.
  expect(res.body.orders).toEqual([]);
  const hello = await post(
    `${stack.ingress.url}/bridge/v1/hello`,
    { platform: 'mt5', bridgeVersion: '3.5.0', capabilities: ['trade_events'] },
    { authorization: `Bearer ${a.accounts[0]!.bridgeToken}` },
  );
  expect(hello.status).toBe(200);
  expect((await read(browserA, `/v1/owner/accounts/${id}/book`)).body).toMatchObject({ reportedByBridge: true, bridgeVersion: '3.5.0' });
});

test('trades: newest first, by status, symbol and signal, in pages; one trade with its events; an unknown trade is 404', async () => {
  const id = a.accounts[1]!.id;
  const now = Date.now();
  const signalId = sigId();
  const closer = sigId();
  const events = [
    opened('1', now - 50_000, { commandId: commandOf(signalId, id) }),
    opened('2', now - 40_000, { symbol: 'GBPUSD' }),
    opened('3', now - 30_000),
    opened('4', now - 20_000),
    opened('5', now - 10_000),
    closed('1', now - 5_000, { commandId: commandOf(closer, id), cause: 'command', profit: -3 }),
  ];
  expect((await send(a, { events }, 1)).status).toBe(200);
  const list = async (q: string) => (await read(browserA, `/v1/owner/accounts/${id}/trades?${q}`)).body;
  expect((await list('')).trades.map((t: { tradeId: string }) => t.tradeId)).toEqual(['5', '4', '3', '2', '1']);
  expect((await list('status=open')).trades.map((t: { tradeId: string }) => t.tradeId)).toEqual(['5', '4', '3', '2']);
  expect((await list('status=closed')).trades).toEqual([
    expect.objectContaining({ tradeId: '1', realizedProfit: -3, closeCause: 'command', linkedSignals: [closer] }),
  ]);
  expect((await list('symbol=GBPUSD')).trades.map((t: { tradeId: string }) => t.tradeId)).toEqual(['2']);
  expect((await list(`signalId=${closer}`)).trades.map((t: { tradeId: string }) => t.tradeId)).toEqual(['1']);
  expect((await list('')).trades[0]).not.toHaveProperty('events');
  const seen: string[] = [];
  let cursor = '';
  for (let page = 0; page < 5; page++) {
    const body = await list(`limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    seen.push(...body.trades.map((t: { tradeId: string }) => t.tradeId));
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
  }
  expect(seen).toEqual(['5', '4', '3', '2', '1']);
  expect((await read(browserA, `/v1/owner/accounts/${id}/trades?limit=201`)).status).toBe(400);
  expect((await read(browserA, `/v1/owner/accounts/${id}/trades?from=yesterday`)).body.details[0].path).toBe('from');
  const one = await read(browserA, `/v1/owner/accounts/${id}/trades/1`);
  expect(one.body).toMatchObject({ tradeId: '1', signalId, status: 'closed' });
  expect(one.body.events.map((e: { type: string }) => e.type)).toEqual(['position_opened', 'position_closed']);
  expect((await read(browserA, `/v1/owner/accounts/${id}/trades/999`)).status).toBe(404);
  const ofSignal = await read(browserA, `/v1/owner/signals/${signalId}/trades`);
  expect(ofSignal.body.trades.map((t: { tradeId: string; accountId: string }) => [t.accountId, t.tradeId])).toEqual([[id, '1']]);
});

test("another owner's account is 404 on every trade route, and another owner's signal has no trades", async () => {
  const id = a.accounts[1]!.id;
  for (const path of ['book', 'trades', 'trades/1', 'equity', 'day']) {
    const res = await read(browserB, `/v1/owner/accounts/${id}/${path}`);
    expect([path, res.status]).toEqual([path, 404]);
  }
  const signalId = sigId();
  await send(a, { events: [opened('77', Date.now(), { commandId: commandOf(signalId, a.accounts[2]!.id) })] }, 2);
  expect((await read(browserA, `/v1/owner/signals/${signalId}/trades`)).body.trades).toHaveLength(1);
  expect((await read(browserB, `/v1/owner/signals/${signalId}/trades`)).body).toEqual({ trades: [] });
});

test("the equity curve and the day: figures sampled at most once a minute; realized P&L today and today's closes that add up to it; the gauges", async () => {
  const id = a.accounts[2]!.id;
  const set = await asBrowser(browserA, 'PATCH', `${stack.ingress.url}/v1/owner/accounts/${id}`, {
    risk: { lossGuards: { dailyLossAmount: 100, maxDrawdownPercent: 10, timezone: 'UTC' } },
  });
  expect(set.status).toBe(200);
  const figures = (equity: number) => ({ balance: 10_000, equity, currency: 'USD' });
  const now = Date.now();
  await send(a, { events: [opened('80', now - 2_000)], account: figures(10_000) }, 2);
  await send(a, { events: [closed('80', now - 1_000, { profit: 40, commission: -2, swap: -1 })], account: figures(9_950) }, 2);
  // A take-profit level's share of a trade still open: realized today, so listed today, though its trade is open.
  const level = closed('81', now - 500, { volume: 0.1, remainingVolume: 0.2, price: 1.086, profit: 1.5, commission: 0, cause: 'take_profit_level' });
  await send(a, { events: [opened('81', now - 1_500, { volume: 0.3 }), level] }, 2);
  const curve = await read(browserA, `/v1/owner/accounts/${id}/equity`);
  expect(curve.body).toEqual({ currency: 'USD', points: [{ at: expect.any(String), balance: 10_000, equity: 10_000 }] });
  const day = await read(browserA, `/v1/owner/accounts/${id}/day`);
  expect(day.status).toBe(200);
  expect(day.body).toMatchObject({
    day: iso(Date.now()).slice(0, 10),
    timeZone: 'UTC',
    realizedProfit: 38.5,
    closesTruncated: false,
    dailyLossLimit: { basis: 'amount', amount: 100, percent: 1, used: 0.5, loss: 50, dayOpenEquity: 10_000 },
    drawdown: { max: 10, current: 0.5, used: 0.05, peakEquity: 10_000 },
    equity: 9_950,
  });
  expect(day.body.days).toHaveLength(30);
  expect(day.body.days.at(-1)).toEqual({ day: day.body.day, profit: 38.5 });
  expect(day.body.closes).toEqual([
    {
      tradeId: '81',
      symbol: 'EURUSD',
      side: 'buy',
      at: iso(now - 500),
      volume: 0.1,
      remainingVolume: 0.2,
      price: 1.086,
      profit: 1.5,
      cause: 'take_profit_level',
    },
    { tradeId: '80', symbol: 'EURUSD', side: 'buy', at: iso(now - 1_000), volume: 0.1, remainingVolume: 0, price: 1.09, profit: 37, cause: 'take_profit' },
  ]);
  expect(day.body.closes.reduce((sum: number, c: { profit: number }) => sum + c.profit, 0)).toBe(day.body.realizedProfit);
});

test('retention: trades closed and points sampled before it go with the next call; a trade still open stays, however old', async () => {
  const f = a;
  const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
  const journal = new RedisTradeJournal(stack.redis);
  const retentionMs = stack.config.trades.retentionMs;
  const then = Date.now() - retentionMs - 5 * DAY;
  const signalId = sigId();
  const body = tradesBodySchema.parse({
    events: [opened('old-open', then), opened('old-closed', then, { commandId: commandOf(signalId, account.id) }), closed('old-closed', then + 1_000)],
  });
  // The bridge's call as it was when these happened, back then.
  await recordTrades({ journal, retentionMs }, account, body, then + 2_000);
  await new RedisFigures(stack.redis, retentionMs).record(account.id, { balance: 1, equity: 1, currency: 'USD' }, then);
  expect(await journal.readRaw(account.id, ['old-open', 'old-closed'])).not.toContain(null);
  expect(await journal.tradesOfSignal(account.id, signalId, 10)).toEqual(['old-closed']);
  await send(f, { events: [opened('new', Date.now())] });
  const [oldOpen, oldClosed] = await journal.readRaw(account.id, ['old-open', 'old-closed']);
  expect(oldOpen).not.toBeNull();
  expect(oldClosed).toBeNull();
  expect(await journal.tradesOfSignal(account.id, signalId, 10)).toEqual([]);
  expect(await stack.redis.zscore(journalKeys(account.id).all, 'old-closed')).toBeNull();
  // An event as old as the removed ones is refused, never recorded again.
  const late = await send(f, { events: [closed('old-closed', then + 1_000)] });
  expect(late.body.events[0]).toMatchObject({ result: 'refused', reason: 'too_old' });
  await send(f, {
    events: [],
    book: { takenAt: iso(Date.now()), truncated: true, positions: [], orders: [] },
    account: { balance: 2, equity: 2, currency: 'USD' },
  });
  const points = (await read(browserA, `/v1/owner/accounts/${account.id}/equity?from=${iso(then - DAY)}`)).body.points;
  expect(points.map((p: { equity: number }) => p.equity)).not.toContain(1);
});

test('the OpenAPI document describes every trade route of the owner API', async () => {
  const doc = (await read(browserA, '/openapi.json')).body;
  for (const path of ['book', 'trades', 'trades/{tradeId}', 'equity', 'day']) expect(doc.paths[`/v1/owner/accounts/{accountId}/${path}`]?.get).toBeDefined();
  expect(doc.paths['/v1/owner/signals/{signalId}/trades']?.get).toBeDefined();
});
