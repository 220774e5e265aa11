import type { Instrument } from '../domain/bridge-protocol';
import type { FullSymbol } from './messages';

/**
 * Units between the bridge protocol (lots, prices, pips) and Open API (volumes in cents of units, relative stops in
 * 1/100000 of a price unit, pip position). The definitions: ProtoOASymbol.lotSize/minVolume/maxVolume/stepVolume
 * "in cents", ProtoOANewOrderReq.volume "represented in 0.01 of a unit", relativeStopLoss "Specified in 1/100000 of
 * unit of a price", ProtoOASymbol.pipPosition "Pip position on digits".
 */

/** A symbol as the connector trades it: the full entity plus its name. Lot size is required to convert lots. */
export interface SymbolSpec {
  symbolId: number;
  name: string;
  digits: number;
  pipPosition: number;
  /** cents of units per lot */
  lotSize: number;
  /** cents of units */
  stepVolume: number;
  minVolume: number;
  maxVolume: number;
  /** The currency (asset) its prices are in (ProtoOALightSymbol.quoteAssetId): what sizing converts from. */
  quoteAssetId?: number;
}

/** A full symbol with a usable lot size and volume limits; undefined when the broker sent too little to size orders. */
export function symbolSpec(name: string, s: FullSymbol): SymbolSpec | undefined {
  if (!(s.lotSize && s.lotSize > 0)) return undefined;
  const step = s.stepVolume && s.stepVolume > 0 ? s.stepVolume : undefined;
  const min = s.minVolume && s.minVolume > 0 ? s.minVolume : step;
  if (step === undefined || min === undefined) return undefined;
  return {
    symbolId: s.symbolId,
    name,
    digits: s.digits,
    pipPosition: s.pipPosition,
    lotSize: s.lotSize,
    stepVolume: step,
    minVolume: min,
    maxVolume: s.maxVolume && s.maxVolume > 0 ? s.maxVolume : Number.MAX_SAFE_INTEGER,
  };
}

export function pipSize(spec: Pick<SymbolSpec, 'pipPosition'>): number {
  return Number((10 ** -spec.pipPosition).toFixed(spec.pipPosition));
}

/** Lots → Open API volume (cents of units). Rounded to a whole number of cents; the broker checks the step. */
export function lotsToVolume(lots: number, spec: Pick<SymbolSpec, 'lotSize'>): number {
  return Math.round(lots * spec.lotSize);
}

/** Open API volume (cents of units) → lots, without float noise (0.1 stays 0.1). */
export function volumeToLots(volume: number, spec: Pick<SymbolSpec, 'lotSize'>): number {
  return Number((volume / spec.lotSize).toPrecision(12));
}

/** Is the volume a whole number of steps within the symbol's min and max? (What TRADING_BAD_VOLUME guards.) */
export function isValidVolume(volume: number, spec: Pick<SymbolSpec, 'stepVolume' | 'minVolume' | 'maxVolume'>): boolean {
  return Number.isInteger(volume) && volume >= spec.minVolume && volume <= spec.maxVolume && volume % spec.stepVolume === 0;
}

/** A pip distance → a relative stop in 1/100000 of a price unit (what relativeStopLoss/relativeTakeProfit take). */
export function pipsToRelative(pips: number, spec: Pick<SymbolSpec, 'pipPosition'>): number {
  return Math.round(pips * pipSize(spec) * 100_000);
}

export function roundPrice(price: number, digits: number): number {
  return Number(price.toFixed(digits));
}

/** Distance between two prices in points (1/10^digits): what slippageInPoints of a STOP_LIMIT order counts. */
export function pointsBetween(a: number, b: number, digits: number): number {
  return Math.round(Math.abs(a - b) * 10 ** digits);
}

/** The symbol as the bridge hello reports it: lots, pip size and digits. */
export function toInstrument(spec: SymbolSpec): Instrument {
  return {
    name: spec.name,
    digits: spec.digits,
    pipSize: pipSize(spec),
    volumeStep: volumeToLots(spec.stepVolume, spec),
    volumeMin: volumeToLots(spec.minVolume, spec),
    volumeMax: volumeToLots(Math.min(spec.maxVolume, Number.MAX_SAFE_INTEGER), spec),
  };
}
