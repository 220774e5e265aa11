import path from 'node:path';
import type { TradeRecord } from '../../src/domain/trade-events';
import { RedisTradeJournal } from '../../src/trades/journal';
import { pendingInFile } from '../../src/bridge-kit/trade-outbox';
import type { CtraderDouble } from '../helpers/ctrader-double';
import { oneAccountRig, type OneAccountRig } from '../helpers/ctrader-rig';
import { post, pollUntilReported, type Fixture, type Stack } from '../helpers/stack';
import { waitFor } from '../../support/run';

/**
 * The cTrader connector's trade events (protocol 1.5; docs/ctrader-connector.md "Trade events") through the real
 * ingress into the journal in the run's Redis, with the Open API double moving the market as the server would: a
 * take profit and a stop loss hit by a quote, a close by hand in cTrader, a pending order placed and triggered, one
 * expired; a stop loss hit while the connector is down is read back after its restart; no event is recorded twice.
 */

const CTID = 7_100_001;
const BASE = { bid: 1.085, ask: 1.0851 };

describe('the cTrader connector reports what becomes of each trade', () => {
  let rig: OneAccountRig;
  let stack: Stack;
  let fixture: Fixture;
  let double: CtraderDouble;
  let journal: RedisTradeJournal;
  let accountId: string;
  const start = () => rig.start();

  beforeAll(async () => {
    rig = await oneAccountRig('trades', CTID);
    ({ stack, fixture, double, accountId } = rig);
    journal = new RedisTradeJournal(stack.redis);
  }, 120_000);

  afterAll(() => rig?.close());

  beforeEach(() => double.setQuote('EURUSD', BASE.bid, BASE.ask));

  afterEach(() => expect(double.selfViolations).toEqual([]));

  const submit = async (body: Record<string, unknown>) => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, { secret: fixture.secret, ...body });
    expect(res.status).toBe(202);
    const signalId = res.body.signalId as string;
    const outcome = (await pollUntilReported(stack.ingress.url, signalId, fixture.token, 1, 20_000)).accounts[0];
    expect(outcome).toMatchObject({ outcome: 'filled' });
    return { signalId, ticket: Number(outcome.ticket) };
  };
  const trade = async (tradeId: string): Promise<TradeRecord | undefined> => {
    const [raw] = await journal.readRaw(accountId, [tradeId]);
    return raw ? (JSON.parse(raw) as TradeRecord) : undefined;
  };
  const tradeWhen = async (tradeId: string, done: (t: TradeRecord) => boolean, what: string): Promise<TradeRecord> => {
    let last: TradeRecord | undefined;
    try {
      return await waitFor(
        what,
        async () => {
          last = await trade(tradeId);
          return last !== undefined && done(last) ? last : undefined;
        },
        20_000,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; the trade was ${JSON.stringify(last ?? null)}`, { cause: err });
    }
  };
  const eventIds = (t: TradeRecord) => t.events.map((e) => e.eventId);

  test("when the bid reaches a buy position's take profit, then the journal has it opened by the signal and closed by take_profit with its P&L, each event once", async () => {
    const { signalId, ticket } = await submit({ action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 20, tpPips: 30 });
    const open = await tradeWhen(String(ticket), (t) => t.status === 'open', 'the position opened in the journal');
    expect(open).toMatchObject({ origin: 'signal', signalId, side: 'buy', openPrice: 1.0851, sl: 1.0831, tp: 1.0881, volume: 0.1 });
    double.setQuote('EURUSD', 1.0881, 1.0882);
    const closed = await tradeWhen(String(ticket), (t) => t.status === 'closed', 'the position closed in the journal');
    expect(closed).toMatchObject({ closeCause: 'take_profit', closePrice: 1.0881, realizedProfit: 30, closedVolume: 0.1, volume: 0 });
    expect(closed.events.map((e) => e.type)).toEqual(['position_opened', 'position_closed']);
  });

  test('when the trader closes a position by hand in cTrader, then it is closed manual', async () => {
    const { ticket } = await submit({ action: 'sell', symbol: 'EURUSD', volume: 0.2 });
    await tradeWhen(String(ticket), (t) => t.status === 'open', 'the position opened');
    double.setQuote('EURUSD', 1.084, 1.0841);
    double.closeByHand(CTID, ticket);
    const closed = await tradeWhen(String(ticket), (t) => t.status === 'closed', 'the hand close recorded');
    expect(closed).toMatchObject({ closeCause: 'manual', realizedProfit: 18, closePrice: 1.0841 });
  });

  test('when a buy limit is placed and the ask falls to it, then the trade is placed, then triggered into its position', async () => {
    const { signalId, ticket } = await submit({ action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.08, slPips: 20 });
    await tradeWhen(`order:${ticket}`, (t) => t.status === 'pending', 'the order placed');
    double.setQuote('EURUSD', 1.0799, 1.08);
    // The double names the order's position when it accepts it (ProtoOAOrder.positionId), as the server does.
    const positionId = double.account(CTID).history.get(ticket)!.positionId!;
    const t = await tradeWhen(String(positionId), (r) => r.events.some((e) => e.type === 'position_opened'), 'the order triggered into a position');
    expect(t).toMatchObject({ signalId, orderTicket: String(ticket), openPrice: 1.08, sl: 1.078 });
    expect(t.events.map((e) => [e.type, e.eventId])).toEqual([
      ['order_placed', `order:${ticket}:placed`],
      ['order_triggered', `order:${ticket}:triggered`],
      ['position_opened', expect.stringMatching(/^deal:\d+$/)],
    ]);
    expect(await trade(`order:${ticket}`)).toBeUndefined();
  });

  test('when a pending order expires at the broker, then the trade is expired', async () => {
    const { ticket } = await submit({ action: 'sell_limit', symbol: 'EURUSD', volume: 0.1, price: 1.095 });
    await tradeWhen(`order:${ticket}`, (t) => t.status === 'pending', 'the order placed');
    double.expireOrder(CTID, ticket);
    await tradeWhen(`order:${ticket}`, (t) => t.status === 'expired', 'the order expired');
  });

  test('when the stop loss is hit while the connector is down, then after its restart the close is read back from the deal history, and nothing seen before is recorded again', async () => {
    const { ticket } = await submit({ action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 20 });
    await tradeWhen(String(ticket), (t) => t.status === 'open', 'the position opened');
    const before = await journal.list(accountId, { status: 'all', scan: 200 });
    const seenBefore = new Map<string, string[]>();
    for (const { tradeId } of before) seenBefore.set(tradeId, eventIds((await trade(tradeId))!));
    await rig.connector!.stop();
    double.setQuote('EURUSD', 1.083, 1.0831);
    expect(double.account(CTID).positions.has(ticket)).toBe(false);
    await start();
    const closed = await tradeWhen(String(ticket), (t) => t.status === 'closed', 'the stop loss read back');
    expect(closed).toMatchObject({ closeCause: 'stop_loss', closePrice: 1.083, realizedProfit: -21 });
    expect(closed.events.map((e) => e.type)).toEqual(['position_opened', 'position_closed']);
    // The outbox empties, and every trade holds the events it held, each once (the read-back overlapped all of them).
    const outbox = path.join(rig.setup.stateDir, `${accountId}.trade-events.json`);
    await waitFor('the outbox empty', async () => pendingInFile(outbox).length === 0, 10_000);
    for (const [tradeId, ids] of seenBefore) {
      const now = eventIds((await trade(tradeId))!);
      expect({ tradeId, ids: tradeId === String(ticket) ? now.slice(0, ids.length) : now }).toEqual({ tradeId, ids });
      expect(new Set(now).size).toBe(now.length);
    }
    expect(rig.connector!.stderr()).toMatch(/"event":"trade_events_recovered"/);
  });
});
