import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import type { TradeEvent } from '../../src/domain/trade-events';
import { ManualFeed } from '../../src/paper/broker';
import { MemoryLedger, type LedgerEntry } from '../../src/paper/ledger';
import { PaperTerminal, type TerminalOptions } from '../../src/paper/terminal';
import { paperCommand } from '../helpers/paper-command';

/**
 * The paper terminal's trade management (protocol 1.6; docs/paper-bridge.md, "Trade management"), on a steered feed
 * and without a connection: commands handed to `handle`, the market's ticks run by hand. The ledger and the trade-event
 * outbox say what the management did.
 */

const command = paperCommand;

describe('paper terminal: trade management', () => {
  let feed: ManualFeed;
  let ledger: MemoryLedger;
  let dir: string;

  function terminal(over: Partial<TerminalOptions> = {}): PaperTerminal {
    return new PaperTerminal({
      accountId: 'acc-1',
      platform: 'mt5',
      bridgeToken: 't',
      ingressUrl: 'http://127.0.0.1:1',
      brokerOptions: { feed },
      ledger,
      tickMs: 0,
      log: () => undefined,
      diag: () => undefined,
      ...over,
    });
  }
  /** The bid moves (ask one pip above); the terminal's next market tick sees it. */
  async function bid(t: PaperTerminal, price: number): Promise<void> {
    feed.set('EURUSD', price, Number((price + 0.0001).toFixed(5)));
    await t.tick();
  }
  const filled = (t: PaperTerminal, over: Partial<BridgeCommand>): string => {
    const h = t.handle(command(over))!;
    expect(h.report).toMatchObject({ status: 'filled' });
    return h.report.ticket!;
  };
  const ops = (cause?: string): Partial<LedgerEntry>[] =>
    ledger.entries
      .filter((e) => cause === undefined || e.cause === cause)
      .map((e) => ({ op: e.op, ticket: e.ticket, sl: e.sl, volume: e.volume, cause: e.cause }));
  const events = (t: PaperTerminal): TradeEvent[] => t.trades.outbox.pending();

  beforeEach(() => {
    feed = new ManualFeed();
    feed.set('EURUSD', 1.085, 1.0851);
    ledger = new MemoryLedger();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paper-mgmt-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('when the price runs up and back, then the trailing stop moves in steps from its trigger and never back', async () => {
    const t = terminal();
    const ticket = filled(t, { slPips: 20, trailDistancePips: 10, trailTriggerPips: 5, trailStepPips: 2 });
    for (const p of [1.0853, 1.0856, 1.0857, 1.0859, 1.0852, 1.0858]) await bid(t, p);
    expect(ops('trailing_stop')).toEqual([
      { op: 'modify', ticket, sl: 1.0846, volume: 0.1, cause: 'trailing_stop' },
      { op: 'modify', ticket, sl: 1.0849, volume: 0.1, cause: 'trailing_stop' },
    ]);
    const modified = events(t).filter((e) => e.type === 'position_modified');
    expect(modified).toEqual([
      expect.objectContaining({ cause: 'trailing_stop', sl: 1.0846, trailActiveAt: 1.0856 }),
      expect.objectContaining({ cause: 'trailing_stop', sl: 1.0849, trailActiveAt: 1.0856 }),
    ]);
    expect(modified[0]).not.toHaveProperty('commandId');
    expect(t.broker.positions()[0]!.sl).toBe(1.0849);
  });

  test('when the price reaches the breakeven trigger, then the stop moves to the entry plus the offset once', async () => {
    const t = terminal();
    const ticket = filled(t, { slPips: 20, breakevenTriggerPips: 10, breakevenOffsetPips: 2 });
    await bid(t, 1.086);
    expect(ops('breakeven_trigger')).toEqual([]);
    for (const p of [1.0861, 1.0865, 1.0861, 1.087]) await bid(t, p);
    expect(ops('breakeven_trigger')).toEqual([{ op: 'modify', ticket, sl: 1.0853, volume: 0.1, cause: 'breakeven_trigger' }]);
    expect(events(t).filter((e) => e.type === 'position_modified')).toEqual([expect.objectContaining({ cause: 'breakeven_trigger', sl: 1.0853 })]);
  });

  test('when the price reaches each take-profit level, then each closes its share once, the last one the rest', async () => {
    const t = terminal();
    const ticket = filled(t, {
      volume: 0.1,
      tpPips: 40,
      takeProfits: [
        { tpPips: 20, closePercent: 50 },
        { tpPips: 10, closePercent: 50 },
      ],
    });
    for (const p of [1.0861, 1.0862, 1.0861, 1.0865]) await bid(t, p);
    expect(ops('take_profit_level')).toEqual([{ op: 'partial_close', ticket, sl: null, volume: 0.05, cause: 'take_profit_level' }]);
    for (const p of [1.0871, 1.0872]) await bid(t, p);
    expect(ops('take_profit_level')).toEqual([
      { op: 'partial_close', ticket, sl: null, volume: 0.05, cause: 'take_profit_level' },
      { op: 'close', ticket, sl: null, volume: 0.05, cause: 'take_profit_level' },
    ]);
    expect(t.broker.positions()).toEqual([]);
    expect(t.management.trades.tickets()).toEqual([]);
    const closed = events(t).filter((e) => e.type === 'position_closed');
    expect(closed).toEqual([
      expect.objectContaining({ cause: 'take_profit_level', volume: 0.05, remainingVolume: 0.05 }),
      expect.objectContaining({ cause: 'take_profit_level', volume: 0.05, remainingVolume: 0 }),
    ]);
  });

  test('when an entry asks to close the opposite side, then each opposite position closes (close_opposite) before the entry opens', async () => {
    const t = terminal();
    const sell1 = filled(t, { action: 'sell' });
    const sell2 = filled(t, { action: 'sell', volume: 0.2 });
    const buyOther = filled(t, { action: 'buy', symbol: 'GBPUSD' });
    const before = ledger.entries.length;
    const buy = filled(t, { action: 'buy', closeOpposite: true });
    expect(ledger.entries.slice(before).map((e) => [e.op, e.ticket, e.cause])).toEqual([
      ['close', sell1, 'close_opposite'],
      ['close', sell2, 'close_opposite'],
      ['open', buy, 'command'],
    ]);
    expect(t.broker.positions().map((p) => p.ticket)).toEqual([buyOther, buy]);
    expect(
      events(t)
        .filter((e) => e.type === 'position_closed')
        .map((e) => 'cause' in e && e.cause),
    ).toEqual(['close_opposite', 'close_opposite']);
  });

  test('when an opposite position cannot be closed, then the entry is refused close_opposite_failed and nothing opens', () => {
    const t = terminal();
    const sell = filled(t, { action: 'sell' });
    t.broker.setMarketOpen('EURUSD', false);
    const before = ledger.entries.length;
    const h = t.handle(command({ action: 'buy', closeOpposite: true }))!;
    expect(h.report).toMatchObject({ status: 'rejected', retcode: 'close_opposite_failed', message: expect.stringContaining(sell) });
    expect(ledger.entries.length).toBe(before);
  });

  test('when the spread is wider than maxSpreadPips, then the entry is refused spread_too_wide and nothing is closed or placed', () => {
    const t = terminal();
    filled(t, { action: 'sell' });
    feed.set('EURUSD', 1.085, 1.0853);
    const before = ledger.entries.length;
    const h = t.handle(command({ action: 'buy', maxSpreadPips: 1.5, closeOpposite: true }))!;
    expect(h.report).toMatchObject({ status: 'rejected', retcode: 'spread_too_wide', message: 'spread 3 pips > max 1.5' });
    expect(ledger.entries.length).toBe(before);
    // At the limit it passes.
    expect(t.handle(command({ action: 'buy', maxSpreadPips: 3 }))!.report).toMatchObject({ status: 'filled' });
  });

  test('when a take-profit level price is on the losing side, or pip fields name an unknown symbol, then the entry is refused', () => {
    const t = terminal();
    expect(t.handle(command({ takeProfits: [{ tp: 1.085, closePercent: 50 }] }))!.report).toMatchObject({
      status: 'rejected',
      retcode: 'take_profit_level_invalid',
    });
    expect(t.handle(command({ symbol: 'NOPE', trailDistancePips: 10 }))!.report).toMatchObject({
      status: 'rejected',
      retcode: 'bridge_invalid_command',
      message: expect.stringContaining('trailDistancePips'),
    });
    expect(ledger.entries).toEqual([]);
  });

  test('when a pending entry with management triggers, then its position is managed from its fill', async () => {
    const t = terminal();
    const ticket = filled(t, { action: 'buy_limit', price: 1.084, trailDistancePips: 5, trailStepPips: 1 });
    expect(t.management.trades.tickets()).toEqual([]);
    feed.set('EURUSD', 1.0839, 1.084);
    await t.tick();
    expect(t.management.trades.tickets()).toEqual([ticket]);
    await bid(t, 1.085);
    expect(ops('trailing_stop')).toEqual([{ op: 'modify', ticket, sl: 1.0845, volume: 0.1, cause: 'trailing_stop' }]);
  });

  test('when the trader raises the stop by a command, then the trail never moves it back; a close by hand ends the management', async () => {
    const t = terminal();
    const ticket = filled(t, { trailDistancePips: 10 });
    await bid(t, 1.0861);
    expect(t.broker.positions()[0]!.sl).toBe(1.0851);
    expect(t.handle(command({ action: 'modify_sl', positionId: ticket, sl: 1.0858 }))!.report).toMatchObject({ status: 'done' });
    for (const p of [1.0862, 1.0863]) await bid(t, p);
    expect(t.broker.positions()[0]!.sl).toBe(1.0858);
    await bid(t, 1.087);
    expect(t.broker.positions()[0]!.sl).toBe(1.086);
    t.byHand({ op: 'close', ticket });
    expect(t.management.trades.tickets()).toEqual([]);
  });

  test('when the terminal restarts mid-trail from its files, then the trail goes on from the stop it set and never moves it twice', async () => {
    const files = {
      stateFile: path.join(dir, 'state.json'),
      managementFile: path.join(dir, 'managed.json'),
      tradesFile: path.join(dir, 'trades.json'),
    };
    const first = terminal(files);
    const ticket = filled(first, { trailDistancePips: 10, trailStepPips: 2 });
    await bid(first, 1.0861);
    await bid(first, 1.0864);
    expect(ops('trailing_stop').map((o) => o.sl)).toEqual([1.0851, 1.0854]);

    const second = terminal(files);
    expect(second.management.trades.get(ticket)).toMatchObject({ sl: 1.0854, stopMoves: 2, pending: null, trail: { best: 1.0864 } });
    await bid(second, 1.0864);
    await bid(second, 1.0865);
    expect(ops('trailing_stop').map((o) => o.sl)).toEqual([1.0851, 1.0854]);
    await bid(second, 1.0866);
    expect(ops('trailing_stop').map((o) => o.sl)).toEqual([1.0851, 1.0854, 1.0856]);
  });

  test('when the file holds a stop move in flight that the broker already made, then the restart counts it done and sends nothing', async () => {
    const files = { stateFile: path.join(dir, 'state.json'), managementFile: path.join(dir, 'managed.json') };
    const first = terminal(files);
    const ticket = filled(first, { trailDistancePips: 10 });
    await bid(first, 1.0861);
    // As if killed between the broker's answer and the management's own note of it.
    const saved = JSON.parse(fs.readFileSync(files.managementFile, 'utf8')) as { positions: { pending: unknown; sl: number | null; stopMoves: number }[] };
    saved.positions[0]!.pending = { kind: 'modify', sl: 1.0851, tp: null, cause: 'trailing_stop', trailActiveAt: 1.0861 };
    saved.positions[0]!.sl = null;
    saved.positions[0]!.stopMoves = 0;
    fs.writeFileSync(files.managementFile, JSON.stringify(saved));

    const second = terminal(files);
    expect(second.management.trades.get(ticket)).toMatchObject({ sl: 1.0851, stopMoves: 1, pending: null });
    await bid(second, 1.0861);
    expect(ops('trailing_stop')).toHaveLength(1);
  });
});
