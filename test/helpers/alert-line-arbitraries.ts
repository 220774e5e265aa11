import fc from 'fast-check';
import { ALERT_LINE_ALIASES, ALERT_LINE_FIELDS, ALERT_LINE_LIMITS } from '../../src/domain/alert-line';
import { ACTIONS } from '../../src/domain/actions';
import { signalArbitraries, type Body } from './signal-arbitraries';

/**
 * fast-check generators of one-line alerts (src/domain/alert-line.ts): valid JSON bodies written as lines (any key
 * spelling, the symbol in its place or as a key), the same with the trade-management fields, lines assembled from
 * known keys and awkward values, and mutations of valid lines. Shared by the unit properties
 * (test/unit/alert-line.test.ts) and the same lines posted to the running service (test/integration/alert-line-http.test.ts).
 */

/** A number as the line writes it: JSON's digits, never an exponent (1e-7 is 0.0000001). */
function decimal(n: number): string {
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, lead, frac = '', exp] = m;
  const digits = lead! + frac;
  const e = Number(exp);
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  return `${sign}${digits}${'0'.repeat(Math.max(0, e - frac.length))}`;
}

/** Any spelling of a field the parser takes: its name in any case, or one of its aliases. */
function spellings(field: string): string[] {
  const aliases = Object.entries(ALERT_LINE_ALIASES)
    .filter(([, f]) => f === field)
    .map(([a]) => a);
  return [field, field.toLowerCase(), field.toUpperCase(), ...aliases];
}

export type Pick = (options: string[]) => string;

/** The line for a body, with a choice of spelling and of positional symbol; undefined when a line cannot carry it. */
function lineOf(body: Body, pick: Pick, positionalSymbol: boolean): string | undefined {
  const { secret, action, symbol, meta, takeProfits, ...rest } = body;
  const tokens = [String(secret), String(action)];
  if (symbol !== undefined && positionalSymbol) tokens.push(String(symbol));
  else if (symbol !== undefined) rest.symbol = symbol;
  for (const [field, value] of Object.entries(rest)) tokens.push(`${pick(spellings(field))}=${typeof value === 'number' ? decimal(value) : String(value)}`);
  if (meta !== undefined) tokens.push(`origin=${String((meta as { origin: string }).origin)}`);
  ((takeProfits ?? []) as Record<string, number>[]).forEach((level, i) => {
    for (const [k, v] of Object.entries(level)) tokens.push(`tp${i + 1}${k === 'tp' ? '' : k === 'tpPips' ? 'pips' : 'close'}=${decimal(v)}`);
  });
  // A value the line cannot carry as it is: empty, with spaces around it (they are trimmed) or a comma in it.
  const values = [
    ...tokens.slice(0, 2),
    ...tokens.slice(2).map((t) => (t.includes('=') && !(positionalSymbol && t === symbol) ? t.slice(t.indexOf('=') + 1) : t)),
  ];
  const fits = (t: string) => t !== '' && t === t.trim() && !t.includes(',');
  if (!values.every(fits) || tokens.some((t) => t.length > ALERT_LINE_LIMITS.maxTokenLength) || tokens.length > ALERT_LINE_LIMITS.maxTokens) return undefined;
  // A string value with an = in its key part, or a bare value in the symbol place that looks like key=value, is not this body's line.
  if (positionalSymbol && symbol !== undefined && String(symbol).includes('=')) return undefined;
  return tokens.join(',');
}

/** Bodies a line can carry: meta reduced to a non-empty origin (the only meta a line sets). */
function lineable(body: Body): Body {
  const { meta, ...rest } = body;
  const origin = (meta as { origin?: unknown } | undefined)?.origin;
  return typeof origin === 'string' && origin !== '' ? { ...rest, meta: { origin } } : rest;
}

/** Choices for `lineOf`, as plain numbers: fast-check may map a value more than once, so the picks must not be a stream. */
const picksArb = fc.array(fc.nat(), { minLength: 16, maxLength: 16 });
function pickFrom(choices: number[]): Pick {
  let i = 0;
  return (options) => options[choices[i++ % choices.length]! % options.length]!;
}

/** A number as alerts carry them: up to three decimals (the schema's own number properties cover the rest). */
const amount = (max: number) => fc.integer({ min: 1, max: max * 1000 }).map((n) => n / 1000);

