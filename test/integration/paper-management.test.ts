import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { RedisCommandQueue } from '../../src/bridge/queue';
import { RedisAccountSequencer } from '../../src/bridge/ordering';
import type { ManagedPosition } from '../../src/bridge-kit/trade-management';
import type { BridgeCommand, BridgeReport } from '../../src/domain/bridge-protocol';
import type { LedgerEntry } from '../../src/paper/ledger';
import { ensureBuilt } from '../../support/service-process';
import { waitFor } from '../../support/infra';
import { seedOwner, startStack, type Stack } from '../helpers/stack';
import { CONFORMANCE_SYMBOLS, type ConformanceAccount } from '../conformance/driver';
import { PaperBridgeDriver } from '../conformance/paper-driver';
import { commandQueue } from '../helpers/commands';

/**
 * The paper bridge's trade management (protocol 1.6; docs/paper-bridge.md, "Trade management") as a terminal runs
 * it: the real ingress, Redis and Temporal; the paper bridge as its own process on a steered market file. The
 * commands carry the management fields as the service sends them, queued straight into the account's real command
 * queue (the signal side is the conformance cases' and the service's tests'), and the ledger says what the
 * management did and in what order. Each price step waits for the bridge's answer to it, so a move back or a second
 * move would show in the sequence of ledger lines, which the test compares whole.
 */

const SPEC = Object.fromEntries(CONFORMANCE_SYMBOLS.map((s) => [s.name, s]));
const round = (symbol: string, v: number) => Number(v.toFixed(SPEC[symbol]!.digits));
/** A quote `pips` from the symbol's base bid, with its usual spread. */
const at = (symbol: string, pips: number, spreadPips?: number) => {
  const s = SPEC[symbol]!;
  const bid = round(symbol, s.bid + pips * s.pip);
  return { bid, ask: round(symbol, bid + (spreadPips === undefined ? s.spread : spreadPips * s.pip)) };
};
/** A price `pips` from `from`. */
const off = (symbol: string, from: number, pips: number) => round(symbol, from + pips * SPEC[symbol]!.pip);

