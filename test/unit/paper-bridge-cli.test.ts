import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_SYMBOLS, PaperBroker, baselineQuote } from '../../src/paper/broker';
import { FileMarket } from '../../src/paper/market-file';
import { parseArgs } from '../../src/paper/main';
import { parseFaults } from '../../src/paper/faults';

/** The paper bridge's command line (src/paper/main.ts) and its market file (src/paper/market-file.ts). */

describe('paper bridge CLI', () => {
  test('when no flags but the registry are given, then the defaults apply (ingress from PORT, versions 2.1.0 and 1.2.0)', () => {
    expect(parseArgs(['--registry', 'r.json'], { PORT: '9090' })).toMatchObject({
      registry: 'r.json',
      ingress: 'http://127.0.0.1:9090',
      versions: { mt5: '2.1.0', ctrader: '1.2.0' },
      closed: [],
      faults: [],
    });
    expect(parseArgs(['--registry=r.json'], { INGRESS_URL: 'http://x:1' })).toMatchObject({ ingress: 'http://x:1' });
    expect(parseArgs(['--registry', 'r.json'], {})).toMatchObject({ ingress: 'http://127.0.0.1:8080' });
  });

  test('when flags are given, then they override env and defaults', () => {
    const options = parseArgs(
      [
        '--registry',
        'r.json',
        '--ledger',
        'l.jsonl',
        '--ingress',
        'http://h:2',
        '--platform-version',
        'mt5=1.9.0',
        '--closed',
        'US30,GOLD',
        '--fault',
        'drop-before-report:2@a1',
      ],
      { INGRESS_URL: 'http://x:1', PAPER_FAULT: 'drop-before-report:9' },
    );
    expect(options).toMatchObject({
      ledger: 'l.jsonl',
      ingress: 'http://h:2',
      versions: { mt5: '1.9.0', ctrader: '1.2.0' },
      closed: ['US30', 'GOLD'],
      faults: [{ kind: 'drop-before-report', times: 2, accountId: 'a1' }],
    });
  });

  test('when PAPER_FAULT is set, then it is the fault; a malformed one or a missing registry is a usage error', () => {
    expect(parseArgs(['--registry', 'r.json'], { PAPER_FAULT: 'drop-before-report:1' })).toMatchObject({ faults: [{ times: 1 }] });
    expect(() => parseArgs(['--registry', 'r.json'], { PAPER_FAULT: 'explode' })).toThrow(/unknown fault/);
    expect(() => parseArgs([], {})).toThrow(/--registry is required/);
    expect(() => parseArgs(['--registry', 'r', '--platform-version', 'mt4=1.0.0'], {})).toThrow(/platform-version/);
    expect(parseArgs(['--help'], {})).toBe('help');
    expect(parseFaults('drop-before-report:1,drop-before-report:3@x,crash-after-fill@y,crash-before-fill')).toEqual([
      { kind: 'drop-before-report', times: 1 },
      { kind: 'drop-before-report', times: 3, accountId: 'x' },
      { kind: 'crash-after-fill', accountId: 'y' },
      { kind: 'crash-before-fill' },
    ]);
    expect(parseArgs(['--registry', 'r.json', '--market', 'm.json'], {})).toMatchObject({ market: 'm.json' });
  });
});

describe('paper market file', () => {
  test('when the file gives a quote or closes a market, then the broker fills at that quote and refuses the closed market; a missing file is the baseline, all open', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paper-market-')), 'market.json');
    const broker = new PaperBroker({ platform: 'mt5', feed: new FileMarket(file) });
    const eur = DEFAULT_SYMBOLS.find((s) => s.name === 'EURUSD')!;
    expect(broker.quote('EURUSD')).toEqual(baselineQuote(eur));
    expect(broker.isMarketOpen('US30')).toBe(true);
    fs.writeFileSync(file, JSON.stringify({ quotes: { EURUSD: { bid: 1.2, ask: 1.2001 } }, closed: ['US30'] }));
    expect(broker.execute({ action: 'buy', symbol: 'EURUSD', volume: 0.1 }).result).toMatchObject({ status: 'filled', price: 1.2001 });
    expect(broker.execute({ action: 'buy', symbol: 'US30', volume: 0.1 }).result).toMatchObject({ status: 'rejected', retcode: 10018 });
    fs.writeFileSync(file, '{"quotes": {"EURUSD": {"bid": 1.3, "ask": 1.2}}}');
    expect(() => broker.quote('EURUSD')).toThrow(/below bid/);
  });
});