/** The trade-management fields of docs/trade-management.md §1, any subset, each in its type's range. */
const managementArb = fc.record(
  {
    trailDistancePips: amount(1e6),
    trailTriggerPips: amount(1e6),
    trailStepPips: amount(1e6),
    breakevenTriggerPips: amount(1e6),
    breakevenOffsetPips: amount(1e6),
    closeOpposite: fc.boolean(),
    maxSpreadPips: amount(1e6),
    takeProfits: fc.array(fc.oneof(fc.record({ tpPips: amount(1e6), closePercent: amount(100) }), fc.record({ tp: amount(1e6), closePercent: amount(100) })), {
      minLength: 1,
      maxLength: 5,
    }),
  },
  { requiredKeys: [] },
);

export function alertLineArbitraries(opts: { secret: string; nowMs: number }) {
  const arbs = signalArbitraries({ nowMs: opts.nowMs, secret: fc.string({ minLength: 1, maxLength: 256 }) });

  /** A valid JSON body and its line (bodies a line cannot carry are skipped). */
  const pairsOf = (bodies: fc.Arbitrary<Body>) =>
    fc
      .tuple(bodies, picksArb, fc.boolean())
      .map(([b, picks, positional]) => {
        const body = lineable(b);
        return { body, line: lineOf(body, pickFrom(picks), positional) };
      })
      .filter((p): p is { body: Body; line: string } => p.line !== undefined);
  const validPairArb = pairsOf(arbs.validBodyArb);

  /** A market entry with management fields and take-profit levels, and its line. */
  const managedPairArb = fc
    .tuple(
      fc.record({
        secret: fc.constant(opts.secret),
        action: fc.constantFrom('buy', 'sell'),
        symbol: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._#\-/]{0,31}$/),
        volume: amount(100),
      }),
      managementArb,
      picksArb,
    )
    .map(([entry, management, picks]) => {
      const body: Body = { ...entry, ...management };
      return { body, line: lineOf(body, pickFrom(picks), true) };
    })
    .filter((p): p is { body: Body; line: string } => p.line !== undefined);

  const randomLineArb = fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: 'grapheme', maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 300 }));

  const pieceArb = fc.oneof(
    fc.constantFrom(
      ...ACTIONS,
      ...Object.keys(ALERT_LINE_FIELDS),
      ...Object.keys(ALERT_LINE_ALIASES),
      'tp1',
      'tp2pips',
      'tp5close',
      'tp9',
      'risk',
      'origin',
      'meta',
    ),
    fc.constantFrom('=', ',', ' ', '', '==', ',,', '1e999', '-1', '0x1f', 'NaN', 'true', 'false', '0.1', '20', '__proto__', 'constructor', '\n', '\u0000'),
    fc.string({ maxLength: 12 }),
    fc.double().map(String),
  );

  /** Pieces of lines run together, with the secret in front or not. */
  const assembledLineArb = fc
    .tuple(fc.array(pieceArb, { maxLength: 40 }), fc.boolean())
    .map(([pieces, withSecret]) => `${withSecret ? `${opts.secret},` : ''}${pieces.join('')}`);

  const validLine = pairsOf(arbs.validBodyArb.map((b) => ({ ...b, secret: opts.secret }))).map((p) => p.line);
  const mutation = fc.oneof(
    fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      text: fc.oneof(fc.constantFrom(',', '=', ' ', ',,', '=,', 'e9', '.', '-'), fc.string({ maxLength: 4 })),
    }),
    fc.record({ kind: fc.constant('swap' as const), a: fc.nat(), b: fc.nat() }),
    fc.record({ kind: fc.constant('dropToken' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('repeatToken' as const), at: fc.nat() }),
  );
  type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;
  const mutate = (line: string, m: Mutation): string => {
    const tokens = line.split(',');
    switch (m.kind) {
      case 'cut': {
        const at = m.at % (line.length + 1);
        return line.slice(0, at) + line.slice(at + m.length);
      }
      case 'insert': {
        const at = m.at % (line.length + 1);
        return line.slice(0, at) + m.text + line.slice(at);
      }
      case 'swap': {
        const [a, b] = [m.a % tokens.length, m.b % tokens.length];
        [tokens[a], tokens[b]] = [tokens[b]!, tokens[a]!];
        return tokens.join(',');
      }
      case 'dropToken':
        tokens.splice(m.at % tokens.length, 1);
        return tokens.join(',');
      case 'repeatToken':
        tokens.splice(m.at % tokens.length, 0, tokens[m.at % tokens.length]!);
        return tokens.join(',');
    }
  };
  /** A valid line (with the given secret) after one to three mutations. */
  const mutatedLineArb = fc.tuple(validLine, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([line, mutations]) => mutations.reduce(mutate, line));

  return { validPairArb, managedPairArb, randomLineArb, assembledLineArb, mutatedLineArb };
}
