import type { TradeEvent } from '../../src/domain/trade-events';
import { pendingInFile } from '../../src/bridge-kit/trade-outbox';
import { RedisTradeJournal } from '../../src/trades/journal';
import { ensureBuilt } from '../../support/service-process';
import { waitFor } from '../../support/infra';
import { journalEventIds, journalTrade } from '../helpers/journal';
import { pollUntilReported, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { CONFORMANCE_SYMBOLS } from '../conformance/driver';
import { PaperBridgeDriver } from '../conformance/paper-driver';

/**
 * The paper bridge's trade events across a restart (protocol 1.5; docs/paper-bridge.md, "Trade events"): the real
 * ingress, worker, Temporal and Redis; the paper bridge as its own process on a market file. Its events are held in
 * its outbox (fault `hold-trade-events`) while the market and the trader act, then it is killed: after the restart
 * the service's journal holds every event once. The per-cause cases run in the conformance suite (trade-cases.ts).
 */

const BASE = Object.fromEntries(CONFORMANCE_SYMBOLS.map((s) => [s.name, { bid: s.bid, ask: Number((s.bid + s.spread).toFixed(s.digits)) }]));

describe('trade events of the paper bridge across a restart', () => {
  let stack: Stack;
  const driver = new PaperBridgeDriver('mt5');

  beforeAll(async () => {
    ensureBuilt();
    stack = await startStack();
  }, 60_000);
  afterAll(async () => {
    await driver.cleanup();
    await stack?.stop();
  }, 60_000);

  async function filled(f: Fixture, body: Record<string, unknown>): Promise<string> {
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, ...body });
    expect(res.status).toBe(202);
    const o = (await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 20_000)).accounts[0];
    expect(o).toMatchObject({ outcome: 'filled' });
    return o.ticket as string;
  }
  const outbox = (id: string): TradeEvent[] => pendingInFile(driver.tradesFile(id));

  test('when the bridge dies with its events unsent, then after its restart the journal holds each of them once, and a later restart adds none', async () => {
    const f = await seedOwner(stack.registry, [{}]);
    const account = { id: f.accounts[0]!.id, platform: 'mt5' as const, bridgeToken: f.accounts[0]!.bridgeToken };
    await driver.start(account, stack.ingress.url, { fault: 'hold-trade-events' });
    for (const [symbol, quote] of Object.entries(BASE)) await driver.setQuote(account.id, symbol, quote);

    const tp = 1.0871;
    const byTp = await filled(f, { action: 'buy', symbol: 'EURUSD', volume: 0.1, tp });
    const byHand = await filled(f, { action: 'buy', symbol: 'GBPUSD', volume: 0.2 });
    const limit = await filled(f, { action: 'buy_limit', symbol: 'AUDUSD', volume: 0.1, price: 0.65 });
    await driver.setQuote(account.id, 'EURUSD', { bid: tp, ask: 1.0872 });
    await driver.manualClose(account.id, byHand);
    await waitFor('the TP and the click to close both positions', async () => (await driver.broker(account.id)).positions.length === 0, 15_000, 100);
    const held = outbox(account.id);
    expect(held.map((e) => [e.type, e.ticket, 'cause' in e ? e.cause : null])).toEqual([
      ['position_opened', byTp, null],
      ['position_opened', byHand, null],
      ['order_placed', limit, null],
      ['position_closed', byTp, 'take_profit'],
      ['position_closed', byHand, 'manual'],
    ]);
    expect(await journalEventIds(stack.redis, account.id)).toEqual([]);

    await driver.kill(account.id);
    await driver.start(account, stack.ingress.url);
    const closed = await waitFor(
      'the journal to hold the closes',
      async () => {
        const [a, b] = await Promise.all([journalTrade(stack.redis, account.id, byTp), journalTrade(stack.redis, account.id, byHand)]);
        return a?.status === 'closed' && b?.status === 'closed' ? [a, b] : undefined;
      },
      20_000,
      100,
    );
    expect(closed[0]).toMatchObject({ origin: 'signal', closeCause: 'take_profit', openPrice: 1.0851, closePrice: tp });
    expect(closed[0]!.realizedProfit).toBeCloseTo(20, 2);
    expect(closed[1]).toMatchObject({ origin: 'signal', closeCause: 'manual' });
    expect(await journalTrade(stack.redis, account.id, limit)).toMatchObject({ status: 'pending', origin: 'signal' });
    await waitFor('the outbox to empty', async () => outbox(account.id).length === 0, 10_000, 100);
    const ids = await journalEventIds(stack.redis, account.id);
    expect(ids.slice().sort()).toEqual(held.map((e) => e.eventId).sort());

    // Once more, gracefully: its book after the hello, and no event recorded again.
    const restartedAt = Date.now();
    await driver.stop(account.id);
    await driver.start(account, stack.ingress.url);
    await waitFor(
      'the book after the new hello',
      async () => {
        const book = await new RedisTradeJournal(stack.redis).book(account.id);
        return book && Date.parse(book.takenAt) >= restartedAt ? book : undefined;
      },
      20_000,
      100,
    );
    expect((await journalEventIds(stack.redis, account.id)).sort()).toEqual(ids.slice().sort());
  }, 120_000);
});
