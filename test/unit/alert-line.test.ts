import fc from 'fast-check';
import { ALERT_LINE_ALIASES, ALERT_LINE_FIELDS, ALERT_LINE_LIMITS, parseAlertLine, type AlertLineField } from '../../src/domain/alert-line';
import { signalFields, validateSignal } from '../../src/domain/signal';
import { type Body } from '../helpers/signal-arbitraries';
import { alertLineArbitraries } from '../helpers/alert-line-arbitraries';
import { propertyRuns } from '../helpers/property-runs';

/**
 * The one-line alert (src/domain/alert-line.ts): `secret,action[,symbol][,key=value…]` read into the object a JSON
 * body would be. Good lines, every alias, every refusal naming its token, and properties: a generated valid JSON body
 * written as a line reads back to the same object; random and mutated lines never throw and are either read or refused
 * naming a token.
 */

const SECRET = 'whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
const NOW = () => Date.parse('2026-11-20T22:00:05Z');

function read(line: string): Body {
  const result = parseAlertLine(line);
  if (!result.ok) throw new Error(`refused: ${result.error}`);
  return result.body;
}

function refusal(line: string) {
  const result = parseAlertLine(line);
  if (result.ok) throw new Error(`read, expected a refusal: ${JSON.stringify(result.body)}`);
  return result;
}

/** The management fields of the contract (docs/trade-management.md §1), written here from the contract. */
const MANAGEMENT = ['trailDistancePips', 'trailTriggerPips', 'trailStepPips', 'breakevenTriggerPips', 'breakevenOffsetPips', 'closeOpposite', 'maxSpreadPips'];

