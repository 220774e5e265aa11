import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisRegistry } from '../../src/registry/registry';
import { RedisFigures } from '../../src/bridge/figures';
import { RedisStopOuts } from '../../src/bridge/stop-outs';
import { OwnerStore } from '../../src/owners/owner-store';
import type { StopOutEvent } from '../../src/domain/bridge-protocol';
import { newCredential } from '../../src/registry/credentials';
import { isOpening, type Action } from '../../src/domain/actions';
import type { AccountOutcome } from '../../src/domain/outcome';
import { commandIdOf, describeOrUndefined, importRegistry, temporalAccess, workflowResult, writeRegistry, type TemporalAccess } from '../e2e/support';
import { testEnv } from '../../support/env';
import { waitFor } from '../../support/infra';
import {
  ensureBuilt,
  httpGet,
  httpPost,
  serviceEnv,
  startIngressProcess,
  startWorkerProcess,
  type IngressProcess,
  type ServiceProcess,
} from '../../support/processes';
import { tradeEventCases } from './trade-cases';
import { managementCases } from './management-cases';
import { CONFORMANCE_SYMBOLS, type BridgeUnderTest, type BrokerEntry, type BrokerView, type ConformanceAccount, type RefusalKind } from './driver';
import { away, baseQuote } from './market';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * The bridge conformance suite (docs/bridge-conformance.md): what every bridge implementation must do, checked against
 * the real service (ingress and worker processes, the run's Temporal and Redis) with the bridge as its own process.
 * A bridge file calls `bridgeConformance(() => driver)`; the driver starts the bridge and reads its broker side.
 *
 * Accounts: `main` runs the 17 actions one after another (its book carries over between tests, in file order);
 * `guard` has a max-open-positions rule; `risky` sizes by risk and has a daily loss limit; `crash` is killed between fill and report and while idle; `late` dies
 * holding a command and comes back after the command's expiresAt; `stopper` has the copy-trading stop-out at 5 % (protocol 1.4);
 * `trader` and `tstop` (stop-out at 5 %) are the trade-event cases' (trade-cases.ts, protocol 1.5); `manager` the
 * trade-management cases' (management-cases.ts, protocol 1.6).
 */

const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '.000Z');

type Body = Record<string, unknown> & { action: Action };

interface Run {
  signalId: string;
  commandId: string;
  outcome: AccountOutcome;
  /** Milliseconds from the 202 to the account workflow's end. */
  ms: number;
}

