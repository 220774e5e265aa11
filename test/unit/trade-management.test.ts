import fs from 'node:fs';
import path from 'node:path';
import {
  entryRefusal,
  onQuote,
  resume,
  settle,
  startManaging,
  type Intent,
  type ManagedPosition,
  type ManagementAsked,
  type SymbolRules,
} from '../../src/bridge-kit/trade-management';

/** The shared vectors (test/fixtures/trade-management-vectors.json): the MT5 bridge's port runs the same file. */
interface Step {
  quote?: { bid: number; ask: number };
  nowMs?: number;
  intent?: Intent | null;
  answer?: 'done' | 'failed' | 'crash';
  restart?: { sl: number | null; tp: number | null; volume: number } | null;
  expect?: { sl?: number | null; stopMoves?: number; volume?: number; levelsHit?: number; breakevenDone?: boolean; trailActiveAt?: number; gone?: boolean };
}
interface Case {
  name: string;
  rules?: SymbolRules;
  asked: ManagementAsked;
  fill: { side: 'buy' | 'sell'; openPrice: number; volume: number; sl: number | null; tp: number | null };
  expectLevels?: { price: number; volume: number }[];
  steps: Step[];
}
const vectors = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/trade-management-vectors.json'), 'utf8')) as {
  eurusd: SymbolRules;
  cases: Case[];
};

describe('trade management engine, on the shared vectors', () => {
  test.each(vectors.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    let p: ManagedPosition | null = startManaging(c.asked, { ticket: '1', symbol: 'EURUSD', ...c.fill }, c.rules ?? vectors.eurusd)!;
    expect(p).toBeDefined();
    if (c.expectLevels) expect(p.levels.map(({ price, volume }) => ({ price, volume }))).toEqual(c.expectLevels);
    c.steps.forEach((step, i) => {
      const where = `step ${i}`;
      if (step.quote) {
        expect({ where, gone: p === null }).toEqual({ where, gone: false });
        const next = onQuote(p!, step.quote, step.nowMs ?? 10_000 * (i + 1));
        expect({ where, intent: next.intent }).toEqual({ where, intent: step.intent ?? null });
        p = next.position;
        if (next.intent && step.answer !== 'crash') p = settle(p, step.answer ?? 'done', step.nowMs ?? 10_000 * (i + 1));
      } else if (step.restart !== undefined) {
        p = resume(p!, step.restart);
      }
      const e = step.expect;
      if (!e) return;
      if (e.gone !== undefined) expect({ where, gone: p === null }).toEqual({ where, gone: e.gone });
      if (p === null) return;
      const seen = {
        where,
        ...(e.sl !== undefined ? { sl: p.sl } : {}),
        ...(e.stopMoves !== undefined ? { stopMoves: p.stopMoves } : {}),
        ...(e.volume !== undefined ? { volume: p.volume } : {}),
        ...(e.levelsHit !== undefined ? { levelsHit: p.levels.filter((l) => l.hit).length } : {}),
        ...(e.breakevenDone !== undefined ? { breakevenDone: p.breakeven?.done } : {}),
        ...(e.trailActiveAt !== undefined ? { trailActiveAt: p.trail?.activeAt } : {}),
      };
      const { gone: _gone, ...wanted } = e;
      expect(seen).toEqual({ where, ...wanted });
    });
  });

  test('nothing asked, nothing managed', () => {
    expect(
      startManaging({}, { ticket: '1', symbol: 'EURUSD', side: 'buy', openPrice: 1.085, volume: 0.1, sl: null, tp: null }, vectors.eurusd),
    ).toBeUndefined();
  });

  test('no call is asked while one is in flight', () => {
    const p = startManaging(
      { breakevenTriggerPips: 5 },
      { ticket: '1', symbol: 'EURUSD', side: 'buy', openPrice: 1.085, volume: 0.1, sl: null, tp: null },
      vectors.eurusd,
    )!;
    const first = onQuote(p, { bid: 1.086, ask: 1.0861 }, 0);
    expect(first.intent).not.toBeNull();
    expect(onQuote(first.position, { bid: 1.087, ask: 1.0871 }, 1).intent).toBeNull();
  });

  test('a stop the price has already passed is not asked for (the broker would refuse it)', () => {
    const p = startManaging(
      { trailDistancePips: 3, trailTriggerPips: 0, trailStepPips: 1 },
      { ticket: '1', symbol: 'EURUSD', side: 'buy', openPrice: 1.085, volume: 0.1, sl: null, tp: null },
      vectors.eurusd,
    )!;
    // The trail's best was 1.0870 (read back after a restart) and the bid has fallen 5 pips since: its stop 1.0867 is above the bid.
    const fallen: ManagedPosition = { ...p, trail: { ...p.trail!, activeAt: 1.086, best: 1.087 } };
    expect(onQuote(fallen, { bid: 1.0865, ask: 1.0866 }, 0).intent).toBeNull();
    expect(onQuote(fallen, { bid: 1.0868, ask: 1.0869 }, 0).intent).toMatchObject({ kind: 'modify', sl: 1.0867, cause: 'trailing_stop' });
  });
});

describe('entryRefusal: what refuses an entry before anything is closed or placed', () => {
  const q = { bid: 1.085, ask: 1.0852 };
  test('a spread wider than the max is refused, naming both', () => {
    expect(entryRefusal({ maxSpreadPips: 1.5 }, 'buy', q, 0.0001)).toEqual({ reason: 'spread_too_wide', message: 'spread 2 pips > max 1.5' });
    expect(entryRefusal({ maxSpreadPips: 2 }, 'buy', q, 0.0001)).toBeUndefined();
  });
  test('a level price on the losing side of the price, or past the final take profit, is refused', () => {
    expect(entryRefusal({ takeProfits: [{ tp: 1.0851, closePercent: 50 }] }, 'buy', q, 0.0001)?.reason).toBe('take_profit_level_invalid');
    expect(entryRefusal({ takeProfits: [{ tp: 1.0849, closePercent: 50 }] }, 'sell', q, 0.0001)).toBeUndefined();
    expect(entryRefusal({ takeProfits: [{ tp: 1.0851, closePercent: 50 }] }, 'sell', q, 0.0001)?.message).toBe(
      'take-profit level 1.0851 is not below the bid 1.085',
    );
    expect(entryRefusal({ tp: 1.087, takeProfits: [{ tp: 1.0875, closePercent: 50 }] }, 'buy', q, 0.0001)?.reason).toBe('take_profit_level_invalid');
    expect(entryRefusal({ tp: 1.087, takeProfits: [{ tp: 1.086, closePercent: 50 }] }, 'buy', q, 0.0001)).toBeUndefined();
  });
});