describe('one-line alert: lines that are read', () => {
  test('when a minimal buy is read, then it is the JSON body of the same buy, and that body is a valid signal', () => {
    const body = read(`${SECRET},buy,EURUSD,volume=0.1`);
    expect(body).toEqual({ secret: SECRET, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(validateSignal(body, NOW)).toEqual({ ok: true, signal: body });
  });

  test('when every field of the schema is given once, then each lands under its JSON name with its JSON type', () => {
    const body = read(
      `${SECRET},modify_pending,orderId=o-1,price=1.1,stopLimitPrice=1.2,sl=1.05,tp=1.15,expiry=2026-11-21T21:00:00Z,idempotencyKey=k-1,origin=tradingview`,
    );
    expect(body).toEqual({
      secret: SECRET,
      action: 'modify_pending',
      orderId: 'o-1',
      price: 1.1,
      stopLimitPrice: 1.2,
      sl: 1.05,
      tp: 1.15,
      expiry: '2026-11-21T21:00:00Z',
      idempotencyKey: 'k-1',
      meta: { origin: 'tradingview' },
    });
    expect(validateSignal(body, NOW).ok).toBe(true);
    const close = read(`${SECRET},close,symbol=EURUSD,side=buy,pnl=profit,idempotencyKey=x`);
    expect(close).toEqual({ secret: SECRET, action: 'close', symbol: 'EURUSD', side: 'buy', pnl: 'profit', idempotencyKey: 'x' });
    expect(read(`${SECRET},partial_close,positionId=50412,partialVolume=0.05`)).toEqual({
      secret: SECRET,
      action: 'partial_close',
      positionId: '50412',
      partialVolume: 0.05,
    });
    expect(read(`${SECRET},buy,EURUSD,volume=1,slPips=20,tpPips=40`)).toMatchObject({ slPips: 20, tpPips: 40 });
    expect(read(`${SECRET},close_all`)).toEqual({ secret: SECRET, action: 'close_all' });
  });

  test('when keys are written in any case, then they match the JSON field names (slpips = slPips = SLPIPS)', () => {
    for (const key of ['slPips', 'slpips', 'SLPIPS', 'SlPiPs']) expect(read(`${SECRET},buy,EURUSD,volume=1,${key}=20`).slPips).toBe(20);
    expect(read(`${SECRET},buy,EURUSD,VOLUME=1,IdempotencyKey=abc`)).toMatchObject({ volume: 1, idempotencyKey: 'abc' });
  });

  test('when spaces surround tokens, keys and values, and the line ends with a newline, then they are ignored', () => {
    expect(read(`  ${SECRET} , buy , EURUSD , volume = 0.1 , slpips=20 \n`)).toEqual({
      secret: SECRET,
      action: 'buy',
      symbol: 'EURUSD',
      volume: 0.1,
      slPips: 20,
    });
  });

  test('when the symbol is a key instead of the third token, then it is the same body', () => {
    expect(read(`${SECRET},buy,volume=0.1,symbol=EURUSD`)).toEqual(read(`${SECRET},buy,EURUSD,volume=0.1`));
  });

  test('when a value holds =, then only the first = separates key from value', () => {
    expect(read(`${SECRET},close_all,idempotencyKey=a=b`).idempotencyKey).toBe('a=b');
  });

  test.each(Object.entries(ALERT_LINE_ALIASES))('the alias %s means %s, and nothing else', (alias, field) => {
    const kind = ALERT_LINE_FIELDS[field];
    const [text, value] = kind === 'number' ? ['12.5', 12.5] : ['x', 'x'];
    const body = read(`${SECRET},buy,EURUSD,${alias}=${text}`);
    expect(body).toEqual({ secret: SECRET, action: 'buy', symbol: 'EURUSD', [field]: value });
    // Any case, like the field names.
    expect(read(`${SECRET},buy,EURUSD,${alias.toUpperCase()}=${text}`)[field]).toEqual(value);
  });

  test('when sl= and tp= are given, then they are prices as in JSON (a PineConnector pip sl is slpips=)', () => {
    expect(read(`${SECRET},buy,EURUSD,volume=1,sl=20,tp=1.2`)).toMatchObject({ sl: 20, tp: 1.2 });
    expect(read(`${SECRET},buy,EURUSD,volume=1,slpips=20`)).not.toHaveProperty('sl');
  });

  test('when every management field is given, then the body carries the contract names with their types', () => {
    const body = read(
      `${SECRET},buy,EURUSD,volume=0.1,trailDistancePips=15,trailTriggerPips=10,trailStepPips=5,breakevenTriggerPips=20,breakevenOffsetPips=2,closeOpposite=true,maxSpreadPips=1.5`,
    );
    expect(body).toEqual({
      secret: SECRET,
      action: 'buy',
      symbol: 'EURUSD',
      volume: 0.1,
      trailDistancePips: 15,
      trailTriggerPips: 10,
      trailStepPips: 5,
      breakevenTriggerPips: 20,
      breakevenOffsetPips: 2,
      closeOpposite: true,
      maxSpreadPips: 1.5,
    });
    expect(read(`${SECRET},sell,EURUSD,volume=0.1,closeopposite=false`).closeOpposite).toBe(false);
  });

  test('when take-profit levels are given as tpN/tpNpips with tpNclose, then they are takeProfits in level order', () => {
    expect(read(`${SECRET},buy,EURUSD,volume=1,tp2pips=40,tp2close=25,tp1pips=20,tp1close=50,tpPips=60`)).toEqual({
      secret: SECRET,
      action: 'buy',
      symbol: 'EURUSD',
      volume: 1,
      tpPips: 60,
      takeProfits: [
        { tpPips: 20, closePercent: 50 },
        { tpPips: 40, closePercent: 25 },
      ],
    });
    const five = [1, 2, 3, 4, 5].map((n) => `tp${n}=1.1${n},TP${n}CLOSE=20`).join(',');
    expect(read(`${SECRET},buy,EURUSD,volume=1,${five}`).takeProfits).toEqual([1, 2, 3, 4, 5].map((n) => ({ tp: Number(`1.1${n}`), closePercent: 20 })));
  });

  test('when origin is given, then it is meta.origin, the one meta field a line may set', () => {
    expect(read(`${SECRET},close_all,origin=tv`)).toEqual({ secret: SECRET, action: 'close_all', meta: { origin: 'tv' } });
  });

  test('when a line carries TradingView placeholders filled in, then they are plain values', () => {
    const line = `${SECRET},buy_limit,{{ticker}},volume=0.1,price={{low}},idempotencyKey={{ticker}}-{{timenow}}-buy_limit`
      .replace(/\{\{ticker\}\}/g, 'EURUSD')
      .replace('{{low}}', '1.08480')
      .replace('{{timenow}}', '2026-11-20T22:00:05Z');
    const body = read(line);
    expect(body).toEqual({
      secret: SECRET,
      action: 'buy_limit',
      symbol: 'EURUSD',
      volume: 0.1,
      price: 1.0848,
      idempotencyKey: 'EURUSD-2026-11-20T22:00:05Z-buy_limit',
    });
    expect(validateSignal(body, NOW).ok).toBe(true);
  });
});

describe('one-line alert: refusals name the token at fault', () => {
  /** [line after the secret, token number at fault, what the message says]. */
  const cases: [string, number, RegExp][] = [
    ['buy,EURUSD,vol=abc', 4, /token 4 "vol=abc": unknown key vol/],
    ['buy,EURUSD,volume=abc', 4, /token 4 "volume=abc": volume: expected a number/],
    ['buy,EURUSD,volume=1e999', 4, /token 4 "volume=1e999": volume: expected a number/],
    ['buy,EURUSD,volume=1e-2', 4, /token 4 "volume=1e-2": volume: expected a number/],
    ['buy,EURUSD,volume=0x10', 4, /token 4 "volume=0x10": volume: expected a number/],
    ['buy,EURUSD,volume=+1', 4, /expected a number/],
    ['buy,EURUSD,volume=.5', 4, /expected a number/],
    ['buy,EURUSD,volume=1.', 4, /expected a number/],
    ['buy,EURUSD,volume=01', 4, /expected a number/],
    ['buy,EURUSD,volume=NaN', 4, /token 4 "volume=NaN": volume: expected a number/],
    ['buy,EURUSD,volume=Infinity', 4, /expected a number/],
    ['buy,EURUSD,volume="0.1"', 4, /expected a number/],
    ['buy,EURUSD,volume=1 000', 4, /expected a number/],
    ['buy,EURUSD,volume=', 4, /token 4 "volume=": no value for volume/],
    ['buy,EURUSD,=1', 4, /token 4 "=1": no key before =/],
    ['buy,EURUSD,volume=1,volume=2', 5, /token 5 "volume=2": volume given twice \(also token 4\)/],
    ['buy,EURUSD,sl_pips=20,SLPIPS=20', 5, /token 5 "SLPIPS=20": slPips given twice \(also token 4\)/],
    ['buy,EURUSD,volume=1,symbol=GBPUSD', 5, /token 5 "symbol=GBPUSD": symbol given twice \(also token 3\)/],
    ['buy,EURUSD,origin=a,origin=b', 5, /meta.origin given twice/],
    ['buy,EURUSD,volume=1,closeOpposite=yes', 5, /token 5 "closeOpposite=yes": closeOpposite: expected true or false/],
    ['buy,EURUSD,volume=1,closeOpposite=TRUE', 5, /expected true or false/],
    ['buy,EURUSD,volume=1,risk=1', 5, /token 5 "risk=1": risk= is not read.*volume=/],
    ['buy,EURUSD,volume=1,secret=x', 5, /token 5 "secret=x": the secret is the first token/],
    ['buy,EURUSD,volume=1,action=sell', 5, /the action is the second token/],
    ['buy,EURUSD,volume=1,meta=x', 5, /meta cannot be set.*origin=/],
    ['buy,EURUSD,volume=1,takeProfits=1', 5, /tp1=/],
    ['buy,EURUSD,volume=1,comment=hello', 5, /token 5 "comment=hello": unknown key comment/],
    ['buy,EURUSD,volume=1,GBPUSD', 5, /token 5 "GBPUSD": expected key=value/],
    ['buy,EURUSD,volume=1,__proto__=1', 5, /token 5 "__proto__=1": unknown key __proto__$/],
    ['buy,EURUSD,volume=1,constructor=1', 5, /token 5 "constructor=1": unknown key constructor$/],
    ['buy,EURUSD,volume=1,toString=x', 5, /token 5 "toString=x": unknown key toString$/],
    ['buy,EURUSD,volume=1,hasOwnProperty=x', 5, /unknown key hasOwnProperty$/],
    ['constructor,EURUSD,volume=1', 2, /token 2 "constructor": unknown action \(one of buy, /],
    ['__proto__,EURUSD,volume=1', 2, /token 2 "__proto__": unknown action \(one of/],
    ['buy,EURUSD,,volume=1', 4, /token 4 "": empty/],
    ['buy,,volume=1', 3, /token 3 "": empty/],
    ['buylimit,EURUSD,volume=1,price=1.1', 2, /token 2 "buylimit": unknown action; did you mean buy_limit\?/],
    ['BUY,EURUSD,volume=1', 2, /token 2 "BUY": unknown action; did you mean buy\?/],
    ['closelong,EURUSD', 2, /did you mean close with side=buy\?/],
    ['', 2, /token 2: the action is missing/],
    ['buy,EURUSD,volume=1,tp6pips=10', 5, /token 5 "tp6pips=10": take-profit levels are tp1 to tp5/],
    ['buy,EURUSD,volume=1,tp0=1.1', 5, /tp1 to tp5/],
    ['buy,EURUSD,volume=1,tp01=1.1', 5, /tp1 to tp5/],
    ['buy,EURUSD,volume=1,tp1close=abc', 5, /token 5 "tp1close=abc": expected a number/],
    ['buy,EURUSD,volume=1,tp1pips=10,tp1pips=20', 6, /takeProfits.0.tpPips given twice \(also token 5\)/],
    ['buy,EURUSD,volume=1,tp1pips=10,tp1close=50,tp3pips=30,tp3close=50', 7, /token 7 "tp3pips=30": take-profit level 3 without level 2/],
    ['buy,EURUSD,volume=1,tp2pips=10', 5, /token 5 "tp2pips=10": take-profit level 2 without level 1/],
  ];

  test.each(cases)('%s → token %i', (rest, n, message) => {
    const result = refusal(`${SECRET},${rest}`);
    expect(result.error).toMatch(/^Invalid one-line alert: /);
    expect(result.error).toMatch(message);
    expect(result.details.some((d) => d.message.startsWith(`token ${n}`) && message.test(d.message))).toBe(true);
    // Every detail names a token, and the secret is never repeated back.
    for (const d of result.details) expect(d.message).toMatch(/^token \d+/);
    expect(result.error).not.toContain(SECRET);
  });

  test('when the secret or the action is missing, then the refusal names token 1 or 2', () => {
    expect(refusal('').details.map((d) => d.message)).toEqual([
      'token 1: the secret is missing (the line is `secret,action[,symbol][,key=value…]`)',
      'token 2: the action is missing',
    ]);
    expect(refusal(',buy,EURUSD').details.map((d) => d.message)).toEqual([expect.stringMatching(/^token 1: the secret is missing/)]);
  });

  test('when a refusal names the first token, then it says "the secret" and never repeats the text', () => {
    const long = `${SECRET}${'x'.repeat(ALERT_LINE_LIMITS.maxTokenLength)}`;
    const result = refusal(`${long},buy`);
    expect(result.details).toEqual([{ path: '', message: `token 1 (the secret): longer than ${ALERT_LINE_LIMITS.maxTokenLength} characters` }]);
    expect(result.error).not.toContain(SECRET);
  });

  test('when a line has more than 64 tokens, then it is refused naming token 65, without reading them', () => {
    const many = `${SECRET},buy,EURUSD${',volume=1'.repeat(62)}`;
    expect(refusal(many).details).toEqual([{ path: '', message: 'token 65: more than 64 tokens' }]);
    // 64 is the bound, not 63: the same line one token shorter is read (and refused for its duplicates, token by token).
    expect(refusal(`${SECRET},buy,EURUSD${',volume=1'.repeat(61)}`).details.every((d) => /given twice/.test(d.message))).toBe(true);
    // A 64 KB line of commas costs one bounded split.
    expect(refusal(','.repeat(65_536)).details).toEqual([{ path: '', message: 'token 65: more than 64 tokens' }]);
  });

  test('when a token is longer than 256 characters, then it is refused naming it, its long value not repeated', () => {
    const result = refusal(`${SECRET},close_all,idempotencyKey=${'k'.repeat(250)}`);
    expect(result.details).toEqual([{ path: '', message: 'token 3 "idempotencyKey=…": longer than 256 characters' }]);
    expect(read(`${SECRET},close_all,idempotencyKey=${'k'.repeat(256 - 'idempotencyKey='.length)}`).idempotencyKey).toHaveLength(241);
  });

  test('when the secret is put in another token, then no part of it is repeated back, whatever token holds it', () => {
    const secret = 'whsec_3fQx9ZkLmN0pRsTuVwXyZaBcDeFgHiJkLmNoPq';
    for (const line of [
      `buy,${secret},EURUSD`,
      `buy,close_all,EURUSD,${secret}`,
      `x,buy,EURUSD,${secret}`,
      `x,buy,EURUSD,origin=1,sl=${secret}`,
      `x,buy,${secret}=1`,
    ]) {
      const result = refusal(line);
      const said = JSON.stringify(result);
      // Not even a piece as long as the shortest credential could be.
      for (let i = 0; i + 16 <= secret.length; i++) expect(said).not.toContain(secret.slice(i, i + 16));
      expect(said).not.toContain(secret.slice(0, 10));
      expect(result.details.length).toBeGreaterThan(0);
    }
    expect(refusal(`buy,${secret},EURUSD`).details).toContainEqual({
      path: 'action',
      message: expect.stringMatching(/^token 2 \(not repeated: long enough to be a secret\): unknown action/),
    });
  });

  test('when several tokens are wrong, then each is named, the field in the detail path when known', () => {
    const result = refusal(`${SECRET},buy,EURUSD,volume=x,foo=1,slpips=`);
    expect(result.details).toEqual([
      { path: 'volume', message: 'token 4 "volume=x": volume: expected a number written like 0.1 or 20 (no exponent, no quotes)' },
      { path: '', message: 'token 5 "foo=1": unknown key foo' },
      { path: '', message: 'token 6 "slpips=": no value for slpips' },
    ]);
    expect(result.error).toBe(`Invalid one-line alert: ${result.details.map((d) => d.message).join('; ')}`);
  });
});

describe('one-line alert: the keys are the schema fields', () => {
  const kindOf = (schema: unknown) => (schema as { def: { type: string } }).def.type;

  test('every order and request field of the JSON schema (but secret, action, meta and the tpN-written takeProfits) is a key, with the same type', () => {
    const schemaFields = Object.keys(signalFields).filter((f) => !['secret', 'action', 'meta', 'takeProfits'].includes(f));
    for (const field of schemaFields) {
      const kind = kindOf(signalFields[field as keyof typeof signalFields]);
      expect({ field, kind: ALERT_LINE_FIELDS[field as AlertLineField] }).toEqual({ field, kind: kind === 'number' || kind === 'boolean' ? kind : 'string' });
    }
  });

  test('every key is a field of the JSON schema or a management field of the contract', () => {
    for (const field of Object.keys(ALERT_LINE_FIELDS))
      expect({ field, known: field in signalFields || MANAGEMENT.includes(field) }).toEqual({ field, known: true });
    for (const field of MANAGEMENT) expect(ALERT_LINE_FIELDS).toHaveProperty(field);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------------

describe('one-line alert: properties', () => {
  const lines = alertLineArbitraries({ secret: SECRET, nowMs: NOW() + 10 * 60_000 });

  test('when any valid JSON signal is written as a line (any key spelling, symbol in place or as a key), then the line reads back to that body', () => {
    fc.assert(
      fc.property(lines.validPairArb, ({ body, line }) => {
        expect(parseAlertLine(line)).toEqual({ ok: true, body });
        expect(validateSignal(body, NOW).ok).toBe(true);
      }),
      { numRuns: propertyRuns(1000), seed: 2711 },
    );
  });

  test('when management fields and take-profit levels are added to a market entry, then the line reads back to that body', () => {
    fc.assert(
      fc.property(lines.managedPairArb, ({ body, line }) => {
        expect(parseAlertLine(line)).toEqual({ ok: true, body });
      }),
      { numRuns: propertyRuns(700), seed: 2712 },
    );
  });

  const BODY_KEYS = new Set(['secret', 'action', 'meta', 'takeProfits', ...Object.keys(ALERT_LINE_FIELDS)]);

  /** A refusal is well formed: every detail names a token within the line, and the error sums them up. */
  function assertWellFormed(line: string) {
    const result = parseAlertLine(line);
    if (result.ok) {
      // Read: only keys the JSON body may have, and the schema decides, without throwing.
      for (const key of Object.keys(result.body)) expect({ key, known: BODY_KEYS.has(key) }).toEqual({ key, known: true });
      expect(typeof validateSignal(result.body, NOW).ok).toBe('boolean');
      return;
    }
    expect(result.details.length).toBeGreaterThan(0);
    const count = line.trim().split(',').length;
    for (const d of result.details) {
      const m = /^token (\d+)/.exec(d.message);
      if (!m) throw new Error(`detail without a token: ${d.message} for ${JSON.stringify(line)}`);
      expect(d.message).not.toMatch(/\[native code\]|\[object Object\]/);
      expect(Number(m[1])).toBeLessThanOrEqual(Math.max(Math.min(count, ALERT_LINE_LIMITS.maxTokens + 1), 2));
    }
    expect(result.error.startsWith('Invalid one-line alert: token ')).toBe(true);
  }

  test('when 3,000 random strings are read, then none throws and every refusal names a token', () => {
    fc.assert(fc.property(lines.randomLineArb, assertWellFormed), { numRuns: propertyRuns(3000), seed: 2713 });
  });

  test('when 3,000 lines are assembled from known keys, actions and awkward values, then none throws and every refusal names a token', () => {
    fc.assert(fc.property(lines.assembledLineArb, assertWellFormed), { numRuns: propertyRuns(3000), seed: 2714 });
  });

  test('when 3,000 valid lines are mutated (characters cut, added, swapped; tokens dropped, repeated, reordered), then none throws and every refusal names a token', () => {
    fc.assert(fc.property(lines.mutatedLineArb, assertWellFormed), { numRuns: propertyRuns(3000), seed: 2715 });
  });
});
