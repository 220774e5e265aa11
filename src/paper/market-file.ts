import fs from 'node:fs';
import { z } from 'zod';
import { baselineQuote, type PriceFeed, type Quote, type SymbolSpec } from './broker';

/**
 * A paper market steered from outside through a small JSON file (`--market FILE`), so a test or a demo can put prices
 * where it needs them and open or close markets while the bridge runs:
 *
 *   {"quotes": {"EURUSD": {"bid": 1.085, "ask": 1.0851}}, "closed": ["US30"]}
 *
 * Symbols (canonical names) without a quote sit at their baseline quote; a steered market is open unless the file
 * lists it as closed (no weekend schedule: the one steering it decides). The file is read again on every look, so a change (written atomically: write then rename) counts at once.
 * A missing file is an empty one; a file that does not parse is an error (a steered market never guesses prices).
 * A quote in the file is as old as the file (its last write): what bounds the age of the risk figures.
 */

const marketFileSchema = z.strictObject({
  quotes: z.record(z.string(), z.strictObject({ bid: z.number().positive(), ask: z.number().positive() })).default({}),
  closed: z.array(z.string()).default([]),
});
export type MarketFile = z.infer<typeof marketFileSchema>;

export class FileMarket implements PriceFeed {
  constructor(readonly file: string) {}

  private read(): MarketFile {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { quotes: {}, closed: [] };
      throw err;
    }
    return marketFileSchema.parse(JSON.parse(text));
  }

  quote(spec: SymbolSpec): Quote {
    const q = this.read().quotes[spec.name];
    if (!q) return baselineQuote(spec);
    if (!(q.ask >= q.bid)) throw new Error(`${this.file}: ${spec.name} ask ${q.ask} is below bid ${q.bid}`);
    return { bid: q.bid, ask: q.ask };
  }

  quotedAt(spec: SymbolSpec): number | undefined {
    if (this.read().quotes[spec.name] === undefined) return undefined;
    try {
      return fs.statSync(this.file).mtimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  marketOpen(spec: SymbolSpec): boolean {
    return !this.read().closed.some((s) => s.toUpperCase() === spec.name);
  }
}