export function bridgeConformance(makeDriver: () => BridgeUnderTest): void {
  const driver = makeDriver();
  const tag = randomBytes(4).toString('hex');
  const owner = `conf-owner-${tag}`;
  const secret = newCredential('whsec');
  const token = newCredential('tok');
  const account = (name: string): ConformanceAccount => ({ id: `conf-${tag}-${name}`, platform: driver.platform, bridgeToken: newCredential('brg') });
  const main = account('main');
  const guard = account('guard');
  const crash = account('crash');
  const late = account('late');
  const risky = account('risky');
  const stopper = account('stopper');
  const trader = account('trader');
  const tstop = account('tstop');
  const manager = account('manager');
  const LATE_AGE_MS = 3_000;
  const all = [main, guard, crash, late, risky, stopper, trader, tstop, manager];

  let ingress: IngressProcess | undefined;
  let worker: ServiceProcess | undefined;
  let temporal: TemporalAccess | undefined;
  let redis: Redis | undefined;
  let removeRegistry: (() => void) | undefined;
  const url = () => ingress!.url;

  async function submit(acc: ConformanceAccount, body: Body): Promise<{ signalId: string; at: number }> {
    const headers: Record<string, string> = isOpening(body.action) ? {} : { 'x-idempotency-key': `k-${randomBytes(8).toString('hex')}` };
    const res = await httpPost(`${url()}/webhook/custom/${acc.id}`, { secret, ...body }, headers);
    if (res.status !== 202) throw new Error(`${body.action} on ${acc.id}: ${res.status} ${res.text}`);
    return { signalId: res.body.signalId as string, at: Date.now() };
  }

  async function settle(acc: ConformanceAccount, s: { signalId: string; at: number }, timeoutMs = 20_000): Promise<Run> {
    const commandId = commandIdOf(s.signalId, acc.id);
    const outcome = await workflowResult<AccountOutcome>(temporal!.client, commandId, timeoutMs);
    return { signalId: s.signalId, commandId, outcome, ms: Date.now() - s.at };
  }

  /** Submits back to back (they execute in this acceptance order), then waits for every outcome. */
  async function runAll(acc: ConformanceAccount, bodies: Body[]): Promise<Run[]> {
    const submitted = [];
    for (const b of bodies) submitted.push(await submit(acc, b));
    return Promise.all(submitted.map((s) => settle(acc, s)));
  }
  const run = async (acc: ConformanceAccount, body: Body) => (await runAll(acc, [body]))[0]!;

  const filled = (r: Run): string => {
    expect(r.outcome).toMatchObject({ outcome: 'filled', ticket: expect.stringMatching(/^\d+$/), reason: null });
    return r.outcome.ticket!;
  };
  const done = (r: Run, ticket?: string | null) => {
    expect(r.outcome).toMatchObject({ outcome: 'done', reason: null, ...(ticket === undefined ? {} : { ticket }) });
  };
  const refused = (r: Run, reasonStart: string) => {
    expect({ outcome: r.outcome.outcome, reason: r.outcome.reason?.slice(0, reasonStart.length) }).toEqual({ outcome: 'rejected', reason: reasonStart });
  };
  const brokerCode = (kind: RefusalKind) => `broker:${driver.codes[kind]} `;
  const view = (acc: ConformanceAccount) => driver.broker(acc.id);
  const position = (v: BrokerView, ticket: string) => {
    const p = v.positions.find((x) => x.ticket === ticket);
    if (!p) throw new Error(`no position ${ticket} on the broker side: ${JSON.stringify(v.native)}`);
    return p;
  };
  const order = (v: BrokerView, ticket: string) => {
    const o = v.orders.find((x) => x.ticket === ticket);
    if (!o) throw new Error(`no order ${ticket} on the broker side: ${JSON.stringify(v.native)}`);
    return o;
  };
  const entriesOf = (v: BrokerView, tickets: string[]): BrokerEntry[] => v.entries.filter((e) => tickets.includes(e.ticket));

  /** What the main account holds between tests. */
  const book: Record<string, string> = {};

  describe(`bridge conformance: ${driver.name}`, () => {
    beforeAll(async () => {
      ensureBuilt();
      const doc = {
        accounts: [
          ...[main, crash, trader, manager].map((a) => ({ id: a.id, owner, platform: a.platform, bridgeToken: a.bridgeToken })),
          { id: guard.id, owner, platform: guard.platform, bridgeToken: guard.bridgeToken, risk: { maxOpenPositions: 1 } },
          { id: late.id, owner, platform: late.platform, bridgeToken: late.bridgeToken, risk: { maxSignalAgeMs: LATE_AGE_MS } },
          {
            id: risky.id,
            owner,
            platform: risky.platform,
            bridgeToken: risky.bridgeToken,
            risk: { sizing: { mode: 'risk_percent', of: 'equity', percent: 1 }, lossGuards: { dailyLossAmount: 500, timezone: 'UTC' } },
          },
          {
            id: stopper.id,
            owner,
            platform: stopper.platform,
            bridgeToken: stopper.bridgeToken,
            risk: { lossGuards: { maxDrawdownPercent: 5, stopOut: true, timezone: 'UTC' } },
          },
          {
            id: tstop.id,
            owner,
            platform: tstop.platform,
            bridgeToken: tstop.bridgeToken,
            risk: { lossGuards: { maxDrawdownPercent: 5, stopOut: true, timezone: 'UTC' } },
          },
        ],
        secrets: [{ secret, owner, accounts: all.map((a) => a.id) }],
        tokens: [{ token, accounts: all.map((a) => a.id), suspendedUntil: null }],
      };
      const registry = writeRegistry(doc, 'conformance');
      removeRegistry = () => registry.remove();
      expect(await importRegistry(registry.file)).toEqual({ accounts: 9, secrets: 1, tokens: 1 });
      const env = serviceEnv();
      [worker, ingress] = await Promise.all([startWorkerProcess(env), startIngressProcess(env)]);
      temporal = await temporalAccess();
      redis = new Redis(testEnv().redisUrl);
      await Promise.all([main, guard, risky].map((a) => driver.start(a, url())));
      for (const a of [main, guard, risky]) for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(a.id, s.name, baseQuote(s.name));
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
      // The bridge waits in its long-poll: a command reaches it in well under the poll's wait.
      expect(buy!.ms).toBeLessThan(5_000);
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

    test('when the owner limits open positions, then the bridge refuses an entry beyond the limit with risk_max_open_positions', async () => {
      const [first, second] = await runAll(guard, [
        { action: 'buy', symbol: 'EURUSD', volume: 0.01 },
        { action: 'sell', symbol: 'GBPUSD', volume: 0.01 },
      ]);
      const t = filled(first!);
      expect(second!.outcome).toMatchObject({ outcome: 'rejected', reason: 'risk_max_open_positions' });
      expect((await view(guard)).entries.map((e) => e.ticket)).toEqual([t]);
    }, 60_000);

    test("when the owner sizes by risk and has a daily loss limit, then the bridge places the lots the formula gives on its live account, refuses entries once equity is that far below the day's opening, and still runs exits", async () => {
      // 1 % of equity 100,000 USD = 1,000 USD at risk. EURUSD: a tick (0.00001) of a lot (100,000 EUR) is 1 USD; the
      // stop 20 pips = 0.0020 = 200 ticks away costs 200 USD a lot; 1,000 / 200 = 5.00 lots, not the signal's 0.3.
      // A live market keeps quoting: the figures rest on prices within RISK_FIGURES_MAX_AGE_MS, not the ones set at start.
      for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(risky.id, s.name, baseQuote(s.name));
      const t = filled(await run(risky, { action: 'buy', symbol: 'EURUSD', volume: 0.3, slPips: 20 }));
      expect(position(await view(risky), t).volume).toBe(5);
      // The day opened at 100,000 (read before that buy). At the bid 1.08400 the 5 lots bought at the ask 1.08510 are
      // 0.0011 × 500,000 = 550 USD down, past the 500 USD limit (their stop, 1.08310, is not reached).
      await driver.setQuote(risky.id, 'EURUSD', { bid: 1.084, ask: 1.0841 });
      refused(await run(risky, { action: 'sell', symbol: 'USDJPY', volume: 0.3, slPips: 20 }), 'risk_daily_loss_limit');
      done(await run(risky, { action: 'close_all' }));
      const after = await view(risky);
      expect({ positions: after.positions, entries: after.entries.map((e) => e.ticket) }).toEqual({ positions: [], entries: [t] });
      // The account's figures come with the reports (protocol 1.2): once everything is closed, equity is the balance and
      // no margin is used; the balance lost about the 550 USD the 5 lots were down (less any commission).
      const figures = new RedisFigures(redis!);
      const latest = await waitFor(
        "the account's figures after close_all",
        async () => {
          const l = await figures.latest(risky.id);
          return l && l.figures.margin === 0 && l.figures.balance < 100_000 ? l : undefined;
        },
        20_000,
      );
      const { balance } = latest.figures;
      expect(latest.figures).toEqual({ balance, equity: balance, margin: 0, freeMargin: balance, currency: 'USD' });
      expect(balance).toBeGreaterThan(99_000);
    }, 60_000);

    test('when equity falls past the stop-out limit, then the bridge closes every position and cancels every pending order once, the service records it once, and entries are refused risk_max_drawdown', async () => {
      await driver.start(stopper, url());
      for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(stopper.id, s.name, baseQuote(s.name));
      const [eur, gbp, limit] = await runAll(stopper, [
        { action: 'buy', symbol: 'EURUSD', volume: 5 },
        { action: 'buy', symbol: 'GBPUSD', volume: 5 },
        { action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.05 },
      ]);
      const positions = [filled(eur!), filled(gbp!)];
      const order = filled(limit!);
      expect((await view(stopper)).positions).toHaveLength(2);
      // 5 lots bought at the ask 1.08510, now bid 1.07500: 0.0101 × 500,000 = 5,050 USD, with the spreads past 5 % of 100,000.
      await driver.setQuote(stopper.id, 'EURUSD', { bid: 1.075, ask: 1.0751 });
      await waitFor(
        'the stop-out to close everything',
        async () => {
          const v = await view(stopper);
          return v.positions.length === 0 && v.orders.length === 0;
        },
        20_000,
      );
      const stopOuts = new RedisStopOuts(redis!);
      const recorded = await waitFor('the service to record the stop-out', () => stopOuts.latest(stopper.id), 20_000);
      expect(recorded).toMatchObject({ eventId: 'stop-out/initial', closed: 2, cancelled: 1, failed: 0, maxDrawdownPercent: 5, currency: 'USD' });
      const event = JSON.parse((await redis!.hget(bridgeKeys.stopOuts(stopper.id), 'stop-out/initial'))!) as StopOutEvent;
      expect(event.closed.map((t) => t.ticket).sort()).toEqual([...positions].sort());
      expect(event.cancelled.map((t) => t.ticket)).toEqual([order]);
      refused(await run(stopper, { action: 'buy', symbol: 'EURUSD', volume: 0.1 }), 'risk_max_drawdown');
      expect((await view(stopper)).entries.map((e) => e.ticket)).toEqual([...positions, order]);
      expect((await new OwnerStore(redis!).auditLog(owner, 100)).filter((e) => e.action === 'account.stopped_out' && e.accountId === stopper.id)).toHaveLength(
        1,
      );
    }, 90_000);

    test("when the bridge dies between the broker's fill and its report, then after its restart and new hello the command is reported with that fill's ticket and the broker holds one order", async () => {
      await driver.start(crash, url(), { crash: 'after_fill' });
      const s = await submit(crash, { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
      await driver.exited(crash.id, 20_000);
      const afterCrash = await view(crash);
      expect(afterCrash.entries).toHaveLength(1);
      const ticket = afterCrash.entries[0]!.ticket;
      // The service does not know yet: the account workflow waits for the report (dispatched at acceptance, the bridge
      // may have had the command before the workflow started: it starts, and waits).
      const commandId = commandIdOf(s.signalId, crash.id);
      await waitFor(
        'the account workflow to wait for the report',
        async () => (await describeOrUndefined(temporal!.client, commandId))?.status.name === 'RUNNING',
        20_000,
      );

      await driver.start(crash, url());
      const r = await settle(crash, s);
      expect(r.outcome).toMatchObject({ outcome: 'filled', ticket });
      const v = await view(crash);
      expect(v.entries).toHaveLength(1);
      expect(v.positions.map((p) => p.ticket)).toEqual([ticket]);
    }, 90_000);

    test('when the bridge was down while a signal was accepted, then after its hello it gets the command and executes it once', async () => {
      await driver.kill(crash.id);
      const s = await submit(crash, { action: 'sell', symbol: 'GBPUSD', volume: 0.05 });
      await driver.start(crash, url());
      const ticket = filled(await settle(crash, s));
      const v = await view(crash);
      expect(v.entries.map((e) => [e.ticket, e.symbol, e.side, e.volume])).toEqual([
        [expect.any(String), 'EURUSD', 'buy', 0.1],
        [ticket, 'GBPUSD', 'sell', 0.05],
      ]);
    }, 90_000);

    test('when the bridge holds a command past its expiresAt (died before the fill, back after the deadline), then it reports expired and never fills it', async () => {
      await driver.start(late, url(), { crash: 'before_fill' });
      const s = await submit(late, { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
      await driver.exited(late.id, 20_000);
      expect((await view(late)).entries).toEqual([]);
      // The command was handed out, so the service keeps it pending for the bridge; wait until it is stale.
      await waitFor('the command to be past its expiresAt', async () => Date.now() > s.at + LATE_AGE_MS + 500, LATE_AGE_MS + 5_000, 100);
      await driver.start(late, url());
      const r = await settle(late, s);
      expect(r.outcome).toMatchObject({ outcome: 'rejected', ticket: null, reason: 'signal_expired' });
      expect((await view(late)).entries).toEqual([]);
    }, 90_000);

    tradeEventCases({ driver, url, redis: () => redis!, run, trader, tstop });
    managementCases({ driver, url, redis: () => redis!, run, manager });
  });
}
