import { RedisTradeJournal } from '../../src/trades/journal';
import { recordTrades } from '../../src/trades/record';
import { tradesBodySchema, type TradeRecord } from '../../src/domain/trade-events';
import { adminCliJson } from '../helpers/admin';
import { startStack, type Fixture, type Stack } from '../helpers/stack';
import { asBrowser, ownerKeyFile, signedInOwner, type OwnerBrowser } from '../helpers/owner';
import { bookPosition, iso, opened, sendTrades } from '../helpers/trades';

/**
 * Books against the clock (docs/trades.md, "Clock") over HTTP against the real Redis: a book from a terminal whose
 * clock runs ahead is refused with its reason and the field, nothing of it applied, the events beside it recorded; a
 * journal written before books were bounded is reconciled by correct books and repaired by `admin trades repair-clock`.
 */
let stack: Stack;
let journal: RedisTradeJournal;
const SKEWED = Date.parse('2099-01-01T00:00:00Z');

beforeAll(async () => {
  stack = await startStack({ worker: false, env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
  journal = new RedisTradeJournal(stack.redis);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const send = (f: Fixture, body: unknown) => sendTrades(stack.ingress.url, f.accounts[0]!.bridgeToken, body);
const ownerBook = async (browser: OwnerBrowser, id: string) => (await asBrowser(browser, 'GET', `${stack.ingress.url}/v1/owner/accounts/${id}/book`)).body;
async function trade(accountId: string, tradeId: string): Promise<TradeRecord | undefined> {
  const [raw] = await journal.readRaw(accountId, [tradeId]);
  return raw ? (JSON.parse(raw) as TradeRecord) : undefined;
}
const book = (takenAt: number, positions: unknown[]) => ({ takenAt: iso(takenAt), truncated: false, positions, orders: [] });

test('when a book is taken in 2099, or lists a position opened in 2098, then it is refused `future` naming the field, nothing of it is applied, and a correct book after it is', async () => {
  const { f, browser } = await signedInOwner(stack);
  const id = f.accounts[0]!.id;
  const now = Date.now();
  const open = opened('100', now - 60_000);
  const first = await send(f, { events: [open], book: book(SKEWED, [bookPosition('200', SKEWED - 86_400_000)]) });
  expect(first.status).toBe(200);
  expect(first.body).toEqual({
    events: [{ eventId: open.eventId, result: 'recorded' }],
    book: 'refused',
    bookRefusal: { reason: 'future', path: 'book.takenAt' },
  });
  const second = await send(f, { book: book(now, [bookPosition('100', now - 60_000), bookPosition('200', Date.parse('2098-01-01T00:00:00Z'))]) });
  expect(second.body).toEqual({ events: [], book: 'refused', bookRefusal: { reason: 'future', path: 'book.positions.1.openedAt' } });
  expect(await trade(id, '100')).toMatchObject({ status: 'open', openedAt: open.at });
  expect(await trade(id, '200')).toBeUndefined();
  expect(await journal.book(id)).toBeUndefined();
  expect(await journal.lastEventMs(id)).toBe(now - 60_000);
  expect(await ownerBook(browser, id)).toMatchObject({ asOf: open.at, positions: [expect.objectContaining({ ticket: '100' })] });

  const correct = await send(f, { book: book(now - 1_000, [bookPosition('100', now - 60_000)]) });
  expect(correct.body).toEqual({ events: [], book: 'recorded' });
  expect((await ownerBook(browser, id)).asOf).toBe(iso(now - 1_000));
});

test('when an event and a book lie within 5 minutes ahead, then they are taken, and the data is never newer than now', async () => {
  const { f, browser } = await signedInOwner(stack);
  const id = f.accounts[0]!.id;
  const now = Date.now();
  const soon = opened('300', now + 4 * 60_000);
  const res = await send(f, { events: [soon], book: book(now + 4 * 60_000, [bookPosition('300', now + 4 * 60_000)]) });
  expect(res.body).toEqual({ events: [{ eventId: soon.eventId, result: 'recorded' }], book: 'recorded' });
  expect(await journal.lastEventMs(id)).toBeLessThanOrEqual(Date.now());
  // The book is newer than the clock: the data is as of the moment it is read.
  const before = Date.now();
  const shown = await ownerBook(browser, id);
  expect(Date.parse(shown.asOf)).toBeGreaterThanOrEqual(before);
  expect(Date.parse(shown.asOf)).toBeLessThanOrEqual(Date.now());
  expect(shown.ageSeconds).toBe(0);
});

/** A journal as a 2099 book left it before books were bounded: recorded by the use case with a clock in 2099. */
async function skewedJournal(f: Fixture, now: number): Promise<{ open: ReturnType<typeof opened> }> {
  const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
  const open = opened('100', now - 60_000);
  const deps = { journal, retentionMs: 200 * 365 * 86_400_000 };
  await recordTrades(deps, account, tradesBodySchema.parse({ events: [open] }), now);
  const body = tradesBodySchema.parse({ book: book(SKEWED, [bookPosition('200', Date.parse('2098-01-01T00:00:00Z'))]) });
  await recordTrades(deps, account, body, SKEWED);
  expect(await trade(account.id, '100')).toMatchObject({ status: 'closed', closeCause: 'unknown', closedAt: iso(SKEWED) });
  expect(await trade(account.id, '200')).toMatchObject({ status: 'open', openedAt: '2098-01-01T00:00:00.000Z' });
  return { open };
}

test("when a journal holds a position opened in 2098, then a correct book that no longer lists it ends it, at the book's time", async () => {
  const { f } = await signedInOwner(stack);
  const id = f.accounts[0]!.id;
  const now = Date.now();
  await skewedJournal(f, now);
  expect((await send(f, { book: book(now - 1_000, []) })).body).toEqual({ events: [], book: 'recorded' });
  expect(await trade(id, '200')).toMatchObject({ status: 'closed', closeCause: 'unknown', closedAt: iso(now - 1_000) });
});

test('when `admin trades repair-clock` runs on a journal a 2099 book wrote, then the held trade is open again, times are back at the clock, and the data ages again', async () => {
  const { f, browser } = await signedInOwner(stack);
  const id = f.accounts[0]!.id;
  const now = Date.now();
  const { open } = await skewedJournal(f, now);
  expect(await ownerBook(browser, id)).toMatchObject({ ageSeconds: 0 });

  const repaired = await adminCliJson<unknown[]>(['trades', 'repair-clock', id], stack.config.redis.url);
  expect(repaired).toEqual([
    {
      accountId: id,
      repaired: expect.arrayContaining(['100', '200']),
      reopened: ['100'],
      bookDropped: true,
      lastEvent: { before: iso(SKEWED), after: open.at },
    },
  ]);
  expect((repaired[0] as { repaired: string[] }).repaired).toHaveLength(2);
  expect(await trade(id, '100')).toMatchObject({ status: 'open', volume: 0.1, closedVolume: 0 });
  expect((await trade(id, '100'))!.closedAt).toBeUndefined();
  expect(await ownerBook(browser, id)).toMatchObject({ asOf: open.at });
  // Run again, nothing is past the clock.
  expect(await adminCliJson(['trades', 'repair-clock', id], stack.config.redis.url)).toEqual([]);

  // The bridge's correct book lists the held trade and not the 2098 one: the one is kept, the other ended now.
  const later = Date.now() + 1;
  expect((await send(f, { book: book(later, [bookPosition('100', now - 60_000)]) })).body).toEqual({ events: [], book: 'recorded' });
  expect(await trade(id, '100')).toMatchObject({ status: 'open' });
  expect(await trade(id, '200')).toMatchObject({ status: 'closed', closeCause: 'unknown', closedAt: iso(later) });
  expect(await ownerBook(browser, id)).toMatchObject({ positions: [expect.objectContaining({ ticket: '100' })] });
});
