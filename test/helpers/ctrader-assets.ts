import type { DoubleSymbol } from './ctrader-symbols';

/**
 * The assets of the cTrader Open API double (ProtoOAAsset, ProtoOALightSymbol.baseAssetId/quoteAssetId,
 * ProtoOATrader.depositAssetId) and its answers to ProtoOASymbolsForConversionReq: what the connector needs to turn a
 * symbol's quote currency into the account's when it sizes by risk.
 */

/** A symbol's assets: as given, else six letters are base then quote, and anything else is itself, priced in USD. */
export function assetsOf(s: DoubleSymbol): { base: string; quote: string } {
  if (s.baseAsset !== undefined && s.quoteAsset !== undefined) return { base: s.baseAsset, quote: s.quoteAsset };
  return /^[A-Z]{6}$/.test(s.symbolName) ? { base: s.symbolName.slice(0, 3), quote: s.symbolName.slice(3) } : { base: s.symbolName, quote: 'USD' };
}

/** An amount in an asset → the deposit currency at the mid of a symbol between them (direct or inverse); else as is. */
export function toDepositCurrency(symbols: Iterable<DoubleSymbol>, deposit: string, amount: number, asset: string): number {
  if (asset === deposit) return amount;
  for (const x of symbols) {
    const { base, quote } = assetsOf(x);
    const mid = (x.bid + x.ask) / 2;
    if (base === asset && quote === deposit) return amount * mid;
    if (base === deposit && quote === asset) return amount / mid;
  }
  return amount;
}

export class DoubleAssets {
  private readonly ids = new Map<string, number>();

  constructor(
    private readonly symbols: Map<number, DoubleSymbol>,
    deposits: string[],
  ) {
    for (const name of ['USD', ...deposits, ...[...symbols.values()].flatMap((s) => Object.values(assetsOf(s)))])
      if (!this.ids.has(name)) this.ids.set(name, this.ids.size + 1);
  }

  idOf(name: string): number {
    return this.ids.get(name)!;
  }

  /** ProtoOAAssetListRes.asset */
  list(): Record<string, unknown>[] {
    return [...this.ids].map(([name, assetId]) => ({ assetId, name, displayName: name, digits: 2 }));
  }

  /** ProtoOALightSymbol of a symbol, with its assets' ids. */
  light(s: DoubleSymbol): Record<string, unknown> {
    const { base, quote } = assetsOf(s);
    return {
      symbolId: s.symbolId,
      symbolName: s.symbolName,
      enabled: true,
      baseAssetId: this.ids.get(base),
      quoteAssetId: this.ids.get(quote),
      symbolCategoryId: 1,
    };
  }

  /** The shortest chain of symbols from one asset to another (breadth first over the symbols); empty when none. */
  chain(first: number, last: number): DoubleSymbol[] {
    const names = new Map([...this.ids].map(([name, id]) => [id, name]));
    const from = names.get(first);
    const to = names.get(last);
    if (from === undefined || to === undefined || from === to) return [];
    const paths = new Map<string, DoubleSymbol[]>([[from, []]]);
    const queue = [from];
    while (queue.length > 0) {
      const asset = queue.shift()!;
      for (const s of this.symbols.values()) {
        const { base, quote } = assetsOf(s);
        const next = base === asset ? quote : quote === asset ? base : undefined;
        if (next === undefined || paths.has(next)) continue;
        const path = [...paths.get(asset)!, s];
        if (next === to) return path;
        paths.set(next, path);
        queue.push(next);
      }
    }
    return [];
  }
}