describe('trade management on the paper bridge (real service)', () => {
  let stack: Stack;
  let queue: RedisCommandQueue;
  let sequencer: RedisAccountSequencer;
  const driver = new PaperBridgeDriver('mt5');

  beforeAll(async () => {
    ensureBuilt();
    stack = await startStack();
    queue = commandQueue(stack.redis);
    sequencer = new RedisAccountSequencer(stack.redis);
  }, 60_000);
  afterAll(async () => {
    await driver.cleanup();
    await queue?.close();
    await stack?.stop();
  }, 60_000);

  async function account(): Promise<ConformanceAccount> {
    const f = await seedOwner(stack.registry, [{}]);
    const acc = { id: f.accounts[0]!.id, platform: 'mt5' as const, bridgeToken: f.accounts[0]!.bridgeToken };
    await driver.start(acc, stack.ingress.url);
    for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(acc.id, s.name, at(s.name, 0));
    return acc;
  }

  /** Queues one command for the account as the service would and waits for the bridge's report of it. */
  async function send(acc: ConformanceAccount, fields: Partial<BridgeCommand> & Pick<BridgeCommand, 'action'>): Promise<BridgeReport> {
    const deadline = Date.now() + 60_000;
    const [seq] = (await sequencer.next([{ accountId: acc.id, deadlineMs: deadline }])).map((n) => n.seq);
    const signalId = `sig_${randomBytes(12).toString('hex')}`;
    const command: BridgeCommand = {
      commandId: `signal/${signalId}/account/${acc.id}`,
      seq: seq!,
      signalId,
      accountId: acc.id,
      acceptedAt: new Date().toISOString(),
      expiresAt: new Date(deadline).toISOString(),
      ...fields,
    };
    expect(await queue.enqueue(command)).toBe('queued');
    return waitFor(`the report of ${fields.action}`, () => queue.recordedReport(acc.id, command.commandId), 20_000, 50);
  }
  const filled = async (acc: ConformanceAccount, fields: Partial<BridgeCommand> & Pick<BridgeCommand, 'action'>) => {
    const report = await send(acc, fields);
    expect(report).toMatchObject({ status: 'filled', ticket: expect.any(String) });
    return report;
  };
  const ledger = async (acc: ConformanceAccount, ticket?: string) =>
    ((await driver.broker(acc.id)).native as { ledger: LedgerEntry[] }).ledger.filter((l) => ticket === undefined || l.ticket === ticket);
  /** The management's lines of a ticket: [op, cause, sl or closed volume]. */
  const managed = async (acc: ConformanceAccount, ticket: string) =>
    (await ledger(acc, ticket)).filter((l) => l.cause !== 'command').map((l) => [l.op, l.cause, l.op === 'modify' ? l.sl : l.volume]);
  /** Moves the price and waits until the ticket's management lines are `expected` (and stay so in the end). */
  async function step(acc: ConformanceAccount, symbol: string, quote: { bid: number; ask: number }, ticket: string, expected: unknown[][]): Promise<void> {
    await driver.setQuote(acc.id, symbol, quote);
    await waitFor(
      `${ticket}'s management lines to be ${JSON.stringify(expected)} at ${JSON.stringify(quote)}`,
      async () => (await managed(acc, ticket)).length >= expected.length || undefined,
      10_000,
      50,
    );
    expect(await managed(acc, ticket)).toEqual(expected);
  }

  test('when the price runs up and back, then the trail moves the stop in steps and never back; breakeven moves it once; each take-profit level closes its share once', async () => {
    const acc = await account();
    // Trailing: 10 pips behind, from 5 pips in profit, in steps of 2.
    const trail = await filled(acc, { action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 30, trailDistancePips: 10, trailTriggerPips: 5, trailStepPips: 2 });
    const open = trail.price!;
    const t = trail.ticket!;
    const sl = (pips: number) => off('EURUSD', open, pips);
    const moves: unknown[][] = [];
    const trailed = (pips: number) => {
      moves.push(['modify', 'trailing_stop', sl(pips)]);
      return moves.slice();
    };
    await step(acc, 'EURUSD', at('EURUSD', 15), t, trailed(4)); // bid = open + 14 → stop 10 behind
    await step(acc, 'EURUSD', at('EURUSD', 18), t, trailed(7));
    await driver.setQuote(acc.id, 'EURUSD', at('EURUSD', 19)); // 1 pip better: below the step
    await driver.setQuote(acc.id, 'EURUSD', at('EURUSD', 8)); // back
    await step(acc, 'EURUSD', at('EURUSD', 21), t, trailed(10));
    await waitFor(
      'the broker to hold the last stop',
      async () => (await driver.broker(acc.id)).positions.find((p) => p.ticket === t)?.sl === sl(10),
      5_000,
      50,
    );

    // Breakeven at 10 pips, offset 2; a wide trail (30 behind from 30 pips) shows that nothing else moved in between.
    const be = await filled(acc, {
      action: 'buy',
      symbol: 'GBPUSD',
      volume: 0.1,
      slPips: 30,
      breakevenTriggerPips: 10,
      breakevenOffsetPips: 2,
      trailDistancePips: 30,
      trailTriggerPips: 30,
    });
    const beOpen = be.price!;
    const b = be.ticket!;
    await driver.setQuote(acc.id, 'GBPUSD', { bid: off('GBPUSD', beOpen, 9), ask: off('GBPUSD', beOpen, 10.5) });
    await step(acc, 'GBPUSD', { bid: off('GBPUSD', beOpen, 10), ask: off('GBPUSD', beOpen, 11.5) }, b, [
      ['modify', 'breakeven_trigger', off('GBPUSD', beOpen, 2)],
    ]);
    await driver.setQuote(acc.id, 'GBPUSD', { bid: off('GBPUSD', beOpen, 20), ask: off('GBPUSD', beOpen, 21.5) });
    await driver.setQuote(acc.id, 'GBPUSD', { bid: off('GBPUSD', beOpen, 11), ask: off('GBPUSD', beOpen, 12.5) });
    await step(acc, 'GBPUSD', { bid: off('GBPUSD', beOpen, 40), ask: off('GBPUSD', beOpen, 41.5) }, b, [
      ['modify', 'breakeven_trigger', off('GBPUSD', beOpen, 2)],
      ['modify', 'trailing_stop', off('GBPUSD', beOpen, 10)],
    ]);

    // Take-profit levels: 30 % at 10 pips, 30 % at 20, the rest at 30 (0.03, 0.03, 0.04 of 0.1).
    const lv = await filled(acc, {
      action: 'buy',
      symbol: 'AUDUSD',
      volume: 0.1,
      takeProfits: [
        { tpPips: 20, closePercent: 30 },
        { tpPips: 10, closePercent: 30 },
        { tpPips: 30, closePercent: 40 },
      ],
    });
    const lvOpen = lv.price!;
    const l = lv.ticket!;
    const bidAt = (pips: number) => ({ bid: off('AUDUSD', lvOpen, pips), ask: off('AUDUSD', lvOpen, pips + 1.2) });
    await step(acc, 'AUDUSD', bidAt(10), l, [['partial_close', 'take_profit_level', 0.03]]);
    await driver.setQuote(acc.id, 'AUDUSD', bidAt(12));
    await driver.setQuote(acc.id, 'AUDUSD', bidAt(5));
    await step(acc, 'AUDUSD', bidAt(20), l, [
      ['partial_close', 'take_profit_level', 0.03],
      ['partial_close', 'take_profit_level', 0.03],
    ]);
    await step(acc, 'AUDUSD', bidAt(31), l, [
      ['partial_close', 'take_profit_level', 0.03],
      ['partial_close', 'take_profit_level', 0.03],
      ['close', 'take_profit_level', 0.04],
    ]);
    // The ledger line goes first, then the broker's state and the management's file.
    await waitFor('the last level to close the position', async () => !(await driver.broker(acc.id)).positions.some((p) => p.ticket === l), 5_000, 50);
    const left = () => (JSON.parse(fs.readFileSync(driver.managementFile(acc.id), 'utf8')) as { positions: ManagedPosition[] }).positions.map((p) => p.ticket);
    await waitFor('the management to end with the position', async () => !left().includes(l), 5_000, 50);
    expect(left().sort()).toEqual([t, b].sort());
  }, 120_000);

  test('when an entry asks to close the opposite side, then the sells close (close_opposite) before the buy opens; a wide spread is refused with nothing done', async () => {
    const acc = await account();
    const sell = await filled(acc, { action: 'sell', symbol: 'USDJPY', volume: 0.1 });
    const buy = await filled(acc, { action: 'buy', symbol: 'USDJPY', volume: 0.2, closeOpposite: true });
    const lines = (await ledger(acc)).filter((e) => e.symbol === 'USDJPY').map((e) => [e.op, e.ticket, e.cause]);
    expect(lines).toEqual([
      ['open', sell.ticket, 'command'],
      ['close', sell.ticket, 'close_opposite'],
      ['open', buy.ticket, 'command'],
    ]);

    // A wide spread: refused before anything is closed or placed.
    const gold = await filled(acc, { action: 'sell', symbol: 'XAUUSD', volume: 0.01 });
    await driver.setQuote(acc.id, 'XAUUSD', at('XAUUSD', 0, 4));
    const before = await ledger(acc);
    const wide = await send(acc, { action: 'buy', symbol: 'XAUUSD', volume: 0.01, maxSpreadPips: 3, closeOpposite: true });
    expect(wide).toMatchObject({ status: 'rejected', retcode: 'spread_too_wide', message: 'spread 4 pips > max 3' });
    expect(await ledger(acc)).toEqual(before);
    expect((await driver.broker(acc.id)).positions.map((p) => p.ticket)).toEqual([buy.ticket, gold.ticket]);
  }, 90_000);

  test('when the bridge is killed mid-trail and the price moves while it is down, then after its restart the trail goes on from the stop it set: no stop moved twice', async () => {
    const acc = await account();
    const entry = await filled(acc, { action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 30, trailDistancePips: 10, trailStepPips: 1 });
    const open = entry.price!;
    const t = entry.ticket!;
    const sl = (pips: number) => ['modify', 'trailing_stop', off('EURUSD', open, pips)];
    const bidAt = (pips: number) => ({ bid: off('EURUSD', open, pips), ask: off('EURUSD', open, pips + 1) });
    await step(acc, 'EURUSD', bidAt(15), t, [sl(5)]);
    await step(acc, 'EURUSD', bidAt(18), t, [sl(5), sl(8)]);

    await driver.kill(acc.id);
    await driver.setQuote(acc.id, 'EURUSD', bidAt(25));
    await driver.start(acc, stack.ingress.url);
    await waitFor('the trail to catch up after the restart', async () => (await managed(acc, t)).length >= 3 || undefined, 10_000, 50);
    expect(await managed(acc, t)).toEqual([sl(5), sl(8), sl(15)]);

    // Killed again with nothing moving: the restart sends nothing; the next step is one move.
    await driver.kill(acc.id);
    await driver.start(acc, stack.ingress.url);
    await step(acc, 'EURUSD', bidAt(27), t, [sl(5), sl(8), sl(15), sl(17)]);
    const state = () => (JSON.parse(fs.readFileSync(driver.managementFile(acc.id), 'utf8')) as { positions: ManagedPosition[] }).positions;
    await waitFor('the management to note the move', async () => state()[0]?.pending === null, 5_000, 50);
    expect(state()).toEqual([expect.objectContaining({ ticket: t, stopMoves: 4, pending: null, sl: off('EURUSD', open, 17) })]);
  }, 120_000);
});
