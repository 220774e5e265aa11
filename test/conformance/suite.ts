import { Redis } from 'ioredis';
import { RedisRegistry } from '../../src/registry/registry';
import { temporalClient, workflowResult, type TemporalView } from '../helpers/temporal';
import { importRegistry, writeRegistry } from '../e2e/support';
import { testEnv } from '../../support/env';
import { ensureBuilt, httpGet, serviceEnv, startIngressProcess, startWorkerProcess, type IngressProcess, type ServiceProcess } from '../../support/processes';
import { tradeEventCases } from './trade-cases';
import { managementCases } from './management-cases';
import { guardCases } from './guard-cases';
import { restartCases } from './restart-cases';
import {
  brokerCode as brokerCodeOf,
  caseContext,
  conformanceAccounts,
  conformanceRegistry,
  done,
  filled,
  order,
  position,
  refused,
  type Body,
  type Run,
} from './case-context';
import { CONFORMANCE_SYMBOLS, type BridgeUnderTest, type BrokerEntry, type BrokerView, type RefusalKind } from './driver';
import { away, baseQuote } from './market';

/** The bridges' long-poll wait: the paper bridge's default, the MT5 bridge's --wait-ms (mt5-driver.ts). */
const BRIDGE_POLL_WAIT_MS = 20_000;

/**
 * The bridge conformance suite (docs/bridge-conformance.md): what every bridge implementation must do, checked against
 * the real service (ingress and worker processes, the run's Temporal and Redis) with the bridge as its own process.
 * A bridge file calls `bridgeConformance(() => driver)`; the driver starts the bridge and reads its broker side.
 *
 * Accounts: `main` runs the 17 actions one after another (its book carries over between tests, in file order); the
 * others are their cases' own: `guard`, `risky` and `stopper` the risk rules' (guard-cases.ts), `crash` and `late` the
 * restarts' (restart-cases.ts), `trader` and `tstop` the trade events' (trade-cases.ts, protocol 1.5), `manager` trade
 * management's (management-cases.ts, protocol 1.6).
 */

const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '.000Z');

