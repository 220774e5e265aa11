import type { Redis } from 'ioredis';
import type { Action } from '../../src/domain/actions';
import type { AccountOutcome } from '../../src/domain/outcome';
import type { JournalEvent, TradeRecord } from '../../src/domain/trade-events';
import { waitFor } from '../../support/infra';
import { journalTrade, journalTrades } from '../helpers/journal';
import { CONFORMANCE_SYMBOLS, type BridgeUnderTest, type BrokerPosition, type ConformanceAccount } from './driver';
import { SYMBOL_SPECS, away, bidAt, askAt, baseQuote as base } from './market';

/**
 * The conformance suite's trade-management cases (protocol 1.6; docs/trade-management.md), on a steered market: the
 * price runs up and back through the driver's `setQuote`, and the suite reads what the broker side holds (the stop,
 * the lots) and what the bridge told the journal (each move and each level's close, with its cause). `manager` is an
 * account of its own; each case trades its own symbol, so the cases do not see each other's positions.
 */

export interface ManagementCaseContext {
  driver: BridgeUnderTest;
  url: () => string;
  redis: () => Redis;
  run: (acc: ConformanceAccount, body: Record<string, unknown> & { action: Action }) => Promise<{ signalId: string; outcome: AccountOutcome }>;
  manager: ConformanceAccount;
}

/** Half a point: how far apart two prices of the symbol may be and still be the same price. */
const same = (symbol: string, a: number | null, b: number) => a !== null && Math.abs(a - b) < 0.5 * 10 ** -SYMBOL_SPECS[symbol]!.digits;

