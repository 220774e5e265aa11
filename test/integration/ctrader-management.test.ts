import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RedisCommandQueue } from '../../src/bridge/queue';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import type { TradeRecord } from '../../src/domain/trade-events';
import { PayloadType } from '../../src/ctrader/messages';
import { RedisTradeJournal } from '../../src/trades/journal';
import type { CtraderDouble } from '../helpers/ctrader-double';
import { oneAccountRig, type OneAccountRig } from '../helpers/ctrader-rig';
import type { Stack } from '../helpers/stack';
import { waitFor } from '../../support/infra';
import { commandQueue } from '../helpers/commands';

/**
 * The cTrader connector's trade management (protocol 1.6; docs/ctrader-connector.md "Trade management") as its own
 * process between the real service (ingress, worker, the run's Temporal and Redis) and the Open API double, which
 * steers the market with ProtoOASpotEvent: the commands carry the management fields as the service puts them
 * (queued directly, the signal schema is another branch's), the double counts what the connector asks of it.
 */

const CTID = 7_200_001;
const BASE = { bid: 1.085, ask: 1.0851 };

describe('the cTrader connector manages trades after the entry', () => {
  let rig: OneAccountRig;
  let stack: Stack;
  let double: CtraderDouble;
  let queue: RedisCommandQueue;
  let sequencer: RedisAccountSequencer;
  let journal: RedisTradeJournal;
  let accountId: string;
  const tag = randomBytes(3).toString('hex');
  let n = 0;
  const start = () => rig.start();

  beforeAll(async () => {
    rig = await oneAccountRig('mgmt', CTID);
    ({ stack, double, accountId } = rig);
    queue = commandQueue(stack.redis);
    sequencer = new RedisAccountSequencer(stack.redis);
    journal = new RedisTradeJournal(stack.redis);
  }, 120_000);

  afterAll(() => rig?.close());

  beforeEach(() => double.setQuote('EURUSD', BASE.bid, BASE.ask));
  afterEach(async () => {
    expect(double.violations).toEqual([]);
    expect(double.selfViolations).toEqual([]);
    // Each case starts flat: an earlier case's managed positions must not move with its quotes.
    if (rig.connector?.running && double.account(CTID).positions.size > 0) await send({ action: 'close_all' });
  });

  /** Queues one command as a workflow would and waits for the connector's line about it. */
  const send = async (fields: Partial<BridgeCommand> & Pick<BridgeCommand, 'action'>): Promise<Record<string, unknown>> => {
    const deadlineMs = Date.now() + 60_000;
    const [seq] = (await sequencer.next([{ accountId, deadlineMs }])).map((n) => n.seq);
    const signalId = `sig-mgmt-${tag}-${++n}`;
    const command: BridgeCommand = {
      commandId: `signal/${signalId}/account/${accountId}`,
      seq: seq!,
      signalId,
      accountId,
      acceptedAt: new Date().toISOString(),
      expiresAt: new Date(deadlineMs).toISOString(),
      ...fields,
    };
    await queue.enqueue(command);
    return waitFor(
      `the connector to report ${command.commandId}`,
      async () => rig.connector!.commands().find((l) => l.commandId === command.commandId),
      20_000,
      50,
    );
  };
  const filled = async (fields: Partial<BridgeCommand> & Pick<BridgeCommand, 'action'>): Promise<number> => {
    const line = await send({ symbol: 'EURUSD', ...fields });
    expect(line).toMatchObject({ status: 'filled' });
    return Number(line.ticket);
  };
  const position = (ticket: number) => double.account(CTID).positions.get(ticket);
  const slBecomes = (ticket: number, sl: number) =>
    waitFor(`position ${ticket}'s stop at ${sl}`, async () => position(ticket)?.stopLoss === sl, 10_000, 20).catch((err: Error) => {
      throw new Error(`${err.message}; it is ${JSON.stringify(position(ticket) ?? null)}`, { cause: err });
    });
  const amends = (ticket: number) => double.requests(PayloadType.PROTO_OA_AMEND_POSITION_SLTP_REQ).filter((p) => p.positionId === ticket);
  const closes = (ticket: number) => double.requests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ).filter((p) => p.positionId === ticket);
  const trade = async (ticket: number, done: (t: TradeRecord) => boolean): Promise<TradeRecord> =>
    waitFor(
      `the journal's trade ${ticket}`,
      async () => {
        const [raw] = await journal.readRaw(accountId, [String(ticket)]);
        const t = raw ? (JSON.parse(raw) as TradeRecord) : undefined;
        return t && done(t) ? t : undefined;
      },
      20_000,
      100,
    );

  test('when the connector says hello, then it announces version 1.5.0 and the five management features', async () => {
    const account = await stack.registry.getAccount(accountId);
    expect(account?.bridgeVersion).toBe('1.5.0');
    expect(account?.bridgeFeatures).toEqual(
      expect.arrayContaining(['trailing_stop', 'breakeven_trigger', 'take_profit_levels', 'close_opposite', 'max_spread']),
    );
  });

  test('when the price runs up in steps and back, then the stop trails in steps of trailStepPips (TP kept), never back, each move a position_modified trailing_stop with trailActiveAt', async () => {
    const ticket = await filled({ action: 'buy', volume: 0.1, slPips: 20, tpPips: 50, trailDistancePips: 10, trailTriggerPips: 5, trailStepPips: 2 });
    expect(position(ticket)).toMatchObject({ price: 1.0851, stopLoss: 1.0831, takeProfit: 1.0901 });
    double.setQuote('EURUSD', 1.0856, 1.0857); // 5 pips: the trail starts, stop 10 pips behind
    await slBecomes(ticket, 1.0846);
    double.setQuote('EURUSD', 1.0857, 1.0858); // 1 pip better: less than a step
    double.setQuote('EURUSD', 1.0852, 1.0853); // back: never back
    double.setQuote('EURUSD', 1.0859, 1.086); // 3 pips above the best that moved it
    await slBecomes(ticket, 1.0849);
    expect(amends(ticket)).toEqual([
      { ctidTraderAccountId: CTID, positionId: ticket, stopLoss: 1.0846, takeProfit: 1.0901 },
      { ctidTraderAccountId: CTID, positionId: ticket, stopLoss: 1.0849, takeProfit: 1.0901 },
    ]);
    const t = await trade(ticket, (r) => r.events.filter((e) => e.type === 'position_modified').length === 2);
    expect(t.events.filter((e) => e.type === 'position_modified')).toEqual([
      expect.objectContaining({ cause: 'trailing_stop', sl: 1.0846, tp: 1.0901, trailActiveAt: 1.0856 }),
      expect.objectContaining({ cause: 'trailing_stop', sl: 1.0849, tp: 1.0901, trailActiveAt: 1.0856 }),
    ]);
  });

  test('when a sell reaches its breakeven trigger, then the stop goes to entry − offset once, and its take-profit level closes its share (take_profit_level) with ProtoOAClosePositionReq in cents of units', async () => {
    const ticket = await filled({
      action: 'sell',
      volume: 0.1,
      slPips: 20,
      breakevenTriggerPips: 10,
      breakevenOffsetPips: 2,
      takeProfits: [{ tpPips: 30, closePercent: 50 }],
    });
    expect(position(ticket)).toMatchObject({ price: 1.085, stopLoss: 1.087 });
    double.setQuote('EURUSD', 1.0839, 1.084); // 10 pips at the ask
    await slBecomes(ticket, 1.0848);
    double.setQuote('EURUSD', 1.0834, 1.0835); // further: breakeven is done
    double.setQuote('EURUSD', 1.0819, 1.082); // the level at 1.0820
    await waitFor('half the position closed', async () => position(ticket)?.tradeData.volume === 500_000, 10_000, 20);
    expect(amends(ticket)).toEqual([{ ctidTraderAccountId: CTID, positionId: ticket, stopLoss: 1.0848 }]);
    expect(closes(ticket)).toEqual([{ ctidTraderAccountId: CTID, positionId: ticket, volume: 500_000 }]);
    const t = await trade(ticket, (r) => r.events.some((e) => e.type === 'position_closed'));
    expect(t.events.filter((e) => e.type !== 'position_opened')).toEqual([
      expect.objectContaining({ type: 'position_modified', cause: 'breakeven_trigger', sl: 1.0848 }),
      expect.objectContaining({ type: 'position_closed', cause: 'take_profit_level', volume: 0.05, remainingVolume: 0.05 }),
    ]);
  });

  test('when the take-profit levels add up to 100 %, then each closes its share once and the last the rest: the position is gone', async () => {
    const ticket = await filled({
      action: 'buy',
      volume: 0.1,
      takeProfits: [
        { tpPips: 20, closePercent: 70 },
        { tpPips: 10, closePercent: 30 },
      ],
    });
    double.setQuote('EURUSD', 1.0861, 1.0862); // +10: the nearer level (30 %)
    await waitFor('the first level closed', async () => position(ticket)?.tradeData.volume === 700_000, 10_000, 20);
    double.setQuote('EURUSD', 1.0862, 1.0863); // still between the levels
    double.setQuote('EURUSD', 1.0871, 1.0872); // +20: the rest
    await waitFor('the position closed', async () => position(ticket) === undefined, 10_000, 20);
    expect(closes(ticket).map((c) => c.volume)).toEqual([300_000, 700_000]);
    const t = await trade(ticket, (r) => r.status === 'closed');
    expect(t.events.filter((e) => e.type === 'position_closed').map((e) => (e as unknown as { cause: string }).cause)).toEqual([
      'take_profit_level',
      'take_profit_level',
    ]);
  });

  test('when a buy asks to close the opposite side, then every sell of the symbol is closed whole (close_opposite, the command named) before the buy is sent', async () => {
    const sells = [await filled({ action: 'sell', volume: 0.1 }), await filled({ action: 'sell', volume: 0.2 })];
    const other = await filled({ action: 'sell', symbol: 'USDJPY', volume: 0.1 });
    const line = await send({ action: 'buy', symbol: 'EURUSD', volume: 0.1, closeOpposite: true });
    expect(line).toMatchObject({ status: 'filled' });
    for (const s of sells) expect(position(s)).toBeUndefined();
    expect(position(other)).toBeDefined();
    expect(position(Number(line.ticket))).toBeDefined();
    // A request the rate limit refused did nothing and is sent again (src/ctrader/account.ts): only executed ones count.
    const sent = double.received
      .filter((e) => e.payloadType === PayloadType.PROTO_OA_CLOSE_POSITION_REQ || e.payloadType === PayloadType.PROTO_OA_NEW_ORDER_REQ)
      .filter((e) => !double.rateLimited.has(e))
      .slice(-3);
    expect(sent.map((e) => [e.payloadType, e.payload?.positionId, e.payload?.volume])).toEqual([
      [PayloadType.PROTO_OA_CLOSE_POSITION_REQ, sells[0], 1_000_000],
      [PayloadType.PROTO_OA_CLOSE_POSITION_REQ, sells[1], 2_000_000],
      [PayloadType.PROTO_OA_NEW_ORDER_REQ, undefined, 1_000_000],
    ]);
    for (const s of sells) {
      const t = await trade(s, (r) => r.status === 'closed');
      expect(t.events.find((e) => e.type === 'position_closed')).toMatchObject({ cause: 'close_opposite', commandId: line.commandId });
    }
  });

  test('when closing an opposite position is refused, then the entry is refused close_opposite_failed and nothing is opened', async () => {
    const sell = await filled({ action: 'sell', volume: 0.1 });
    const orders = double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ).length;
    double.failRequests(PayloadType.PROTO_OA_CLOSE_POSITION_REQ);
    try {
      const line = await send({ action: 'buy', symbol: 'EURUSD', volume: 0.1, closeOpposite: true });
      expect(line).toMatchObject({
        status: 'rejected',
        retcode: 'close_opposite_failed',
        message: expect.stringContaining(`closing ${sell} failed: UNKNOWN_ERROR`),
      });
    } finally {
      double.stopFailing(PayloadType.PROTO_OA_CLOSE_POSITION_REQ);
    }
    expect(double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ)).toHaveLength(orders);
    expect(position(sell)).toBeDefined();
  });

  test('when the spread is wider than maxSpreadPips, then the entry is refused spread_too_wide and nothing is sent; within it, it fills', async () => {
    double.setQuote('EURUSD', 1.085, 1.0853);
    const orders = double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ).length;
    expect(await send({ action: 'buy', symbol: 'EURUSD', volume: 0.1, maxSpreadPips: 2 })).toMatchObject({
      status: 'rejected',
      retcode: 'spread_too_wide',
      message: 'spread 3 pips > max 2',
    });
    expect(await send({ action: 'sell_limit', symbol: 'EURUSD', volume: 0.1, price: 1.09, maxSpreadPips: 1.5 })).toMatchObject({ retcode: 'spread_too_wide' });
    expect(double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ)).toHaveLength(orders);
    await filled({ action: 'buy', volume: 0.1, maxSpreadPips: 3 });
  });

  test('when a take-profit level price is not beyond the market, or a pip field names a symbol the connector does not know, then the entry is refused before anything is sent', async () => {
    const orders = double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ).length;
    expect(await send({ action: 'buy', symbol: 'EURUSD', volume: 0.1, takeProfits: [{ tp: 1.084, closePercent: 50 }] })).toMatchObject({
      status: 'rejected',
      retcode: 'take_profit_level_invalid',
    });
    expect(await send({ action: 'sell', symbol: 'EURUSD', volume: 0.1, tp: 1.08, takeProfits: [{ tp: 1.079, closePercent: 50 }] })).toMatchObject({
      retcode: 'take_profit_level_invalid',
    });
    expect(await send({ action: 'buy', symbol: 'NOPE', volume: 0.1, trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 })).toMatchObject({
      status: 'rejected',
      retcode: 'bridge_invalid_command',
      message: expect.stringContaining('trailDistancePips'),
    });
    expect(double.requests(PayloadType.PROTO_OA_NEW_ORDER_REQ)).toHaveLength(orders);
  });

  test('when a pending entry with a trail triggers, then its position is managed from the fill', async () => {
    const orderTicket = await filled({
      action: 'buy_limit',
      volume: 0.1,
      price: 1.084,
      slPips: 20,
      trailDistancePips: 10,
      trailTriggerPips: 0,
      trailStepPips: 1,
    });
    double.setQuote('EURUSD', 1.0839, 1.084);
    const ticket = double.account(CTID).history.get(orderTicket)!.positionId!;
    await waitFor('the limit order filled', async () => position(ticket) !== undefined, 10_000, 20);
    expect(position(ticket)).toMatchObject({ price: 1.084, stopLoss: 1.082 });
    double.setQuote('EURUSD', 1.0855, 1.0856);
    await slBecomes(ticket, 1.0845);
    expect(amends(ticket).map((a) => a.stopLoss)).toEqual([1.0845]);
  });

  test("when a command raises a trailed stop above the trail, then the trail takes the broker's stop and never moves it back", async () => {
    const ticket = await filled({ action: 'buy', volume: 0.1, slPips: 20, trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 });
    double.setQuote('EURUSD', 1.086, 1.0861);
    await slBecomes(ticket, 1.085);
    expect(await send({ action: 'modify_sl', positionId: String(ticket), sl: 1.0858 })).toMatchObject({ status: 'done' });
    double.setQuote('EURUSD', 1.0862, 1.0863); // the trail's 1.0852 would be below the command's stop
    double.setQuote('EURUSD', 1.087, 1.0871);
    await slBecomes(ticket, 1.086);
    expect(amends(ticket).map((a) => a.stopLoss)).toEqual([1.085, 1.0858, 1.086]);
    const t = await trade(ticket, (r) => r.events.filter((e) => e.type === 'position_modified').length === 3);
    expect(t.events.filter((e) => e.type === 'position_modified').map((e) => (e as unknown as { cause: string }).cause)).toEqual([
      'trailing_stop',
      'command',
      'trailing_stop',
    ]);
  });

  test('when the connector is stopped mid-trail and the price moves while it is down, then after its start the trail resumes from its state file: one move for the new step, none twice', async () => {
    const ticket = await filled({ action: 'buy', volume: 0.1, slPips: 20, trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 });
    double.setQuote('EURUSD', 1.086, 1.0861);
    await slBecomes(ticket, 1.085);
    await rig.connector!.stop();
    const state = JSON.parse(fs.readFileSync(path.join(rig.setup.stateDir, `${accountId}.management.json`), 'utf8')) as { positions: { ticket: string }[] };
    expect(state.positions.map((p) => p.ticket)).toContain(String(ticket));
    double.setQuote('EURUSD', 1.0865, 1.0866);
    await start();
    await slBecomes(ticket, 1.0855);
    double.setQuote('EURUSD', 1.087, 1.0871);
    await slBecomes(ticket, 1.086);
    expect(amends(ticket).map((a) => a.stopLoss)).toEqual([1.085, 1.0855, 1.086]);
  });

  test('when the connector dies after the broker moved the stop and before the answer, then after its start the move counts as done: the stop is not amended again', async () => {
    const ticket = await filled({ action: 'buy', volume: 0.1, slPips: 20, trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 });
    const proc = rig.connector!;
    double.crashOnTrade = {
      phase: 'after',
      crash: () => {
        try {
          process.kill(-proc.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      },
    };
    double.setQuote('EURUSD', 1.086, 1.0861);
    await waitFor('the connector to die on its amend', async () => !proc.running, 10_000, 20);
    await proc.kill9();
    expect(position(ticket)?.stopLoss).toBe(1.085);
    await start();
    double.setQuote('EURUSD', 1.0862, 1.0863);
    await slBecomes(ticket, 1.0852);
    expect(amends(ticket).map((a) => a.stopLoss)).toEqual([1.085, 1.0852]);
  });
});
