import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManagedTrades, type ManagementBroker } from '../../src/bridge-kit/managed-trades';
import { startManaging } from '../../src/bridge-kit/trade-management';

const rules = { pip: 0.0001, digits: 5, volumeStep: 0.01, volumeMin: 0.01 };
const fill = { ticket: '7', symbol: 'EURUSD', side: 'buy' as const, openPrice: 1.085, volume: 0.1, sl: 1.083, tp: null };

describe('ManagedTrades: the state file a restart reads back', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'managed-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a move the bridge died in is found in the file; the broker holding it means it is not made again', async () => {
    const file = path.join(dir, 'm.json');
    const calls: string[] = [];
    let die = true;
    const broker: ManagementBroker = {
      moveStop: async (_p, intent) => {
        calls.push(`stop ${intent.sl}`);
        // The bridge dies in the call: the broker took it, the answer never came back.
        if (die) return new Promise<never>(() => {});
        return 'done';
      },
      closeLevel: async () => 'done',
    };
    const first = new ManagedTrades({ file, broker });
    first.add(startManaging({ trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 }, fill, rules)!);
    void first.onQuote('EURUSD', { bid: 1.086, ask: 1.0861 });
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['stop 1.085']);

    die = false;
    const second = new ManagedTrades({ file, broker });
    expect(second.get('7')?.pending).toMatchObject({ kind: 'modify', sl: 1.085 });
    second.resumeFrom(() => ({ sl: 1.085, tp: null, volume: 0.1 }));
    expect(second.get('7')).toMatchObject({ pending: null, stopMoves: 1, sl: 1.085 });
    await second.onQuote('EURUSD', { bid: 1.086, ask: 1.0861 });
    expect(calls).toEqual(['stop 1.085']);
    await second.onQuote('EURUSD', { bid: 1.0862, ask: 1.0863 });
    expect(calls).toEqual(['stop 1.085', 'stop 1.0852']);
    expect(new ManagedTrades({ file, broker }).get('7')).toMatchObject({ stopMoves: 2, sl: 1.0852 });
  });

  test('a position the broker no longer holds is dropped at resume; a refused call is kept and tried a second later', async () => {
    const file = path.join(dir, 'm.json');
    let now = 0;
    const answers: ('done' | 'failed')[] = ['failed', 'done'];
    const broker: ManagementBroker = { moveStop: async () => answers.shift()!, closeLevel: async () => 'done' };
    const trades = new ManagedTrades({ file, broker, now: () => now });
    trades.add(startManaging({ breakevenTriggerPips: 10 }, fill, rules)!);
    trades.add(startManaging({ breakevenTriggerPips: 10 }, { ...fill, ticket: '8' }, rules)!);
    trades.resumeFrom((t) => (t === '7' ? { sl: 1.083, tp: null, volume: 0.1 } : null));
    expect(trades.tickets()).toEqual(['7']);
    await trades.onQuote('EURUSD', { bid: 1.086, ask: 1.0861 });
    expect(trades.get('7')).toMatchObject({ sl: 1.083, stopMoves: 0 });
    now = 500;
    await trades.onQuote('EURUSD', { bid: 1.086, ask: 1.0861 });
    expect(answers).toHaveLength(1);
    now = 1000;
    await trades.onQuote('EURUSD', { bid: 1.086, ask: 1.0861 });
    expect(trades.get('7')).toMatchObject({ sl: 1.085, stopMoves: 1 });
  });

  test('a state file of another version is refused, not guessed at', () => {
    const file = path.join(dir, 'm.json');
    fs.writeFileSync(file, JSON.stringify({ version: 2, positions: [] }));
    expect(() => new ManagedTrades({ file, broker: { moveStop: async () => 'done', closeLevel: async () => 'done' } })).toThrow(/unreadable management state/);
  });
});
