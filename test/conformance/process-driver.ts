import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '../../support/infra';
import { processLogDir, type ServiceProcess } from '../../support/processes';
import type { Quote } from './driver';

/** What a steered broker-side market file holds at least: quotes by symbol and the closed markets. */
export interface SteeredMarket {
  quotes: Record<string, Quote>;
  closed: string[];
}

/**
 * The part every process-per-account driver shares: a directory per account (kept across restarts), the bridge
 * process of the account, and the broker side's market steered through `<dir>/market.json` (written atomically).
 */
export abstract class ProcessPerAccountDriver<M extends SteeredMarket> {
  abstract readonly name: string;
  protected readonly runs = new Map<string, { dir: string; market: M; process?: ServiceProcess }>();

  protected run(accountId: string) {
    const run = this.runs.get(accountId);
    if (!run) throw new Error(`${this.name}: ${accountId} was never started`);
    return run;
  }

  /** The account's directory and market on its first start (written out at once); the same ones afterwards. */
  protected prepare(accountId: string, label: string, market: () => M) {
    if (!this.runs.has(accountId)) {
      const dir = path.join(processLogDir(), `conformance-${label}-${accountId}`);
      fs.mkdirSync(dir, { recursive: true });
      this.runs.set(accountId, { dir, market: market() });
      this.writeMarket(accountId);
    }
    const run = this.run(accountId);
    if (run.process?.running) throw new Error(`${this.name}: ${accountId} is already running`);
    return run;
  }

  async stop(accountId: string): Promise<void> {
    await this.run(accountId).process?.stop();
  }

  async kill(accountId: string): Promise<void> {
    await this.run(accountId).process?.kill9();
  }

  async exited(accountId: string, timeoutMs: number): Promise<void> {
    const proc = this.run(accountId).process;
    if (!proc) throw new Error(`${this.name}: ${accountId} has no process`);
    await waitFor(`${proc.name} to exit by itself`, async () => !proc.running, timeoutMs, 50);
    await proc.kill9(); // reaps the (already dead) group
  }

  async setQuote(accountId: string, symbol: string, quote: Quote): Promise<void> {
    this.run(accountId).market.quotes[symbol] = quote;
    this.writeMarket(accountId);
  }

  async setMarketOpen(accountId: string, symbol: string, open: boolean): Promise<void> {
    const market = this.run(accountId).market;
    market.closed = market.closed.filter((s) => s !== symbol).concat(open ? [] : [symbol]);
    this.writeMarket(accountId);
  }

  async cleanup(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.process?.stop() ?? Promise.resolve()));
  }

  protected marketFile(accountId: string): string {
    return path.join(this.run(accountId).dir, 'market.json');
  }

  /** Writes the account's market out after a driver changed it in place. */
  protected saveMarket(accountId: string): void {
    this.writeMarket(accountId);
  }

  private writeMarket(accountId: string): void {
    const file = this.marketFile(accountId);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(this.run(accountId).market));
    fs.renameSync(`${file}.tmp`, file);
  }
}
