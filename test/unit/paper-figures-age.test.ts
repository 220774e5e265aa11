import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_SYMBOLS, ManualFeed, PaperBroker, SyntheticFeed } from '../../src/paper/broker';
import { FileMarket } from '../../src/paper/market-file';
import { applyRisk, EquityMarks } from '../../src/paper/risk';
import { staleFigures } from '../../src/risk/figures-age';
import type { BridgeCommand } from '../../src/domain/bridge-protocol';

/** Stale figures on the paper bridge (docs/risk-sizing.md): an entry whose prices are older than the bound is refused. */

const T0 = Date.parse('2026-11-25T10:00:00Z');

function entry(fields: Partial<BridgeCommand>): BridgeCommand {
  return {
    commandId: 'signal/s1/account/a1',
    seq: 1,
    signalId: 's1',
    accountId: 'a1',
    action: 'buy',
    symbol: 'EURUSD',
    slPips: 20,
    riskSizing: { basis: 'equity_percent', value: 1 },
    figuresMaxAgeMs: 60_000,
    acceptedAt: new Date(T0).toISOString(),
    expiresAt: new Date(T0 + 3_600_000).toISOString(),
    ...fields,
  };
}

/** A USD account of 10,000 on a manual feed, with EURJPY beside the default symbols (JPY converts through USDJPY). */
function manualAccount() {
  let now = T0;
  const clock = () => now;
  const feed = new ManualFeed(clock);
  const usdjpy = DEFAULT_SYMBOLS.find((s) => s.name === 'USDJPY')!;
  const symbols = [...DEFAULT_SYMBOLS, { ...usdjpy, name: 'EURJPY', basePrice: 170 }];
  const broker = new PaperBroker({ platform: 'mt5', clock, feed, symbols, balance: 10_000 });
  return { feed, broker, marks: new EquityMarks(), advance: (ms: number) => (now += ms), now: () => now };
}

describe('staleFigures', () => {
  test('when the oldest quote is past the bound, then it names that symbol and its age', () => {
    const quotes = [
      { symbol: 'EURUSD', quotedAtMs: T0 - 61_000 },
      { symbol: 'USDJPY', quotedAtMs: T0 - 90_500 },
      { symbol: 'GBPUSD', quotedAtMs: undefined },
    ];
    expect(staleFigures(quotes, 60_000, T0)).toEqual({
      retcode: 'risk_figures_stale',
      message: expect.stringMatching(/^the last USDJPY quote is 90\.5 s old, past the 60\.0 s/),
    });
  });

  test('when every quote is within the bound (exactly at it too), or no bound came, then nothing is stale', () => {
    expect(staleFigures([{ symbol: 'EURUSD', quotedAtMs: T0 - 60_000 }], 60_000, T0)).toBeUndefined();
    expect(staleFigures([{ symbol: 'EURUSD', quotedAtMs: T0 - 600_000 }], undefined, T0)).toBeUndefined();
    expect(staleFigures([{ symbol: 'EURUSD', quotedAtMs: undefined }], 1, T0)).toBeUndefined();
  });
});

describe('the paper bridge bounds the age of the prices behind an entry', () => {
  test("when the entry's quote was set longer ago than the bound, then the sized entry is refused risk_figures_stale; a fresh quote sizes it", () => {
    const { feed, broker, marks, advance, now } = manualAccount();
    feed.set('EURUSD', 1.08, 1.0801);
    advance(60_001);
    expect(applyRisk(entry({}), broker, marks, now())).toEqual({
      refusal: { status: 'rejected', retcode: 'risk_figures_stale', message: expect.stringContaining('the last EURUSD quote is 60.0 s old') },
    });
    feed.set('EURUSD', 1.08, 1.0801);
    expect(applyRisk(entry({}), broker, marks, now())).toMatchObject({ command: { volume: 0.5 } });
  });

  test('when the conversion symbol is stale, then an EURJPY entry on a USD account is refused although EURJPY itself is fresh', () => {
    const { feed, broker, marks, advance, now } = manualAccount();
    feed.set('USDJPY', 150, 150.02);
    advance(120_000);
    feed.set('EURJPY', 170, 170.02);
    // EURJPY's tick is worth JPY, converted to USD at USDJPY, two minutes old.
    expect(applyRisk(entry({ symbol: 'EURJPY' }), broker, marks, now())).toMatchObject({
      refusal: { retcode: 'risk_figures_stale', message: expect.stringContaining('the last USDJPY quote is 120.0 s old') },
    });
    feed.set('USDJPY', 150, 150.02);
    expect(applyRisk(entry({ symbol: 'EURJPY' }), broker, marks, now())).toHaveProperty('command');
  });

  test("when an open position's quote is stale, then a guarded entry is refused (equity rests on it) but one sized on the balance is not", () => {
    const { feed, broker, marks, advance, now } = manualAccount();
    feed.set('GBPUSD', 1.3, 1.3002);
    expect(broker.execute({ action: 'buy', symbol: 'GBPUSD', volume: 0.1 }).result.status).toBe('filled');
    advance(61_000);
    feed.set('EURUSD', 1.08, 1.0801);
    const guarded = entry({ riskSizing: undefined, volume: 0.1, lossGuards: { dailyLossAmount: 500, timezone: 'UTC' } });
    expect(applyRisk(guarded, broker, marks, now())).toMatchObject({ refusal: { retcode: 'risk_figures_stale', message: expect.stringContaining('GBPUSD') } });
    expect(applyRisk(entry({ riskSizing: { basis: 'balance_percent', value: 1 } }), broker, marks, now())).toHaveProperty('command');
    expect(applyRisk(entry({ riskSizing: { basis: 'equity_percent', value: 1 } }), broker, marks, now())).toMatchObject({
      refusal: { retcode: 'risk_figures_stale' },
    });
  });

  test('when the command carries no bound (an older service), or it is an exit, then nothing is refused for age', () => {
    const { feed, broker, marks, advance, now } = manualAccount();
    feed.set('EURUSD', 1.08, 1.0801);
    advance(3_600_000);
    expect(applyRisk(entry({ figuresMaxAgeMs: undefined }), broker, marks, now())).toHaveProperty('command');
    expect(applyRisk(entry({ action: 'close_all', symbol: undefined }), broker, marks, now())).toHaveProperty('command');
  });

  test('when the market file was last written longer ago than the bound, then its quotes are stale; the synthetic feed never is', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'figures-age-'));
    const file = path.join(dir, 'market.json');
    fs.writeFileSync(file, JSON.stringify({ quotes: { EURUSD: { bid: 1.08, ask: 1.0801 } } }));
    const written = fs.statSync(file).mtimeMs;
    const fileBroker = new PaperBroker({ platform: 'mt5', clock: () => written + 61_000, feed: new FileMarket(file), balance: 10_000 });
    expect(fileBroker.quotedAt('EURUSD')).toBe(written);
    expect(fileBroker.quotedAt('USDJPY')).toBeUndefined();
    expect(applyRisk(entry({}), fileBroker, new EquityMarks(), written + 61_000)).toMatchObject({ refusal: { retcode: 'risk_figures_stale' } });
    expect(applyRisk(entry({}), fileBroker, new EquityMarks(), written + 59_000)).toHaveProperty('command');
    fs.rmSync(dir, { recursive: true, force: true });
    const synthetic = new PaperBroker({ platform: 'mt5', feed: new SyntheticFeed(), balance: 10_000 });
    expect(applyRisk(entry({ figuresMaxAgeMs: 1 }), synthetic, new EquityMarks(), Date.now() + 3_600_000)).toHaveProperty('command');
  });
});
