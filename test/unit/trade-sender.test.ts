import { BridgeClient } from '../../src/bridge-kit/client';
import { TradeOutbox } from '../../src/bridge-kit/trade-outbox';
import { fitBook, TradeSender } from '../../src/bridge-kit/trade-sender';
import type { Book, TradeEvent } from '../../src/domain/trade-events';

/**
 * BridgeClient.sendTrades and the bridge kit's sender (src/bridge-kit/trade-sender.ts) against a scripted ingress: what is
 * sent in which order with which book, and what stays in the outbox after each kind of answer.
 */

type Answer =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | ((body: { events: TradeEvent[]; book?: Book }) => { status: number; body?: unknown; headers?: Record<string, string> });

const event = (n: number): TradeEvent => ({
  eventId: `e${n}`,
  type: 'position_opened',
  at: '2026-11-26T10:00:00.000Z',
  ticket: String(1000 + n),
  symbol: 'EURUSD',
  side: 'buy',
  volume: 0.1,
  price: 1.0851,
});

const BOOK: Book = { takenAt: '2026-11-26T10:00:01.000Z', truncated: false, positions: [], orders: [] };
const recordedAll = (body: { events: TradeEvent[]; book?: Book }) => ({
  status: 200,
  body: { events: body.events.map((e) => ({ eventId: e.eventId, result: 'recorded' })), book: body.book ? 'recorded' : 'absent' },
});

function harness(script: Answer[]) {
  let now = Date.parse('2026-11-26T10:00:00Z');
  const calls: { url: string; body: { events: TradeEvent[]; book?: Book; account?: unknown } }[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as { events: TradeEvent[]; book?: Book };
    calls.push({ url: String(input), body });
    const next = script.shift();
    if (!next) throw new TypeError('fetch failed');
    const answer = typeof next === 'function' ? next(body) : next;
    return new Response(answer.body === undefined ? '' : JSON.stringify(answer.body), {
      status: answer.status,
      ...('headers' in answer ? { headers: answer.headers } : {}),
    });
  }) as typeof fetch;
  const diag: Record<string, unknown>[] = [];
  const client = new BridgeClient({
    ingressUrl: 'http://ingress.test',
    bridgeToken: 'brg_x',
    fetch: fetchImpl,
    signal: new AbortController().signal,
    accountId: 'acc',
    diag: () => undefined,
  });
  const outbox = new TradeOutbox({ accountId: 'acc', diag: (l) => diag.push(l) });
  const sender = new TradeSender({
    accountId: 'acc',
    outbox,
    book: () => Promise.resolve(BOOK),
    figures: () => Promise.resolve({ balance: 1000, equity: 1000, margin: 0, freeMargin: 1000, currency: 'USD' }),
    clock: () => now,
    diag: (l) => diag.push(l),
  });
  sender.start(client);
  return { sender, outbox, calls, diag, advance: (ms: number) => (now += ms) };
}

afterEach(() => jest.useRealTimers());

