import type { Redis } from 'ioredis';
import type { Action } from '../../src/domain/actions';
import type { AccountOutcome } from '../../src/domain/outcome';
import type { TradeRecord } from '../../src/domain/trade-events';
import { RedisTradeJournal } from '../../src/trades/journal';
import { waitFor } from '../../support/infra';
import { journalEventIds, journalTrade } from '../helpers/journal';
import { CONFORMANCE_SYMBOLS, type BridgeUnderTest, type ConformanceAccount } from './driver';
import { away, bidAt, askAt, baseQuote as base } from './market';

/**
 * The conformance suite's trade-event cases (protocol 1.5; docs/bridge-conformance.md, "Trade events"): each cause a
 * bridge must tell the service, read back from the service's trade journal. The broker side's market moves through
 * the driver's `setQuote`, the trader's click through its `manualClose`. `trader` is an account of its own (its book
 * starts empty); `tstop` has the copy-trading stop-out at 5 %.
 */

export interface TradeCaseContext {
  driver: BridgeUnderTest;
  url: () => string;
  redis: () => Redis;
  /** Submits one signal to the account and waits for its outcome. */
  run: (acc: ConformanceAccount, body: Record<string, unknown> & { action: Action }) => Promise<{ signalId: string; outcome: AccountOutcome }>;
  trader: ConformanceAccount;
  tstop: ConformanceAccount;
}

