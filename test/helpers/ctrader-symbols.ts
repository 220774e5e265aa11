/**
 * The symbols of the cTrader Open API double, as ProtoOASymbol (OpenApiModelMessages.proto) gives them: digits, pip
 * position, lot size and volumes in cents of units, and the double's own quote and trading session.
 */

export interface DoubleSymbol {
  symbolId: number;
  symbolName: string;
  digits: number;
  pipPosition: number;
  /** cents of units per lot */
  lotSize: number;
  minVolume: number;
  stepVolume: number;
  maxVolume: number;
  bid: number;
  ask: number;
  open?: boolean;
  /** The assets it trades, when its name does not say them (six letters: base then quote; else the name, in USD). */
  baseAsset?: string;
  quoteAsset?: string;
}

/** EURUSD and USDJPY as a typical FX broker lists them: lot 100 000 units, step and minimum 1 000 units (0.01 lot). */
export const DEFAULT_SYMBOLS: DoubleSymbol[] = [
  {
    symbolId: 1,
    symbolName: 'EURUSD',
    digits: 5,
    pipPosition: 4,
    lotSize: 10_000_000,
    minVolume: 100_000,
    stepVolume: 100_000,
    maxVolume: 1_000_000_000,
    bid: 1.085,
    ask: 1.0851,
  },
  {
    symbolId: 4,
    symbolName: 'USDJPY',
    digits: 3,
    pipPosition: 2,
    lotSize: 10_000_000,
    minVolume: 100_000,
    stepVolume: 100_000,
    maxVolume: 1_000_000_000,
    bid: 150.0,
    ask: 150.012,
  },
  {
    symbolId: 41,
    symbolName: 'XAUUSD',
    digits: 2,
    pipPosition: 1,
    lotSize: 10_000,
    minVolume: 100,
    stepVolume: 100,
    maxVolume: 500_000,
    bid: 2350.0,
    ask: 2350.3,
  },
];
