import fs from 'node:fs';
import path from 'node:path';
import { signalFields } from '../../src/domain/signal';

/** What the integration guides' tests share: the files read from the repository, the TradingView templates as a trader pastes and TradingView fills them. */

export const ROOT = path.resolve(__dirname, '..', '..');
export const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

// ---------------------------------------------------------------------------------------------------------------
// TradingView
// ---------------------------------------------------------------------------------------------------------------

export type Template = Record<string, unknown>;
export const templates = JSON.parse(read('docs/integrations/tradingview-templates.json')) as Record<string, Template>;
export const tradingviewMd = read('docs/integrations/tradingview.md');

/** The numeric fields of the ExternalSignal, from the schema itself. */
export const NUMERIC_FIELDS = new Set(
  Object.entries(signalFields)
    .filter(([, schema]) => (schema as unknown as { def: { type: string } }).def.type === 'number')
    .map(([field]) => field),
);
const PLACEHOLDER = /^\{\{[^{}]+\}\}$/;

/**
 * The alert message as the trader pastes it into TradingView: one field per line, objects on one line, and a numeric
 * field whose value is one placeholder written without quotes (so TradingView's value lands as a JSON number).
 */
export function render(template: Template): string {
  const value = (field: string, v: unknown): string => {
    if (NUMERIC_FIELDS.has(field) && typeof v === 'string' && PLACEHOLDER.test(v)) return v;
    if (v !== null && typeof v === 'object') {
      return `{ ${Object.entries(v)
        .map(([k, x]) => `${JSON.stringify(k)}: ${JSON.stringify(x)}`)
        .join(', ')} }`;
    }
    return JSON.stringify(v);
  };
  return `{\n${Object.entries(template)
    .map(([field, v]) => `  ${JSON.stringify(field)}: ${value(field, v)}`)
    .join(',\n')}\n}`;
}

/** What TradingView puts in for each placeholder the guides use, as text (it fills in text, not JSON values). */
export const TRADINGVIEW_SAMPLES: Record<string, string> = {
  ticker: 'EURUSD',
  exchange: 'OANDA',
  interval: '15',
  time: '2026-11-20T22:00:00Z',
  timenow: '2026-11-20T22:00:05Z',
  open: '1.08500',
  high: '1.08610',
  low: '1.08480',
  close: '1.08542',
  'plot("Target")': '1.09210',
  'strategy.order.action': 'buy',
  'strategy.order.contracts': '0.1',
  'strategy.order.price': '1.08542',
  'strategy.order.id': 'Long',
};
/** The values in <CAPITALS> the trader types in. */
export const TRADER_SAMPLES: Record<string, string> = {
  YOUR_WEBHOOK_SECRET: 'whsec_sample',
  POSITION_TICKET: '50412',
  ORDER_TICKET: '50413',
  EXPIRY_UTC: '2026-11-21T21:00:00Z',
};
export const NOW = () => Date.parse(TRADINGVIEW_SAMPLES.timenow!);

export function fillTradingView(text: string, samples = TRADINGVIEW_SAMPLES): string {
  return text.replace(/\{\{([^{}]+)\}\}/g, (_, name: string) => {
    const sample = samples[name];
    if (sample === undefined) throw new Error(`unknown TradingView placeholder {{${name}}}`);
    return sample;
  });
}

export function fillTrader(text: string): string {
  return text.replace(/<([A-Z_]+)>/g, (_, name: string) => {
    const sample = TRADER_SAMPLES[name];
    if (sample === undefined) throw new Error(`unknown value to fill in <${name}>`);
    return sample;
  });
}

/** The body the service receives when the alert fires. */
export const fire = (message: string, samples = TRADINGVIEW_SAMPLES) => JSON.parse(fillTrader(fillTradingView(message, samples))) as Record<string, unknown>;

/** Every fenced block of a language in a Markdown text. */
export function fencedBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp('^```' + language + '\\n([\\s\\S]*?)\\n```$', 'gm'))].map((m) => m[1]!);
}

export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}
