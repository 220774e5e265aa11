import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { CTRADER_CONNECTOR_VERSION } from '../../src/ctrader/bridge';
import { OrderType, TradeSide, type Order, type Position } from '../../src/ctrader/messages';
import { connectorSetup, startConnectorProcess, type ConnectorProcess, type ConnectorSetup } from '../helpers/ctrader-connector';
import { CtraderDouble } from '../helpers/ctrader-double';
import type { DoubleSymbol } from '../helpers/ctrader-symbols';
import { waitFor } from '../../support/infra';
import { CONFORMANCE_SYMBOLS, CTRADER_CODES, type BridgeUnderTest, type BrokerView, type ConformanceAccount, type Quote, type StartOptions } from './driver';

/**
 * The cTrader connector (`npm run ctrader-connector`) under the conformance suite: one connector process per account,
 * each with its own Open API double (the broker side, kept across restarts, as are the connector's encrypted
 * credentials and exactly-once store). Crashes are the double's: on the first trading request it kills the connector's
 * process group before carrying the request out, or after and before any answer, so the connector's own recovery
 * (intent, reconcile by label, order history) is what the suite tests.
 */

/** Lot sizes in cents of units: 100 000 units per FX lot, 100 oz per gold lot, 1 unit per index lot. */
const LOT_SIZE: Record<string, number> = { XAUUSD: 10_000, US30: 100 };

function doubleSymbols(): DoubleSymbol[] {
  return CONFORMANCE_SYMBOLS.map((s, i) => {
    const lotSize = LOT_SIZE[s.name] ?? 10_000_000;
    return {
      symbolId: i + 1,
      symbolName: s.name,
      digits: s.digits,
      pipPosition: Math.round(-Math.log10(s.pip)),
      lotSize,
      stepVolume: Math.round(s.volumeStep * lotSize),
      minVolume: Math.round(s.volumeMin * lotSize),
      maxVolume: Math.round(s.volumeMax * lotSize),
      bid: s.bid,
      ask: Number((s.bid + s.spread).toFixed(s.digits)),
    };
  });
}

interface Run {
  double: CtraderDouble;
  setup: ConnectorSetup;
  ctid: number;
  process?: ConnectorProcess;
}

export class CtraderConnectorDriver implements BridgeUnderTest {
  readonly platform = 'ctrader' as const;
  readonly bridgeVersion = CTRADER_CONNECTOR_VERSION;
  readonly codes = CTRADER_CODES;
  /** Connector 1.5.0 runs trade management (docs/ctrader-connector.md, "Trade management"). */
  readonly managesTrades = true;
  private readonly runs = new Map<string, Run>();
  private readonly application = { clientId: `conf_${randomBytes(4).toString('hex')}`, clientSecret: randomBytes(24).toString('hex') };
  private nextCtid = 8_000_001;

  /** The cases run over the connector's multi-account session, as it always speaks. */
  readonly name = 'cTrader connector (Open API double, session)';

  private run(accountId: string): Run {
    const r = this.runs.get(accountId);
    if (!r) throw new Error(`${this.name}: ${accountId} was never started`);
    return r;
  }

