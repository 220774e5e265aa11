import fs from 'node:fs';
import path from 'node:path';
import type { BrokerState } from '../../src/paper/broker';
import { readLedger, stateFileFor } from '../../src/paper/ledger';
import type { MarketFile } from '../../src/paper/market-file';
import { DEFAULT_BRIDGE_VERSIONS } from '../../src/paper/terminal';
import { waitFor } from '../helpers/infra';
import { processLogDir, startPaperBridgeProcess, type PaperBridgeProcess } from '../helpers/processes';
import { CTRADER_CODES, MT5_CODES, type BridgeUnderTest, type BrokerView, type ConformanceAccount, type Platform, type Quote, type StartOptions } from './driver';

/**
 * The paper bridge (`node dist/src/paper/main.js`) under the conformance suite: one process per account, its ledger,
 * journal and state files in a directory of its own (they survive restarts), its market steered with `--market FILE`
 * and its crashes armed with `--fault crash-before-fill|crash-after-fill`.
 */
export class PaperBridgeDriver implements BridgeUnderTest {
  readonly name: string;
  readonly bridgeVersion: string;
  readonly codes;
  private readonly runs = new Map<string, { dir: string; process?: PaperBridgeProcess; market: MarketFile }>();

  constructor(readonly platform: Platform) {
    this.name = `paper bridge (${platform})`;
    this.bridgeVersion = DEFAULT_BRIDGE_VERSIONS[platform];
    this.codes = platform === 'mt5' ? MT5_CODES : CTRADER_CODES;
  }

  private account(accountId: string) {
    const run = this.runs.get(accountId);
    if (!run) throw new Error(`${this.name}: ${accountId} was never started`);
    return run;
  }

  private files(accountId: string) {
    const dir = this.account(accountId).dir;
    return { registry: path.join(dir, 'registry.json'), ledger: path.join(dir, 'ledger.jsonl'), market: path.join(dir, 'market.json') };
  }

  async start(account: ConformanceAccount, ingressUrl: string, options: StartOptions = {}): Promise<void> {
    if (!this.runs.has(account.id)) {
      const dir = path.join(processLogDir(), `conformance-paper-${account.id}`);
      fs.mkdirSync(dir, { recursive: true });
      this.runs.set(account.id, { dir, market: { quotes: {}, closed: [] } });
      fs.writeFileSync(path.join(dir, 'registry.json'), JSON.stringify({ accounts: [account] }), { mode: 0o600 });
      this.writeMarket(account.id);
    }
    const run = this.account(account.id);
    if (run.process?.running) throw new Error(`${this.name}: ${account.id} is already running`);
    const f = this.files(account.id);
    const extraArgs = ['--market', f.market, '--tick-ms', '100'];
    if (options.crash) extraArgs.push('--fault', options.crash === 'before_fill' ? 'crash-before-fill' : 'crash-after-fill');
    run.process = await startPaperBridgeProcess({ registryFile: f.registry, ledgerFile: f.ledger, ingressUrl, extraArgs, label: `paper-${account.id}` });
  }

  async stop(accountId: string): Promise<void> {
    await this.account(accountId).process?.stop();
  }

  async kill(accountId: string): Promise<void> {
    await this.account(accountId).process?.kill9();
  }

  async exited(accountId: string, timeoutMs: number): Promise<void> {
    const proc = this.account(accountId).process;
    if (!proc) throw new Error(`${this.name}: ${accountId} has no process`);
    await waitFor(`${proc.name} to exit by itself`, async () => !proc.running, timeoutMs, 50);
    await proc.kill9(); // reaps the (already dead) group
  }

  async broker(accountId: string): Promise<BrokerView> {
    const f = this.files(accountId);
    const file = stateFileFor(f.ledger, accountId);
    const state: BrokerState = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as BrokerState) : { nextTicket: 0, balance: 0, positions: [], orders: [] };
    const ledger = readLedger(f.ledger).filter((l) => l.accountId === accountId);
    return {
      positions: state.positions.map((p) => ({ ticket: p.ticket, symbol: p.symbol, side: p.side, volume: p.volume, openPrice: p.openPrice, sl: p.sl, tp: p.tp })),
      orders: state.orders.map((o) => ({
        ticket: o.ticket, symbol: o.symbol, side: o.side, type: o.type, volume: o.volume, price: o.price, stopLimitPrice: o.stopLimitPrice, sl: o.sl, tp: o.tp, expiry: o.expiry,
      })),
      entries: ledger
        .filter((l) => l.cause === 'command' && (l.op === 'open' || l.op === 'place'))
        .map((l) => ({ kind: l.op === 'open' ? ('position' as const) : ('order' as const), ticket: l.ticket, symbol: l.symbol, side: l.side, volume: l.volume })),
      native: { state, ledger },
    };
  }

  async setQuote(accountId: string, symbol: string, quote: Quote): Promise<void> {
    this.account(accountId).market.quotes[symbol] = quote;
    this.writeMarket(accountId);
  }

  async setMarketOpen(accountId: string, symbol: string, open: boolean): Promise<void> {
    const market = this.account(accountId).market;
    market.closed = market.closed.filter((s) => s !== symbol).concat(open ? [] : [symbol]);
    this.writeMarket(accountId);
  }

  async cleanup(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.process?.stop()));
  }

  private writeMarket(accountId: string): void {
    const file = this.files(accountId).market;
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(this.account(accountId).market));
    fs.renameSync(`${file}.tmp`, file);
  }
}
