import type { AccountFigures } from '../domain/bridge-protocol';
import type { CtraderAccount } from './account';

/**
 * The account's money as Open API has it now, read afresh each time (nothing cached but names and conversion
 * chains): balance from ProtoOATraderReq, equity = balance + the open positions' net unrealized P&L
 * (ProtoOAGetPositionUnrealizedPnLReq), margin = the positions' usedMargin (ProtoOAReconcileReq), the currency from
 * the deposit asset (ProtoOAAssetListReq). What sizing, the loss guards and the protocol 1.2 figures all use.
 */

export type FiguresAccount = Pick<CtraderAccount, 'trader' | 'unrealizedPnl' | 'assetName' | 'reconcile' | 'conversionChain' | 'quote'>;

export interface LiveAccount extends AccountFigures {
  depositAssetId: number;
}

/** Figures that could not be read in time or at all: the entry is refused, never sized on a guess. */
export class FiguresUnavailable extends Error {}

/** Rejects with FiguresUnavailable when `work` has not settled within `ms`, or failed. */
export async function within<T>(ms: number, what: string, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FiguresUnavailable(`${what}: no answer within ${ms} ms`)), Math.max(1, ms));
  });
  try {
    return await Promise.race([work(), deadline]);
  } catch (err) {
    throw err instanceof FiguresUnavailable ? err : new FiguresUnavailable(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

export async function readAccount(acct: FiguresAccount, opts: { timeoutMs: number; withMargin?: boolean }): Promise<LiveAccount> {
  return within(opts.timeoutMs, "the account's figures", async () => {
    const timeoutMs = opts.timeoutMs;
    const trader = await acct.trader({ timeoutMs });
    const pnl = await acct.unrealizedPnl({ timeoutMs });
    const currency = await acct.assetName(trader.depositAssetId, { timeoutMs });
    if (!currency) throw new Error(`no name for the deposit asset ${trader.depositAssetId}`);
    const round = (n: number) => Number(n.toFixed(trader.moneyDigits));
    const equity = round(trader.balance + [...pnl.values()].reduce((sum, v) => sum + v, 0));
    const figures: LiveAccount = { balance: trader.balance, equity, currency, depositAssetId: trader.depositAssetId };
    if (!opts.withMargin) return figures;
    const { positions } = await acct.reconcile();
    // The margin only when every position says what it uses: a partial sum would understate it.
    if (!positions.every((p) => p.usedMargin !== undefined)) return figures;
    const margin = round(positions.reduce((sum, p) => sum + p.usedMargin! / 10 ** (p.moneyDigits ?? trader.moneyDigits), 0));
    return { ...figures, margin, freeMargin: round(equity - margin) };
  });
}

/**
 * Deposit currency per unit of the quote asset: 1 when they are the same, else the product along the conversion
 * chain of each symbol's live mid price (× going from its base to its quote, ÷ the other way). Undefined when the
 * broker has no chain between them.
 */
export async function quoteToDeposit(
  acct: FiguresAccount,
  quoteAssetId: number,
  depositAssetId: number,
  timeoutMs: number,
  /** Told each symbol whose price the rate rests on (how old it is bounds the figures: src/ctrader/risk.ts). */
  onQuote: (symbolId: number) => void = () => undefined,
): Promise<number | undefined> {
  if (quoteAssetId === depositAssetId) return 1;
  return within(timeoutMs, 'the conversion rate', async () => {
    const chain = await acct.conversionChain(quoteAssetId, depositAssetId, { timeoutMs });
    if (chain.length === 0) return undefined;
    let asset = quoteAssetId;
    let rate = 1;
    for (const s of chain) {
      const q = await acct.quote(s.symbolId, timeoutMs);
      onQuote(s.symbolId);
      const mid = (q.bid + q.ask) / 2;
      if (s.baseAssetId === asset) {
        rate *= mid;
        asset = s.quoteAssetId!;
      } else if (s.quoteAssetId === asset) {
        rate /= mid;
        asset = s.baseAssetId!;
      } else {
        return undefined;
      }
    }
    return asset === depositAssetId ? rate : undefined;
  });
}

/** The figures of the protocol (hello, reports, heartbeat): the live account without its deposit asset id. */
export function protocolFigures(live: LiveAccount): AccountFigures {
  const { depositAssetId: _id, ...figures } = live;
  return figures;
}