  async start(account: ConformanceAccount, ingressUrl: string, options: StartOptions = {}): Promise<void> {
    if (!this.runs.has(account.id)) {
      const ctid = this.nextCtid++;
      const tokens = { accessToken: `at_${randomBytes(16).toString('hex')}`, refreshToken: `rt_${randomBytes(16).toString('hex')}` };
      const double = await CtraderDouble.start({ ...this.application, accounts: [{ ctid, ...tokens }], symbols: doubleSymbols() });
      const setup = connectorSetup(`conf-${account.id}`, this.application, [
        { accountId: account.id, ctidTraderAccountId: ctid, environment: 'demo', bridgeToken: account.bridgeToken, ...tokens },
      ]);
      this.runs.set(account.id, { double, setup, ctid });
    }
    const run = this.run(account.id);
    if (run.process?.running) throw new Error(`${this.name}: ${account.id} is already running`);
    run.double.crashOnTrade = undefined;
    run.process = await startConnectorProcess({
      setup: run.setup,
      accountIds: [account.id],
      demoUrl: run.double.url,
      ingressUrl,
      label: account.id,
    });
    if (options.crash) {
      const proc = run.process;
      run.double.crashOnTrade = {
        phase: options.crash === 'before_fill' ? 'before' : 'after',
        crash: () => {
          try {
            process.kill(-proc.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        },
      };
    }
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
    await waitFor(`${proc.name} to die`, async () => !proc.running, timeoutMs, 50);
    await proc.kill9();
  }

  async broker(accountId: string): Promise<BrokerView> {
    const { double, ctid } = this.run(accountId);
    const account = double.account(ctid);
    const symbol = (id: number) => double.symbols.get(id)!;
    const side = (s: number) => (s === TradeSide.BUY ? ('buy' as const) : ('sell' as const));
    const lots = (id: number, volume: number) => Number((volume / symbol(id).lotSize).toPrecision(12));
    const position = (p: Position) => ({
      ticket: String(p.positionId),
      symbol: symbol(p.tradeData.symbolId).symbolName,
      side: side(p.tradeData.tradeSide),
      volume: lots(p.tradeData.symbolId, p.tradeData.volume),
      openPrice: p.price!,
      sl: p.stopLoss ?? null,
      tp: p.takeProfit ?? null,
    });
    const order = (o: Order) => {
      const s = symbol(o.tradeData.symbolId);
      const type = o.orderType === OrderType.LIMIT ? ('limit' as const) : o.orderType === OrderType.STOP ? ('stop' as const) : ('stop_limit' as const);
      // A STOP_LIMIT's limit is its slippage range from the trigger, on the side the connector put it (docs/ctrader-connector.md).
      const dir = o.tradeData.tradeSide === TradeSide.BUY ? 1 : -1;
      const price =
        type === 'limit'
          ? o.limitPrice!
          : type === 'stop'
            ? o.stopPrice!
            : Number((o.stopPrice! - (dir * (o.slippageInPoints ?? 0)) / 10 ** s.digits).toFixed(s.digits));
      return {
        ticket: String(o.orderId),
        symbol: s.symbolName,
        side: side(o.tradeData.tradeSide),
        type,
        volume: lots(o.tradeData.symbolId, o.tradeData.volume),
        price,
        stopLimitPrice: type === 'stop_limit' ? o.stopPrice! : null,
        sl: o.stopLoss ?? null,
        tp: o.takeProfit ?? null,
        expiry: o.expirationTimestamp !== undefined ? new Date(o.expirationTimestamp).toISOString() : null,
      };
    };
    return {
      positions: [...account.positions.values()].map(position),
      orders: [...account.orders.values()].map(order),
      entries: account.entries.map((e) => ({
        kind: e.kind,
        ticket: String(e.id),
        symbol: symbol(e.symbolId).symbolName,
        side: side(e.tradeSide),
        volume: lots(e.symbolId, e.volume),
      })),
      native: {
        positions: [...account.positions.values()],
        orders: [...account.orders.values()],
        violations: double.violations,
        selfViolations: double.selfViolations,
      },
    };
  }

  async setQuote(accountId: string, symbol: string, quote: Quote): Promise<void> {
    this.run(accountId).double.setQuote(symbol, quote.bid, quote.ask);
  }

  /** The trader's click in cTrader: the whole position closed by a MARKET order the connector did not send. */
  async manualClose(accountId: string, ticket: string): Promise<void> {
    const { double, ctid } = this.run(accountId);
    double.closeByHand(ctid, Number(ticket));
  }

  async setMarketOpen(accountId: string, symbol: string, open: boolean): Promise<void> {
    this.run(accountId).double.setMarketOpen(symbol, open);
  }

  async cleanup(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.process?.stop() ?? Promise.resolve()));
    for (const r of this.runs.values()) {
      // The suite ran against the published definitions only: no request of the connector broke them.
      if (r.double.violations.length > 0) throw new Error(`the connector sent requests outside the Open API definitions: ${r.double.violations.join('; ')}`);
      await r.double.close();
      fs.rmSync(r.setup.dir, { recursive: true, force: true });
    }
  }
}
