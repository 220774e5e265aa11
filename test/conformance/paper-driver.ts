import fs from 'node:fs';
import path from 'node:path';
import type { BrokerState } from '../../src/paper/broker';
import { managementFileFor, readLedger, stateFileFor, tradesFileFor } from '../../src/paper/ledger';
import { readStateFile } from '../../src/paper/state-file';
import type { MarketFile } from '../../src/paper/market-file';
import { DEFAULT_BRIDGE_VERSIONS } from '../../src/paper/terminal';
import { startPaperBridgeProcess } from '../../support/processes';
import { CTRADER_CODES, MT5_CODES, type BridgeUnderTest, type BrokerView, type ConformanceAccount, type Platform, type StartOptions } from './driver';
import { ProcessPerAccountDriver } from './process-driver';

/**
 * The paper bridge (`node dist/src/paper/main.js`) under the conformance suite: one process per account, its ledger,
 * journal, state and trade-outbox files in a directory of its own (they survive restarts), its market steered with
 * `--market FILE`, the trader's clicks with `--trader FILE` and its crashes armed with
 * `--fault crash-before-fill|crash-after-fill`.
 */
export class PaperBridgeDriver extends ProcessPerAccountDriver<MarketFile> implements BridgeUnderTest {
  readonly name: string;
  readonly bridgeVersion: string;
  readonly codes;
  /** Trade management (protocol 1.6): the paper bridge runs all of it (docs/paper-bridge.md, "Trade management"). */
  readonly managesTrades = true;

  /** The cases run over the process's multi-account session (protocol 1.7), as it always speaks. */
  constructor(readonly platform: Platform) {
    super();
    this.name = `paper bridge (${platform}, session)`;
    this.bridgeVersion = DEFAULT_BRIDGE_VERSIONS[platform];
    this.codes = platform === 'mt5' ? MT5_CODES : CTRADER_CODES;
  }

  private ledgerFile(accountId: string): string {
    return path.join(this.run(accountId).dir, 'ledger.jsonl');
  }

  /** The account's state file (the broker's state, the equity marks, the stop-out's mark). */
  stateFile(accountId: string): string {
    return stateFileFor(this.ledgerFile(accountId), accountId);
  }

  /** `fault`: any other `--fault` of the paper bridge (e.g. `crash-after-stop-out-mark`), for tests beyond the suite. */
  async start(account: ConformanceAccount, ingressUrl: string, options: StartOptions & { fault?: string } = {}): Promise<void> {
    const run = this.prepare(account.id, 'paper', () => ({ quotes: {}, closed: [] }));
    const registryFile = path.join(run.dir, 'registry.json');
    fs.writeFileSync(registryFile, JSON.stringify({ accounts: [account] }), { mode: 0o600 });
    const extraArgs = ['--market', this.marketFile(account.id), '--trader', this.traderFile(account.id), '--tick-ms', '100'];
    if (options.crash) extraArgs.push('--fault', options.crash === 'before_fill' ? 'crash-before-fill' : 'crash-after-fill');
    if (options.fault) extraArgs.push('--fault', options.fault);
    run.process = await startPaperBridgeProcess({ registryFile, ledgerFile: this.ledgerFile(account.id), ingressUrl, extraArgs, label: `paper-${account.id}` });
  }

  private traderFile(accountId: string): string {
    return path.join(this.run(accountId).dir, 'trader.jsonl');
  }

  /** The trader's click, as the terminal reads it on its next market tick. */
  async manualClose(accountId: string, ticket: string): Promise<void> {
    fs.appendFileSync(this.traderFile(accountId), `${JSON.stringify({ accountId, op: 'close', ticket })}\n`);
  }

  /** The account's managed positions (trade management, protocol 1.6). */
  managementFile(accountId: string): string {
    return managementFileFor(this.ledgerFile(accountId), accountId);
  }

  /** The account's trade events the service has not answered yet. */
  tradesFile(accountId: string): string {
    return tradesFileFor(this.ledgerFile(accountId), accountId);
  }

  async broker(accountId: string): Promise<BrokerView> {
    const file = stateFileFor(this.ledgerFile(accountId), accountId);
    const state: BrokerState = readStateFile(file)?.broker ?? { nextTicket: 0, balance: 0, positions: [], orders: [] };
    const ledger = readLedger(this.ledgerFile(accountId)).filter((l) => l.accountId === accountId);
    return {
      positions: state.positions.map((p) => ({
        ticket: p.ticket,
        symbol: p.symbol,
        side: p.side,
        volume: p.volume,
        openPrice: p.openPrice,
        sl: p.sl,
        tp: p.tp,
      })),
      orders: state.orders.map((o) => ({
        ticket: o.ticket,
        symbol: o.symbol,
        side: o.side,
        type: o.type,
        volume: o.volume,
        price: o.price,
        stopLimitPrice: o.stopLimitPrice,
        sl: o.sl,
        tp: o.tp,
        expiry: o.expiry,
      })),
      entries: ledger
        .filter((l) => l.cause === 'command' && (l.op === 'open' || l.op === 'place'))
        .map((l) => ({
          kind: l.op === 'open' ? ('position' as const) : ('order' as const),
          ticket: l.ticket,
          symbol: l.symbol,
          side: l.side,
          volume: l.volume,
        })),
      native: { state, ledger },
    };
  }
}
