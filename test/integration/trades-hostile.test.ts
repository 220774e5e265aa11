import { RedisTradeJournal, journalKeys } from '../../src/trades/journal';
import { tradesBodySchema } from '../../src/domain/trade-events';
import { recordTrades, TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE } from '../../src/trades/record';
import { seedOwner, startStack, type Stack } from '../helpers/stack';
import { iso, sendTrades } from '../helpers/trades';
import { heldCall } from '../helpers/held-call';
import { commandsOf } from '../helpers/redis-monitor';
import { waitFor } from '../../support/run';

/**
 * What one bridge token can make the trade journal hold and do (docs/trades.md, "Bounds"): its trade events a minute
 * are bounded (429 with Retry-After past it, checked and charged in one Lua step), and the event ids kept to answer a
 * resend `duplicate` are a bounded count per account, a recent resend still deduplicated.
 */
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ worker: false });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

let serial = 0;
/** A stop move with a new 128-character event id, as the hostile bridge of the audit sent them. */
const modified = (ticket: string, atMs: number) => ({
  eventId: `mod:${String(++serial).padStart(8, '0')}:`.padEnd(128, 'x'),
  type: 'position_modified',
  at: iso(atMs),
  ticket,
  symbol: 'EURUSD',
  sl: 1.07,
  tp: 1.09,
  cause: 'trailing_stop',
});
/**
 * A hundred on twenty tickets, new ones each call: the bound is what is tested here. The audit's five tickets (every
 * event rewriting a trade of hundreds) are the isolation measurement of test/fault/hostile-bridge.test.ts.
 */
let nextTicket = 900_000;
const hundred = (atMs: number) => {
  const first = (nextTicket += 20);
  return Array.from({ length: 100 }, (_, i) => modified(String(first + (i % 20)), atMs));
};

describe('a bridge that sends trade events without end', () => {
  test('when an account sent its minute of trade events, then the next call is 429 with Retry-After and a body that says why, nothing of it is recorded, and its other account is not held back', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [first, second] = f.accounts as [(typeof f.accounts)[0], (typeof f.accounts)[0]];
    const now = Date.now();
    for (let sent = 0; sent < TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE; sent += 100) {
      const res = await sendTrades(stack.ingress.url, first.bridgeToken, { events: hundred(now) });
      expect(res.status).toBe(200);
    }
    const over = hundred(now);
    const refused = await sendTrades(stack.ingress.url, first.bridgeToken, { events: over });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({
      error: 'rate_limit_exceeded',
      scope: 'trade_events',
      message: `At most ${TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE} trade events a minute per account; nothing of this call was recorded, send it again after Retry-After`,
      limit: TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE,
      windowMs: 60_000,
    });
    expect(await stack.redis.zscore(journalKeys(first.id).seen, over[0]!.eventId)).toBeNull();
    // Until the minute ends nothing of the account is read, a book alone neither; the budget is the account's, not the owner's.
    const bookOnly = await sendTrades(stack.ingress.url, first.bridgeToken, { book: { takenAt: iso(now), truncated: true, positions: [], orders: [] } });
    expect({ status: bookOnly.status, scope: bookOnly.body.scope }).toEqual({ status: 429, scope: 'trade_events' });
    expect(await stack.redis.get(journalKeys(first.id).book)).toBeNull();
    expect((await sendTrades(stack.ingress.url, second.bridgeToken, { events: hundred(now) })).status).toBe(200);
  });

  test('when an account sent its minute, then its next call is refused before its body is read: a body that never comes gets 429, not the body deadline', async () => {
    const f = await seedOwner(stack.registry);
    const token = f.accounts[0]!.bridgeToken;
    const now = Date.now();
    for (let sent = 0; sent < TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE; sent += 100) {
      expect((await sendTrades(stack.ingress.url, token, { events: hundred(now) })).status).toBe(200);
    }
    const held = heldCall(stack.ingress.url, token, 4_096);
    const answer = await held.answer;
    held.close();
    expect({ status: answer.status, scope: answer.body.scope, retryAfter: answer.retryAfter !== undefined }).toEqual({
      status: 429,
      scope: 'trade_events',
      retryAfter: true,
    });
  });

  test('when a call of an account is still coming, then another call of the same account is 429 one-at-a-time with nothing of it read, another account is served, and once the first is answered the next goes', async () => {
    const f = await seedOwner(stack.registry, [{}, {}]);
    const [first, second] = f.accounts as [(typeof f.accounts)[0], (typeof f.accounts)[0]];
    const now = Date.now();
    const body = JSON.stringify({ events: hundred(now) });
    const held = heldCall(stack.ingress.url, first.bridgeToken, Buffer.byteLength(body));
    held.write(body.slice(0, 10));
    // Let in once the account's call is held: its hold is in Redis before the body is read.
    await waitFor('the first call to hold its account', async () => (await stack.redis.exists(journalKeys(first.id).call)) === 1, 10_000);
    const other = hundred(now);
    const refused = await sendTrades(stack.ingress.url, first.bridgeToken, { events: other });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual({
      error: 'rate_limit_exceeded',
      scope: 'trade_calls',
      message:
        'One trades call per account at a time: another call of this account is being recorded; nothing of this one was read, send it again after Retry-After',
      limit: 1,
    });
    expect(await stack.redis.zscore(journalKeys(first.id).seen, other[0]!.eventId)).toBeNull();
    expect((await sendTrades(stack.ingress.url, second.bridgeToken, { events: hundred(now) })).status).toBe(200);
    held.write(body.slice(10));
    const answer = await held.answer;
    expect(answer.status).toBe(200);
    expect(await stack.redis.exists(journalKeys(first.id).call)).toBe(0);
    expect((await sendTrades(stack.ingress.url, first.bridgeToken, { events: other })).status).toBe(200);
  });

  test('when 20 calls bring 100 events each at once, then the atomic charge lets exactly the minute through', async () => {
    const f = await seedOwner(stack.registry);
    const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
    const deps = { journal: new RedisTradeJournal(stack.redis), retentionMs: stack.config.trades.retentionMs };
    const now = Date.now();
    // Each call its own tickets: calls on the same trades at once would retry each other (a 503), not what is tested here.
    const bodies = Array.from({ length: 20 }, () => tradesBodySchema.parse({ events: hundred(now) }));
    const calls = await Promise.allSettled(bodies.map((body) => recordTrades(deps, account, body, now)));
    expect(calls.filter((c) => c.status === 'fulfilled')).toHaveLength(TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE / 100);
    expect(calls.filter((c) => c.status === 'rejected').map((c) => (c as PromiseRejectedResult).reason.kind)).toEqual(Array(8).fill('throttled'));
    expect(await stack.redis.zcard(journalKeys(account.id).seen)).toBe(TRADE_EVENTS_PER_ACCOUNT_PER_MINUTE);
  });
});