export function managementCases(ctx: ManagementCaseContext): void {
  const { driver, manager } = ctx;
  if (!driver.managesTrades) {
    test.todo(`trade management (protocol 1.6): ${driver.name} does not manage trades yet`);
    return;
  }

  const ticketOf = (r: { outcome: AccountOutcome }): string => {
    expect(r.outcome).toMatchObject({ outcome: 'filled', ticket: expect.any(String) });
    return r.outcome.ticket!;
  };
  const held = async (ticket: string): Promise<BrokerPosition | undefined> => (await driver.broker(manager.id)).positions.find((p) => p.ticket === ticket);
  /** Waits until the broker side holds the position with its stop at `sl`. */
  const stopAt = (symbol: string, ticket: string, sl: number) =>
    waitFor(
      `${ticket}'s stop at ${sl}`,
      async () => {
        const p = await held(ticket);
        return p && same(symbol, p.sl, sl) ? p : undefined;
      },
      20_000,
      50,
    );
  const volumeAt = (ticket: string, volume: number) =>
    waitFor(
      `${ticket} at ${volume} lots`,
      async () => {
        const p = await held(ticket);
        return p && Math.abs(p.volume - volume) < 1e-9 ? p : undefined;
      },
      20_000,
      50,
    );
  /** The journal's events of the ticket's trade once `count` of them match. */
  const journalEvents = (ticket: string, match: (e: JournalEvent) => boolean, count: number) =>
    waitFor(
      `${count} matching journal events of ${ticket}`,
      async () => {
        const t = await journalTrade(ctx.redis(), manager.id, ticket);
        const events = t?.events.filter(match) ?? [];
        return events.length >= count ? { trade: t!, events } : undefined;
      },
      20_000,
      100,
    );
  const moves = (cause: string) => (e: JournalEvent) => e.type === 'position_modified' && e.cause === cause;

  describe('trade management (protocol 1.6)', () => {
    beforeAll(async () => {
      await driver.start(manager, ctx.url());
      for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(manager.id, s.name, base(s.name));
    }, 60_000);

    test('trailing stop: the stop starts at the trigger, moves in steps as the price runs up, never back when it falls', async () => {
      const open = base('EURUSD').ask;
      const ticket = ticketOf(
        await ctx.run(manager, {
          action: 'buy',
          symbol: 'EURUSD',
          volume: 0.1,
          sl: away('EURUSD', open, -20),
          trailDistancePips: 10,
          trailTriggerPips: 5,
          trailStepPips: 2,
        }),
      );
      const sl = (pips: number) => away('EURUSD', open, pips);
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', sl(3)));
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', sl(6)));
      await stopAt('EURUSD', ticket, sl(-4));
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', sl(9)));
      await stopAt('EURUSD', ticket, sl(-1));
      // Back down: the stop stays where it is.
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', sl(4)));
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', sl(12)));
      await stopAt('EURUSD', ticket, sl(2));
      const { events } = await journalEvents(ticket, moves('trailing_stop'), 3);
      expect(events.map((e) => e.sl)).toEqual([sl(-4), sl(-1), sl(2)]);
      expect(events[0]).toMatchObject({ trailActiveAt: sl(6) });
      expect((await held(ticket))?.volume).toBe(0.1);
      await driver.setQuote(manager.id, 'EURUSD', base('EURUSD'));
    }, 90_000);

    test('breakeven trigger: the stop moves once to the entry plus the offset, and never again', async () => {
      const open = base('GBPUSD').bid;
      const at = (pips: number) => away('GBPUSD', open, -pips);
      const ticket = ticketOf(
        await ctx.run(manager, {
          action: 'sell',
          symbol: 'GBPUSD',
          volume: 0.2,
          sl: away('GBPUSD', open, 30),
          breakevenTriggerPips: 10,
          breakevenOffsetPips: 2,
        }),
      );
      await driver.setQuote(manager.id, 'GBPUSD', askAt('GBPUSD', at(5)));
      await driver.setQuote(manager.id, 'GBPUSD', askAt('GBPUSD', at(10)));
      await stopAt('GBPUSD', ticket, at(2));
      await driver.setQuote(manager.id, 'GBPUSD', askAt('GBPUSD', at(25)));
      await driver.setQuote(manager.id, 'GBPUSD', askAt('GBPUSD', at(6)));
      await driver.setQuote(manager.id, 'GBPUSD', askAt('GBPUSD', at(11)));
      const { events, trade } = await journalEvents(ticket, moves('breakeven_trigger'), 1);
      expect(events.map((e) => e.sl)).toEqual([at(2)]);
      expect(trade.events.filter((e) => e.type === 'position_modified')).toHaveLength(1);
      expect((await held(ticket))?.sl).toBeCloseTo(at(2), 5);
      await driver.setQuote(manager.id, 'GBPUSD', base('GBPUSD'));
    }, 90_000);

    test('take-profit levels: each level closes its share once, nearest first; the final target stays at the broker', async () => {
      const open = base('AUDUSD').ask;
      const up = (pips: number) => away('AUDUSD', open, pips);
      const ticket = ticketOf(
        await ctx.run(manager, {
          action: 'buy',
          symbol: 'AUDUSD',
          volume: 0.3,
          sl: up(-30),
          tp: up(50),
          takeProfits: [
            { tpPips: 20, closePercent: 30 },
            { tpPips: 10, closePercent: 50 },
          ],
        }),
      );
      await driver.setQuote(manager.id, 'AUDUSD', bidAt('AUDUSD', up(10)));
      await volumeAt(ticket, 0.15);
      await driver.setQuote(manager.id, 'AUDUSD', bidAt('AUDUSD', up(12)));
      await driver.setQuote(manager.id, 'AUDUSD', bidAt('AUDUSD', up(20)));
      const after = await volumeAt(ticket, 0.06);
      expect(after.tp).toBeCloseTo(up(50), 5);
      await driver.setQuote(manager.id, 'AUDUSD', bidAt('AUDUSD', up(25)));
      await driver.setQuote(manager.id, 'AUDUSD', bidAt('AUDUSD', up(15)));
      const { events } = await journalEvents(ticket, (e) => e.type === 'position_closed' && e.cause === 'take_profit_level', 2);
      expect(events.map((e) => e.volume)).toEqual([0.15, 0.09]);
      expect((await held(ticket))?.volume).toBeCloseTo(0.06, 9);
      await driver.setQuote(manager.id, 'AUDUSD', base('AUDUSD'));
    }, 90_000);

    test('closeOpposite (reverse): the sells of the symbol are closed first, then the buy opens', async () => {
      const first = ticketOf(await ctx.run(manager, { action: 'sell', symbol: 'USDJPY', volume: 0.1 }));
      const second = ticketOf(await ctx.run(manager, { action: 'sell', symbol: 'USDJPY', volume: 0.2 }));
      const buy = ticketOf(await ctx.run(manager, { action: 'buy', symbol: 'USDJPY', volume: 0.1, closeOpposite: true }));
      const positions = (await driver.broker(manager.id)).positions.filter((p) => p.symbol === 'USDJPY');
      expect(positions.map((p) => ({ ticket: p.ticket, side: p.side }))).toEqual([{ ticket: buy, side: 'buy' }]);
      const trades = await waitFor(
        'the journal to show both sells closed by close_opposite and the buy open',
        async () => {
          const all = await journalTrades(ctx.redis(), manager.id);
          const pick = (t: string) => all.find((x) => x.tradeId === t);
          const [a, b, c] = [pick(first), pick(second), pick(buy)];
          return a?.status === 'closed' && b?.status === 'closed' && c?.status === 'open' ? ([a, b, c] as TradeRecord[]) : undefined;
        },
        20_000,
        100,
      );
      expect(trades.slice(0, 2).map((t) => t.closeCause)).toEqual(['close_opposite', 'close_opposite']);
      for (const closed of trades.slice(0, 2)) expect(Date.parse(closed.closedAt!)).toBeLessThanOrEqual(Date.parse(trades[2]!.openedAt!));
      // Nothing on the other side: the next one simply opens.
      const again = ticketOf(await ctx.run(manager, { action: 'buy', symbol: 'USDJPY', volume: 0.1, closeOpposite: true }));
      expect((await driver.broker(manager.id)).positions.filter((p) => p.symbol === 'USDJPY').map((p) => p.ticket)).toEqual([buy, again]);
    }, 90_000);

    test('maxSpreadPips: an entry is refused spread_too_wide when the spread is wider, placed when it is not', async () => {
      const wide = { bid: 2350, ask: 2350.5 }; // 5 pips of XAUUSD
      await driver.setQuote(manager.id, 'XAUUSD', wide);
      const entriesBefore = (await driver.broker(manager.id)).entries.length;
      const refused = await ctx.run(manager, { action: 'buy', symbol: 'XAUUSD', volume: 0.1, maxSpreadPips: 3 });
      expect(refused.outcome).toMatchObject({ outcome: 'rejected', ticket: null });
      expect(refused.outcome.reason).toMatch(/^spread_too_wide/);
      expect((await driver.broker(manager.id)).entries.length).toBe(entriesBefore);
      const placed = ticketOf(await ctx.run(manager, { action: 'buy', symbol: 'XAUUSD', volume: 0.1, maxSpreadPips: 6 }));
      expect((await driver.broker(manager.id)).entries.map((e) => e.ticket)).toContain(placed);
      await driver.setQuote(manager.id, 'XAUUSD', base('XAUUSD'));
    }, 90_000);

    test('a bridge restart in the middle of a trail: the trail goes on from the broker, no move is made twice', async () => {
      const open = base('EURUSD').ask;
      const up = (pips: number) => away('EURUSD', open, pips);
      await driver.setQuote(manager.id, 'EURUSD', base('EURUSD'));
      const ticket = ticketOf(
        await ctx.run(manager, { action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: up(-20), trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 }),
      );
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', up(5)));
      await stopAt('EURUSD', ticket, up(-5));
      await driver.kill(manager.id);
      // The market moves while the bridge is down; the broker's stop protects the position meanwhile.
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', up(8)));
      expect((await held(ticket))?.sl).toBeCloseTo(up(-5), 5);
      await driver.start(manager, ctx.url());
      await stopAt('EURUSD', ticket, up(-2));
      await driver.setQuote(manager.id, 'EURUSD', bidAt('EURUSD', up(11)));
      await stopAt('EURUSD', ticket, up(1));
      const { events } = await journalEvents(ticket, moves('trailing_stop'), 3);
      // One move before the restart, one for the price it missed while down, one after: none twice, none back.
      expect(events.map((e) => e.sl)).toEqual([up(-5), up(-2), up(1)]);
      await driver.setQuote(manager.id, 'EURUSD', base('EURUSD'));
    }, 120_000);
  });
}