export function bridgeConformance(makeDriver: () => BridgeUnderTest): void {
  const driver = makeDriver();
  const setup = conformanceAccounts(driver);
  const { owner, token, accounts: a } = setup;
  const { main, guard, risky } = a;

  let ingress: IngressProcess | undefined;
  let worker: ServiceProcess | undefined;
  let temporal: TemporalView | undefined;
  let redis: Redis | undefined;
  let removeRegistry: (() => void) | undefined;
  const url = () => ingress!.url;
  const ctx = caseContext({ driver, owner, secret: setup.secret, url, redis: () => redis!, temporal: () => temporal! });
  const { runAll, run } = ctx;
  const brokerCode = (kind: RefusalKind) => brokerCodeOf(driver, kind);
  const view = (acc: { id: string }) => driver.broker(acc.id);
  const entriesOf = (v: BrokerView, tickets: string[]): BrokerEntry[] => v.entries.filter((e) => tickets.includes(e.ticket));

  /** What the main account holds between tests. */
  const book: Record<string, string> = {};

  describe(`bridge conformance: ${driver.name}`, () => {
    beforeAll(async () => {
      ensureBuilt();
      const registry = writeRegistry(conformanceRegistry(setup), 'conformance');
      removeRegistry = () => registry.remove();
      expect(await importRegistry(registry.file)).toEqual({ accounts: 9, secrets: 1, tokens: 1 });
      const env = serviceEnv();
      [worker, ingress] = await Promise.all([startWorkerProcess(env), startIngressProcess(env)]);
      temporal = await temporalClient();
      redis = new Redis(testEnv().redisUrl);
      await Promise.all([main, guard, risky].map((acc) => driver.start(acc, url())));
      for (const acc of [main, guard, risky]) for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(acc.id, s.name, baseQuote(s.name));
    }, 120_000);

    afterAll(async () => {
      await driver.cleanup();
      await ingress?.stop();
      await worker?.stop();
      await temporal?.close();
      redis?.disconnect();
      removeRegistry?.();
    }, 60_000);

    test("when the bridge says hello, then the account takes its version and its symbols with each one's volume step, minimum and maximum", async () => {
      const registry = new RedisRegistry(redis!);
      expect((await registry.getAccount(main.id))?.bridgeVersion).toBe(driver.bridgeVersion);
      const rules = await registry.volumeRules(CONFORMANCE_SYMBOLS.map((s) => ({ accountId: main.id, symbols: [s.name] })));
      expect(rules).toEqual(CONFORMANCE_SYMBOLS.map((s) => ({ step: s.volumeStep, min: s.volumeMin, max: s.volumeMax })));
    });

    test('when buy and sell arrive during the long-poll, then they fill at once at the ask / bid with SL/TP from the fill price, and the poll shows the broker ticket', async () => {
      const [buy, sell] = await runAll(main, [
        { action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 100, tpPips: 150 },
        { action: 'sell', symbol: 'USDJPY', volume: 0.2, slPips: 100, tpPips: 150 },
      ]);
      const b = filled(buy!);
      const s = filled(sell!);
      // The bridge waits in its long-poll (20 s): the command reached it by the wake-up, not at the poll's end, so the
      // outcome came in the poll's first half, however slow the machine.
      console.log(`buy settled ${buy!.ms} ms after its 202`);
      expect(buy!.ms).toBeLessThan(BRIDGE_POLL_WAIT_MS / 2);
      const v = await view(main);
      const eur = baseQuote('EURUSD');
      const jpy = baseQuote('USDJPY');
      expect(position(v, b)).toEqual({
        ticket: b,
        symbol: 'EURUSD',
        side: 'buy',
        volume: 0.1,
        openPrice: eur.ask,
        sl: away('EURUSD', eur.ask, -100),
        tp: away('EURUSD', eur.ask, 150),
      });
      expect(position(v, s)).toEqual({
        ticket: s,
        symbol: 'USDJPY',
        side: 'sell',
        volume: 0.2,
        openPrice: jpy.bid,
        sl: away('USDJPY', jpy.bid, 100),
        tp: away('USDJPY', jpy.bid, -150),
      });
      await workflowResult(temporal!.client, `signal/${buy!.signalId}`);
      const polled = await httpGet(`${url()}/v1/signals/${buy!.signalId}`, { authorization: `Bearer ${token}` });
      expect(polled.body).toMatchObject({ status: 'reported', reported: 1, accounts: [{ accountId: main.id, outcome: 'filled', ticket: b }] });
      book.buyEURUSD = b;
      book.sellUSDJPY = s;
    }, 60_000);

    test('when limit and stop entries arrive, then the broker holds the pending orders (ticket = the order) with SL/TP from the entry price', async () => {
      const eur = baseQuote('EURUSD');
      const gbp = baseQuote('GBPUSD');
      const expected = [
        { action: 'buy_limit', symbol: 'EURUSD', side: 'buy', type: 'limit', volume: 0.1, price: away('EURUSD', eur.bid, -50), sl: -30, tp: 60 },
        { action: 'sell_limit', symbol: 'EURUSD', side: 'sell', type: 'limit', volume: 0.2, price: away('EURUSD', eur.ask, 50), sl: 30, tp: -60 },
        { action: 'buy_stop', symbol: 'GBPUSD', side: 'buy', type: 'stop', volume: 0.3, price: away('GBPUSD', gbp.ask, 50), sl: -40, tp: 80 },
        { action: 'sell_stop', symbol: 'GBPUSD', side: 'sell', type: 'stop', volume: 0.4, price: away('GBPUSD', gbp.bid, -50), sl: 40, tp: -80 },
      ] as const;
      const runs = await runAll(
        main,
        expected.map((e) => ({ action: e.action, symbol: e.symbol, volume: e.volume, price: e.price, slPips: Math.abs(e.sl), tpPips: Math.abs(e.tp) })),
      );
      const v = await view(main);
      const tickets = runs.map((r, i) => {
        const t = filled(r);
        const e = expected[i]!;
        expect(order(v, t)).toEqual({
          ticket: t,
          symbol: e.symbol,
          side: e.side,
          type: e.type,
          volume: e.volume,
          price: e.price,
          stopLimitPrice: null,
          sl: away(e.symbol, e.price, e.sl),
          tp: away(e.symbol, e.price, e.tp),
          expiry: null,
        });
        expect(v.positions.map((p) => p.ticket)).not.toContain(t);
        return t;
      });
      expect(new Set(tickets).size).toBe(4);
      [book.buyLimit, book.sellLimit, book.buyStop, book.sellStop] = tickets as [string, string, string, string];
    }, 60_000);

    test('when stop-limit entries arrive, then the broker holds stop-limit orders with the trigger and the limit price', async () => {
      const eur = baseQuote('EURUSD');
      const gbp = baseQuote('GBPUSD');
      const buy = { price: away('EURUSD', eur.ask, 50), trigger: away('EURUSD', eur.ask, 60) };
      const sell = { price: away('GBPUSD', gbp.bid, -50), trigger: away('GBPUSD', gbp.bid, -60) };
      const [b, s] = await runAll(main, [
        { action: 'buy_stop_limit', symbol: 'EURUSD', volume: 0.1, price: buy.price, stopLimitPrice: buy.trigger, slPips: 25, tpPips: 50 },
        { action: 'sell_stop_limit', symbol: 'GBPUSD', volume: 0.2, price: sell.price, stopLimitPrice: sell.trigger, sl: away('GBPUSD', sell.price, 25) },
      ]);
      const v = await view(main);
      const bt = filled(b!);
      const st = filled(s!);
      expect(order(v, bt)).toEqual({
        ticket: bt,
        symbol: 'EURUSD',
        side: 'buy',
        type: 'stop_limit',
        volume: 0.1,
        price: buy.price,
        stopLimitPrice: buy.trigger,
        sl: away('EURUSD', buy.price, -25),
        tp: away('EURUSD', buy.price, 50),
        expiry: null,
      });
      expect(order(v, st)).toEqual({
        ticket: st,
        symbol: 'GBPUSD',
        side: 'sell',
        type: 'stop_limit',
        volume: 0.2,
        price: sell.price,
        stopLimitPrice: sell.trigger,
        sl: away('GBPUSD', sell.price, 25),
        tp: null,
        expiry: null,
      });
      book.buyStopLimit = bt;
      book.sellStopLimit = st;
    }, 60_000);

    test('when modify_pending and modify_pending_expiry arrive, then the orders change on the broker and keep what was not given', async () => {
      const eur = baseQuote('EURUSD');
      const before = await view(main);
      const limit = order(before, book.buyLimit!);
      const sellLimit = order(before, book.sellLimit!);
      const price = away('EURUSD', eur.ask, 65);
      const trigger = away('EURUSD', eur.ask, 70);
      const expiry = inHours(1);
      const sellExpiry = inHours(2);
      const newLimit = away('EURUSD', eur.bid, -55);
      const runs = await runAll(main, [
        {
          action: 'modify_pending',
          orderId: book.buyStopLimit,
          price,
          stopLimitPrice: trigger,
          sl: away('EURUSD', price, -20),
          tp: away('EURUSD', price, 40),
          expiry,
        },
        { action: 'modify_pending', orderId: book.buyLimit, price: newLimit },
        { action: 'modify_pending_expiry', orderId: book.sellLimit, expiry: sellExpiry },
      ]);
      done(runs[0]!, book.buyStopLimit);
      done(runs[1]!, book.buyLimit);
      done(runs[2]!, book.sellLimit);
      const v = await view(main);
      expect(order(v, book.buyStopLimit!)).toMatchObject({
        price,
        stopLimitPrice: trigger,
        sl: away('EURUSD', price, -20),
        tp: away('EURUSD', price, 40),
        expiry,
      });
      expect(order(v, book.buyLimit!)).toMatchObject({ price: newLimit, sl: limit.sl, tp: limit.tp, expiry: null });
      expect(order(v, book.sellLimit!)).toMatchObject({ price: sellLimit.price, sl: sellLimit.sl, tp: sellLimit.tp, expiry: sellExpiry });
    }, 60_000);

    test('when cancel_pending arrives, then that order is gone from the broker and the others stay', async () => {
      done(await run(main, { action: 'cancel_pending', orderId: book.buyStop }), book.buyStop);
      const v = await view(main);
      expect(v.orders.map((o) => o.ticket)).not.toContain(book.buyStop);
      expect(v.orders.map((o) => o.ticket)).toContain(book.sellStop);
    }, 60_000);

    test('when modify_sl and modify_tp arrive, then the position gets the one level and keeps the other; the same level again is done (the broker\'s "no changes" is no refusal)', async () => {
      const pos = position(await view(main), book.buyEURUSD!);
      const sl = away('EURUSD', pos.openPrice, -80);
      const tp = away('EURUSD', pos.openPrice, 120);
      const [a, b, same] = await runAll(main, [
        { action: 'modify_sl', positionId: book.buyEURUSD, sl },
        { action: 'modify_tp', positionId: book.buyEURUSD, tp },
        { action: 'modify_tp', positionId: book.buyEURUSD, tp },
      ]);
      done(a!, book.buyEURUSD);
      done(b!, book.buyEURUSD);
      done(same!, book.buyEURUSD);
      expect(position(await view(main), book.buyEURUSD!)).toMatchObject({ sl, tp });
    }, 60_000);

    test("when partial_close and close by positionId arrive, then part of one position and all of another are closed; an off-step partial volume is the broker's bad volume", async () => {
      const [part, offStep, close] = await runAll(main, [
        { action: 'partial_close', positionId: book.buyEURUSD, partialVolume: 0.04 },
        { action: 'partial_close', positionId: book.buyEURUSD, partialVolume: 0.015 },
        { action: 'close', positionId: book.sellUSDJPY },
      ]);
      done(part!, book.buyEURUSD);
      refused(offStep!, brokerCode('badVolume'));
      done(close!, book.sellUSDJPY);
      const v = await view(main);
      expect(position(v, book.buyEURUSD!).volume).toBe(0.06);
      expect(v.positions.map((p) => p.ticket)).not.toContain(book.sellUSDJPY);
    }, 60_000);

    test('when a close filters by symbol and side, then only the matching positions are closed', async () => {
      const [buy, sell] = await runAll(main, [
        { action: 'buy', symbol: 'XAUUSD', volume: 0.01 },
        { action: 'sell', symbol: 'XAUUSD', volume: 0.02 },
      ]);
      const bt = filled(buy!);
      const st = filled(sell!);
      done(await run(main, { action: 'close', symbol: 'XAUUSD', side: 'sell' }), st);
      const tickets = (await view(main)).positions.map((p) => p.ticket);
      expect(tickets).toContain(bt);
      expect(tickets).not.toContain(st);
      book.buyXAUUSD = bt;
    }, 60_000);

    test("when breakeven arrives for a position not in profit, then it is the broker's invalid stops; once in profit, the SL moves to the entry; a close by pnl picks loss, then profit", async () => {
      const q = baseQuote('AUDUSD');
      const [buy, sell] = await runAll(main, [
        { action: 'buy', symbol: 'AUDUSD', volume: 0.01 },
        { action: 'sell', symbol: 'AUDUSD', volume: 0.02 },
      ]);
      const bt = filled(buy!);
      const st = filled(sell!);
      refused(await run(main, { action: 'breakeven', positionId: bt }), brokerCode('badStops'));
      // The market rises 20 pips: the buy is in profit, the sell in loss.
      await driver.setQuote(main.id, 'AUDUSD', { bid: away('AUDUSD', q.bid, 20), ask: away('AUDUSD', q.ask, 20) });
      const [be, loss, profit] = await runAll(main, [
        { action: 'breakeven', positionId: bt },
        { action: 'close', symbol: 'AUDUSD', pnl: 'loss' },
        { action: 'close', symbol: 'AUDUSD', pnl: 'profit' },
      ]);
      done(be!, bt);
      done(loss!, st);
      done(profit!, bt);
      expect((await view(main)).positions.filter((p) => p.symbol === 'AUDUSD')).toEqual([]);
      await driver.setQuote(main.id, 'AUDUSD', q);
    }, 60_000);

    test("when the broker refuses, then the outcome is rejected with the broker's own code and nothing happened on the broker side", async () => {
      const eur = baseQuote('EURUSD');
      const limit = away('EURUSD', eur.bid, -50);
      await driver.setMarketOpen(main.id, 'US30', false);
      const before = await view(main);
      const cases: [Body, RefusalKind][] = [
        [{ action: 'sell', symbol: 'EURUSD', volume: 0.1, tp: away('EURUSD', eur.ask, 50) }, 'badStops'],
        [{ action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: limit, sl: away('EURUSD', limit, 10) }, 'badStops'],
        [{ action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: away('EURUSD', eur.ask, 20) }, 'badPrice'],
        [{ action: 'buy', symbol: 'FOOBAR', volume: 0.1 }, 'unknownSymbol'],
        [{ action: 'close', positionId: '99999999' }, 'noPosition'],
        [{ action: 'modify_sl', positionId: '99999999', sl: 1.0 }, 'noPosition'],
        [{ action: 'breakeven', positionId: '99999999' }, 'noPosition'],
        [{ action: 'partial_close', positionId: '99999999', partialVolume: 0.01 }, 'noPosition'],
        [{ action: 'cancel_pending', orderId: '99999999' }, 'noOrder'],
        // A position's ticket is not an order.
        [{ action: 'cancel_pending', orderId: book.buyEURUSD }, 'noOrder'],
        [{ action: 'modify_pending_expiry', orderId: '99999999', expiry: inHours(1) }, 'noOrder'],
        // Above the symbol's maximum: the service does not clip, the broker refuses.
        [{ action: 'buy', symbol: 'XAUUSD', volume: 60 }, 'badVolume'],
        [{ action: 'buy', symbol: 'US30', volume: 0.1 }, 'marketClosed'],
        // 50 lots of gold need 117 515 USD of margin at 1:100; the account has 100 000.
        [{ action: 'buy', symbol: 'XAUUSD', volume: 50 }, 'noMoney'],
      ];
      let runs: Run[];
      try {
        runs = await runAll(
          main,
          cases.map(([b]) => b),
        );
      } finally {
        await driver.setMarketOpen(main.id, 'US30', true);
      }
      const got = runs.map((r, i) => ({
        action: cases[i]![0].action,
        kind: cases[i]![1],
        outcome: r.outcome.outcome,
        reason: r.outcome.reason?.split(' ')[0],
      }));
      expect(got).toEqual(cases.map(([b, kind]) => ({ action: b.action, kind, outcome: 'rejected', reason: `broker:${driver.codes[kind]}` })));
      const after = await view(main);
      expect(after.entries.length).toBe(before.entries.length);
      expect(after.positions).toEqual(before.positions);
      expect(after.orders).toEqual(before.orders);
    }, 90_000);

    test("when an entry's volume is off the symbol's step from hello, then the service sizes it down to the step before the broker sees it", async () => {
      const [eur, us30] = await runAll(main, [
        { action: 'buy', symbol: 'EURUSD', volume: 0.015 },
        { action: 'buy', symbol: 'US30', volume: 0.15 },
      ]);
      const v = await view(main);
      expect(position(v, filled(eur!)).volume).toBe(0.01);
      expect(position(v, filled(us30!)).volume).toBe(0.1);
    }, 60_000);

    test('when five entries are accepted back to back, then the broker receives them in acceptance (seq) order', async () => {
      const volumes = [0.01, 0.02, 0.03, 0.04, 0.05];
      const runs = await runAll(
        main,
        volumes.map((volume) => ({ action: 'buy', symbol: 'USDJPY', volume })),
      );
      const tickets = runs.map(filled);
      expect(entriesOf(await view(main), tickets).map((e) => e.volume)).toEqual(volumes);
    }, 60_000);

    test('when close_all arrives, then every position is closed and every pending order cancelled', async () => {
      const before = await view(main);
      expect(before.positions.length).toBeGreaterThanOrEqual(2);
      expect(before.orders.length).toBeGreaterThanOrEqual(4);
      done(await run(main, { action: 'close_all' }));
      const after = await view(main);
      expect({ positions: after.positions, orders: after.orders }).toEqual({ positions: [], orders: [] });
    }, 60_000);

    guardCases(ctx, a);
    restartCases(ctx, a);
    tradeEventCases({ driver, url, redis: () => redis!, run, trader: a.trader, tstop: a.tstop });
    managementCases({ driver, url, redis: () => redis!, run, manager: a.manager });
  });
}