describe('what one call costs Redis', () => {
  test('when a call brings 100 events on 5 tickets, then they are read in one round trip and written in one step: at most 8 Redis commands for the call', async () => {
    const f = await seedOwner(stack.registry);
    const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
    // The audit's five tickets: each of the 100 events rewrites one of 5 trades.
    const now = Date.now();
    const body = tradesBodySchema.parse({ events: Array.from({ length: 100 }, (_, i) => modified(String(700_000 + (i % 5)), now)) });
    const { result: answer, commands: ofTheCall } = await commandsOf(stack.redis, (conn) =>
      recordTrades({ journal: new RedisTradeJournal(conn), retentionMs: stack.config.trades.retentionMs }, account, body, now),
    );
    expect(answer.events.map((e) => e.result)).toEqual(Array(100).fill('recorded'));
    console.log(`one call of 100 events on 5 tickets: ${ofTheCall.length} Redis commands (${ofTheCall.join(' ')})`);
    // The charge, the read (HMGET, ZMSCORE, ZCARD), the step, the prune; a script Redis does not hold yet adds its EVAL.
    expect(ofTheCall.length).toBeGreaterThanOrEqual(6);
    expect(ofTheCall.filter((c) => c !== 'eval').length).toBeLessThanOrEqual(6);
  });
});

describe('the event ids kept for resends', () => {
  test('when an account records more events than the ids it keeps, then the oldest ids go in the same step, and a resend of a recent one is still duplicate', async () => {
    const f = await seedOwner(stack.registry);
    const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
    const keep = 150;
    const deps = { journal: new RedisTradeJournal(stack.redis, 100_000, keep), retentionMs: stack.config.trades.retentionMs };
    const now = Date.now();
    // Oldest first: 300 events, each a second apart.
    const events = Array.from({ length: 300 }, (_, i) => modified(String(800_000 + (i % 5)), now - (300 - i) * 1_000));
    for (let i = 0; i < events.length; i += 100) {
      const answer = await recordTrades(deps, account, tradesBodySchema.parse({ events: events.slice(i, i + 100) }), now);
      expect(answer.events.every((e) => e.result === 'recorded')).toBe(true);
    }
    const seen = journalKeys(account.id).seen;
    expect(await stack.redis.zcard(seen)).toBe(keep);
    expect(await stack.redis.zscore(seen, events[0]!.eventId)).toBeNull();
    const recent = events.slice(-100);
    const resent = await recordTrades(deps, account, tradesBodySchema.parse({ events: recent }), now);
    expect(resent.events.map((e) => e.result)).toEqual(Array(100).fill('duplicate'));
    // An event older than every id kept is recorded, and it stays: its own resend is a duplicate too.
    const late = modified('800000', now - 3_600_000);
    expect((await recordTrades(deps, account, tradesBodySchema.parse({ events: [late] }), now)).events[0]!.result).toBe('recorded');
    expect((await recordTrades(deps, account, tradesBodySchema.parse({ events: [late] }), now)).events[0]!.result).toBe('duplicate');
    expect(await stack.redis.zcard(seen)).toBe(keep);
  });
});
