/** What the paper broker trades: the symbol table and how broker-side symbol names map to it. */

export interface SymbolSpec {
  /** Canonical name (what the feed and the table know), upper case. */
  name: string;
  /** Price decimals. */
  digits: number;
  /** Pip size in price units (slPips/tpPips are multiples of it). */
  pip: number;
  volumeStep: number;
  minVolume: number;
  maxVolume: number;
  /** Units per lot (100 000 for FX, 100 oz for gold, 1 for the index). */
  contractSize: number;
  /** The currency prices are quoted in (profit currency). */
  quoteCurrency: string;
  /** `always`: open around the clock; `weekdays`: closed on Saturday and Sunday (UTC). */
  session: 'always' | 'weekdays';
  /** Centre of the synthetic feed and the default of the manual feed. */
  basePrice: number;
  spreadPips: number;
}

const fx = (name: string, basePrice: number, spreadPips: number, quoteCurrency = 'USD'): SymbolSpec => ({
  name,
  digits: quoteCurrency === 'JPY' ? 3 : 5,
  pip: quoteCurrency === 'JPY' ? 0.01 : 0.0001,
  volumeStep: 0.01,
  minVolume: 0.01,
  maxVolume: 100,
  contractSize: 100_000,
  quoteCurrency,
  session: 'always',
  basePrice,
  spreadPips,
});

export const DEFAULT_SYMBOLS: readonly SymbolSpec[] = [
  fx('EURUSD', 1.085, 1.0),
  fx('GBPUSD', 1.27, 1.5),
  fx('AUDUSD', 0.66, 1.2),
  fx('USDJPY', 150.0, 1.2, 'JPY'),
  {
    name: 'XAUUSD',
    digits: 2,
    pip: 0.1,
    volumeStep: 0.01,
    minVolume: 0.01,
    maxVolume: 50,
    contractSize: 100,
    quoteCurrency: 'USD',
    session: 'always',
    basePrice: 2350,
    spreadPips: 3,
  },
  {
    name: 'US30',
    digits: 1,
    pip: 1,
    volumeStep: 0.1,
    minVolume: 0.1,
    maxVolume: 50,
    contractSize: 1,
    quoteCurrency: 'USD',
    session: 'weekdays',
    basePrice: 39_000,
    spreadPips: 2,
  },
];

/** How broker-side names map to the table: `EURUSD.m`, `EURUSD-pro`, `GOLD` (an alias), `GOLD.m`. Case-insensitive. */
export interface SymbolNaming {
  suffixes: string[];
  prefixes: string[];
  /** Broker name → canonical name. */
  aliases: Record<string, string>;
}

export const DEFAULT_NAMING: SymbolNaming = {
  suffixes: ['.m', '-pro', '.pro', '.raw', 'm', '#'],
  prefixes: [],
  aliases: { GOLD: 'XAUUSD', DJ30: 'US30', WS30: 'US30' },
};