export function tradeEventCases(ctx: TradeCaseContext): void {
  const { driver, trader, tstop } = ctx;
  const manualClose = driver.manualClose?.bind(driver);
  if (!manualClose) {
    test.todo(`trade events (protocol 1.5): ${driver.name} has no manualClose hook yet`);
    return;
  }

  const ticketOf = (r: { outcome: AccountOutcome }): string => {
    expect(r.outcome).toMatchObject({ outcome: 'filled', ticket: expect.any(String) });
    return r.outcome.ticket!;
  };
  /** Waits until the journal holds the ticket's trade in `status`; the trade then. */
  const journaled = (acc: ConformanceAccount, ticket: string, status: TradeRecord['status'], timeoutMs = 20_000) =>
    waitFor(
      `the journal to show ${ticket} of ${acc.id} ${status}`,
      async () => {
        const t = await journalTrade(ctx.redis(), acc.id, ticket);
        return t?.status === status ? t : undefined;
      },
      timeoutMs,
      100,
    );
  const once = async (acc: ConformanceAccount) => {
    const ids = await journalEventIds(ctx.redis(), acc.id);
    expect(ids.length).toBe(new Set(ids).size);
  };

  describe('trade events (protocol 1.5)', () => {
    beforeAll(async () => {
      await driver.start(trader, ctx.url());
      for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(trader.id, s.name, base(s.name));
    }, 60_000);

    test('when the bridge said hello, then the service holds its book (positions and orders), taken just now', async () => {
      const book = await waitFor('the book after hello', () => new RedisTradeJournal(ctx.redis()).book(trader.id), 20_000, 100);
      expect(book).toMatchObject({ truncated: false, positions: [], orders: [] });
      expect(Math.abs(Date.now() - Date.parse(book.takenAt))).toBeLessThan(120_000);
    });

    test('when a buy with SL and TP fills and the price reaches the TP, then the journal shows it opened by the signal and closed by take_profit with the P&L', async () => {
      const q = base('EURUSD');
      const tp = away('EURUSD', q.ask, 20);
      const entry = await ctx.run(trader, { action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: away('EURUSD', q.ask, -20), tp });
      const ticket = ticketOf(entry);
      const open = await journaled(trader, ticket, 'open');
      expect(open).toMatchObject({ origin: 'signal', signalId: entry.signalId, side: 'buy', volume: 0.1, openPrice: q.ask, tp });
      await driver.setQuote(trader.id, 'EURUSD', bidAt('EURUSD', tp));
      const closed = await journaled(trader, ticket, 'closed');
      // 20 pips of 0.1 lot EURUSD: 20 USD.
      expect(closed).toMatchObject({ closeCause: 'take_profit', closedVolume: 0.1, volume: 0, closePrice: tp });
      expect(closed.realizedProfit).toBeCloseTo(20, 2);
      await driver.setQuote(trader.id, 'EURUSD', base('EURUSD'));
      await once(trader);
    }, 60_000);

    test('when a sell with SL fills and the price reaches the SL, then the journal shows it closed by stop_loss with the loss', async () => {
      const q = base('GBPUSD');
      const sl = away('GBPUSD', q.bid, 20);
      const ticket = ticketOf(await ctx.run(trader, { action: 'sell', symbol: 'GBPUSD', volume: 0.1, sl }));
      await journaled(trader, ticket, 'open');
      await driver.setQuote(trader.id, 'GBPUSD', askAt('GBPUSD', sl));
      const closed = await journaled(trader, ticket, 'closed');
      expect(closed).toMatchObject({ closeCause: 'stop_loss', closePrice: sl });
      expect(closed.realizedProfit).toBeCloseTo(-20, 2);
      await driver.setQuote(trader.id, 'GBPUSD', base('GBPUSD'));
    }, 60_000);

    test('when the trader closes a position by hand in the terminal, then the journal shows it closed by manual', async () => {
      const q = base('AUDUSD');
      const ticket = ticketOf(await ctx.run(trader, { action: 'buy', symbol: 'AUDUSD', volume: 0.1 }));
      await journaled(trader, ticket, 'open');
      await manualClose(trader.id, ticket);
      const closed = await journaled(trader, ticket, 'closed');
      expect(closed).toMatchObject({ closeCause: 'manual', closePrice: q.bid });
      // Bought at the ask, sold at the bid: the spread, 1.2 pips of 0.1 lot.
      expect(closed.realizedProfit).toBeCloseTo(-1.2, 2);
      expect((await driver.broker(trader.id)).positions.map((p) => p.ticket)).not.toContain(ticket);
    }, 60_000);

    test('when a buy limit is reached, then the journal shows it placed, triggered into a position of the signal; a close command closes it by command and links its signal', async () => {
      const q = base('EURUSD');
      const price = away('EURUSD', q.ask, -10);
      const entry = await ctx.run(trader, { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price });
      const order = ticketOf(entry);
      expect(await journaled(trader, order, 'pending')).toMatchObject({ origin: 'signal', signalId: entry.signalId, orderType: 'limit', orderPrice: price });
      await driver.setQuote(trader.id, 'EURUSD', askAt('EURUSD', price));
      const open = await journaled(trader, order, 'open');
      expect(open).toMatchObject({ origin: 'signal', signalId: entry.signalId, openPrice: price, volume: 0.1 });
      await driver.setQuote(trader.id, 'EURUSD', base('EURUSD'));
      const position = open.tradeId;
      const close = await ctx.run(trader, { action: 'close', positionId: position });
      expect(close.outcome).toMatchObject({ outcome: 'done' });
      const closed = await journaled(trader, order, 'closed');
      expect(closed).toMatchObject({ closeCause: 'command', closePrice: q.bid });
      expect(closed.linkedSignals).toContain(close.signalId);
    }, 60_000);

    test('when a pending order reaches its expiry, then the journal shows it expired', async () => {
      const q = base('USDJPY');
      // An entry carries no expiry (the spec's action table): the order gets one a few seconds ahead afterwards.
      const order = ticketOf(await ctx.run(trader, { action: 'sell_limit', symbol: 'USDJPY', volume: 0.1, price: away('USDJPY', q.bid, 50) }));
      const expiry = new Date(Date.now() + 4_000).toISOString();
      expect((await ctx.run(trader, { action: 'modify_pending_expiry', orderId: order, expiry })).outcome).toMatchObject({ outcome: 'done' });
      await journaled(trader, order, 'pending');
      const expired = await journaled(trader, order, 'expired', 30_000);
      expect(expired.closeCause).toBe('expired');
      expect((await driver.broker(trader.id)).orders.map((o) => o.ticket)).not.toContain(order);
      await once(trader);
    }, 60_000);

    test('when the stop-out closes everything, then the journal shows each position closed by stop_out', async () => {
      await driver.start(tstop, ctx.url());
      for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(tstop.id, s.name, base(s.name));
      const ticket = ticketOf(await ctx.run(tstop, { action: 'buy', symbol: 'EURUSD', volume: 5 }));
      await journaled(tstop, ticket, 'open');
      // 101 pips down on 5 lots: about 5,050 USD, past 5 % of 100,000.
      await driver.setQuote(tstop.id, 'EURUSD', bidAt('EURUSD', away('EURUSD', base('EURUSD').bid, -101)));
      const closed = await journaled(tstop, ticket, 'closed');
      expect(closed.closeCause).toBe('stop_out');
      expect(closed.realizedProfit).toBeLessThan(-5_000);
      await once(tstop);
    }, 90_000);
  });
}