describe('sending trade events', () => {
  test('when the bridge said hello, then the waiting events go oldest first with the book and the figures, and leave the outbox once recorded', async () => {
    const h = harness([recordedAll]);
    h.outbox.add([event(1), event(2)]);
    await h.sender.helloDone();
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]!.url).toBe('http://ingress.test/bridge/v1/trades');
    expect(h.calls[0]!.body).toEqual({ events: [event(1), event(2)], book: BOOK, account: expect.objectContaining({ equity: 1000 }) });
    expect(h.outbox.size).toBe(0);
    h.sender.stop();
  });

  test('when more than 100 events wait, then they go 100 a call in order and the book only with the call that empties the outbox', async () => {
    const h = harness([recordedAll, recordedAll, recordedAll]);
    h.outbox.add(Array.from({ length: 250 }, (_, i) => event(i)));
    await h.sender.helloDone();
    expect(h.calls.map((c) => [c.body.events.length, c.body.events[0]!.eventId, c.body.book !== undefined])).toEqual([
      [100, 'e0', false],
      [100, 'e100', false],
      [50, 'e200', true],
    ]);
    h.sender.stop();
  });

  test('when the service answers 503 or the network fails, then everything stays and is sent again after a backoff', async () => {
    const h = harness([{ status: 503, body: { error: 'unavailable' } }, recordedAll]);
    h.outbox.add([event(1)]);
    await h.sender.flush();
    expect(h.outbox.size).toBe(1);
    await h.sender.flush(); // within the backoff: no call
    expect(h.calls).toHaveLength(1);
    h.advance(1_000);
    await h.sender.flush();
    expect(h.calls).toHaveLength(2);
    expect(h.outbox.size).toBe(0);
    expect(h.diag).toEqual([expect.objectContaining({ event: 'trade_send_retry', waiting: 1, retryInMs: 1_000 })]);
    h.sender.stop();
  });

  test('when the account sent its minute of trade events (429 with Retry-After), then nothing is sent before Retry-After, everything stays, and it goes after', async () => {
    const limited = {
      status: 429,
      headers: { 'retry-after': '1' },
      body: { error: 'rate_limit_exceeded', scope: 'trade_events', limit: 1200, windowMs: 60_000 },
    };
    const h = harness([limited, recordedAll]);
    h.outbox.add([event(1), event(2)]);
    const t0 = Date.now();
    await h.sender.flush();
    // The client waited the Retry-After second before the call came back; the sender then backs off on its own clock.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    expect(h.outbox.size).toBe(2);
    await h.sender.flush();
    expect(h.calls).toHaveLength(1);
    h.advance(1_000);
    await h.sender.flush();
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1]!.body.events).toEqual([event(1), event(2)]);
    expect(h.outbox.size).toBe(0);
    expect(h.diag).toEqual([expect.objectContaining({ event: 'trade_send_retry', waiting: 2, error: expect.stringContaining('HTTP 429') })]);
    h.sender.stop();
  });

  test('when the service cannot read a call (400), then the events go one at a time and only the unreadable one is dropped', async () => {
    const bad = (body: { events: TradeEvent[] }) =>
      body.events.some((e) => e.eventId === 'e2') ? { status: 400, body: { error: 'events.0.price: not finite' } } : recordedAll(body);
    const h = harness([bad, bad, bad, bad]);
    h.outbox.add([event(1), event(2), event(3)]);
    await h.sender.flush();
    expect(h.calls.map((c) => c.body.events.map((e) => e.eventId))).toEqual([['e1', 'e2', 'e3'], ['e1'], ['e2'], ['e3']]);
    expect(h.outbox.size).toBe(0);
    expect(h.diag.map((d) => d.event)).toEqual(['trade_events_unreadable', 'trade_event_dropped']);
    h.sender.stop();
  });

  test('when an answer leaves an event unanswered, then it stays for the next round (never a busy loop)', async () => {
    const h = harness([{ status: 200, body: { events: [{ eventId: 'e1', result: 'recorded' }], book: 'absent' } }]);
    h.outbox.add([event(1), event(2)]);
    await h.sender.flush();
    expect(h.calls).toHaveLength(1);
    expect(h.outbox.pending().map((e) => e.eventId)).toEqual(['e2']);
    h.sender.stop();
  });

  test('when the service refuses the book (the terminal clock ahead), then it says why and the next book waits its minute (never a busy loop)', async () => {
    const refusal = { reason: 'future', path: 'book.takenAt' };
    const refused = (body: { events: TradeEvent[] }) => ({
      status: 200,
      body: { ...recordedAll({ events: body.events }).body, book: 'refused', bookRefusal: refusal },
    });
    const h = harness([refused, refused]);
    h.outbox.add([event(1)]);
    await h.sender.helloDone();
    await h.sender.flush();
    expect(h.calls).toHaveLength(1);
    expect(h.outbox.size).toBe(0);
    expect(h.diag).toEqual([{ time: expect.any(String), event: 'trade_book_refused', accountId: 'acc', ...refusal }]);
    h.advance(60_000);
    await h.sender.flush();
    expect(h.calls.map((c) => c.body.book?.takenAt)).toEqual([BOOK.takenAt, BOOK.takenAt]);
    h.sender.stop();
  });

  test('when nothing happened for a minute, then the book goes alone', async () => {
    const h = harness([recordedAll, recordedAll]);
    await h.sender.helloDone();
    await h.sender.flush();
    expect(h.calls).toHaveLength(1);
    h.advance(60_000);
    await h.sender.flush();
    expect(h.calls.map((c) => [c.body.events.length, c.body.book?.takenAt])).toEqual([
      [0, BOOK.takenAt],
      [0, BOOK.takenAt],
    ]);
    h.sender.stop();
  });

  test('when the book would not fit one call, then the oldest that fit go and it says truncated', () => {
    const position = (i: number) => ({
      ticket: String(i),
      symbol: 'EURUSD',
      side: 'buy' as const,
      volume: 0.1,
      openPrice: 1.1,
      sl: null,
      tp: null,
      openedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      profit: 0,
      swap: 0,
      commission: 0,
    });
    const big: Book = { ...BOOK, positions: Array.from({ length: 1_500 }, (_, i) => position(i)) };
    const fitted = fitBook(big, 100 * 1024);
    expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(100 * 1024);
    expect(fitted.truncated).toBe(true);
    expect(fitted.positions[0]!.ticket).toBe('0');
    expect(fitBook(BOOK, 100 * 1024)).toEqual(BOOK);
  });
});
