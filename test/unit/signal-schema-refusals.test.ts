import fc from 'fast-check';
import { ACTIONS } from '../../src/domain/actions';
import { signalArbitraries, type Body, type InvalidCase } from '../helpers/signal-arbitraries';
import { MINIMAL, NOW_MS, SECRET, validate, refused, expectAccepted, namesField, expectRefusedAtPath, body } from '../helpers/signal-schema';
import { propertyRuns } from '../helpers/property-runs';

/**
 * The ExternalSignal of spec §2.1 and its action table, checked against validateSignal.
 * The expectations below are written from the spec, not read from ACTION_RULES, so a drift between the two shows.
 */

describe('ExternalSignal schema: idempotencyKey body field (extension: the X-Idempotency-Key header as a field)', () => {
  test.each(ACTIONS)('when a %s body carries an idempotencyKey, then it is accepted and kept', (action) => {
    const result = validate(body(action, { ...MINIMAL[action], idempotencyKey: 'retry-1' }));
    if (!result.ok) throw new Error(result.error);
    expect(result.signal.idempotencyKey).toBe('retry-1');
  });

  test('when the idempotencyKey is 1 or 128 characters, then it is accepted (spec §8: at most 128)', () => {
    expectAccepted(body('breakeven', { positionId: 'p', idempotencyKey: 'k' }));
    expectAccepted(body('breakeven', { positionId: 'p', idempotencyKey: 'k'.repeat(128) }));
  });

  test.each(['', 'k'.repeat(129), 42, null, true])('when the idempotencyKey is %p, then it is refused naming idempotencyKey', (idempotencyKey) => {
    expectRefusedAtPath(body('breakeven', { positionId: 'p', idempotencyKey }), 'idempotencyKey');
  });
});

describe('ExternalSignal schema: meta and secret', () => {
  test('when meta has a string origin and extra properties of any type, then it is accepted and kept', () => {
    const meta = { origin: 'tradingview', strategy: 'ema-cross', score: 0.7, tags: ['a', 'b'], nested: { x: 1 }, flag: true };
    const result = validate(body('buy', { ...MINIMAL.buy, meta }));
    if (!result.ok) throw new Error(result.error);
    expect(result.signal.meta).toEqual(meta);
  });

  test('when meta is an empty object or has no origin, then it is accepted', () => {
    expectAccepted(body('buy', { ...MINIMAL.buy, meta: {} }));
    expectAccepted(body('buy', { ...MINIMAL.buy, meta: { bot: 'x' } }));
  });

  test.each([1, true, null, { name: 'x' }])('when meta.origin is %p (not a string), then it is refused at meta.origin', (origin) => {
    expectRefusedAtPath(body('buy', { ...MINIMAL.buy, meta: { origin } }), 'meta.origin');
  });

  test.each(['tag', 1, [], null])('when meta is %p (not an object), then it is refused naming meta', (meta) => {
    expectRefusedAtPath(body('buy', { ...MINIMAL.buy, meta }), 'meta');
  });

  test.each(['', 0, null, {}])('when secret is %p, then it is refused naming secret', (secret) => {
    expectRefusedAtPath({ secret, action: 'close_all' }, 'secret');
  });

  test('when secret is a one-character string, then it is accepted', () => {
    expectAccepted({ secret: 'x', action: 'close_all' });
  });
});

describe('ExternalSignal schema: error shape', () => {
  test('when a body has several problems, then error is one string listing each and details carry path and message per problem', () => {
    const result = refused({ secret: SECRET, action: 'buy', symbol: 'EURUSD', volume: 0, slPips: -1 });
    expect(typeof result.error).toBe('string');
    expect(result.error).toMatch(/^Invalid signal: /);
    expect(result.details.map((d) => d.path).sort()).toEqual(['slPips', 'volume']);
    for (const d of result.details) {
      expect(typeof d.message).toBe('string');
      expect(d.message.length).toBeGreaterThan(0);
      expect(result.error).toContain(`${d.path}: ${d.message}`);
    }
  });

  test('when an unknown field is refused, then its detail has the root path and a message naming the field', () => {
    const result = refused({ ...body('close_all'), extra: 1 });
    expect(result.details).toEqual([{ path: '', message: expect.stringContaining('extra') }]);
    expect(result.error).toContain('unknown field');
  });

  test('when a nested field is refused, then the detail path is dotted', () => {
    const result = refused(body('buy', { ...MINIMAL.buy, meta: { origin: 5 } }));
    expect(result.details[0]?.path).toBe('meta.origin');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Property-based: generated valid bodies for every action are accepted; mutations of them are refused, naming the
// field. Fixed seed so a failure is reproducible; 1000 runs per property.
// ---------------------------------------------------------------------------------------------------------------

const FC = { numRuns: propertyRuns(1000), seed: 20240612 };

// Entries carry trade management too (docs/trade-management.md §1), so every property covers those fields as well.
const { validBodyOf, validBodyArb, invalid } = signalArbitraries({ nowMs: NOW_MS, management: true });

function assertRefusedNaming(b: Body, field: string): void {
  const result = validate(b);
  if (result.ok) throw new Error(`accepted although ${field} is wrong: ${JSON.stringify(b)}`);
  if (!namesField(result.details, field)) throw new Error(`no detail names ${field}: ${JSON.stringify(result.details)}`);
}

function assertCaseRefused(c: InvalidCase): void {
  for (const field of c.names) assertRefusedNaming(c.body, field);
}

describe('ExternalSignal schema: properties (fast-check)', () => {
  test.each(ACTIONS)('when any generated valid %s body is validated, then it is accepted unchanged', (action) => {
    fc.assert(
      fc.property(validBodyOf(action), (b) => {
        const result = validate(b);
        if (!result.ok) throw new Error(`${result.error} for ${JSON.stringify(b)}`);
        expect(result.signal).toEqual(b);
      }),
      FC,
    );
  });

  test('when any generated valid body is validated, then validation is deterministic and never throws', () => {
    fc.assert(
      fc.property(validBodyArb, (b) => {
        expect(validate(b)).toEqual(validate(b));
      }),
      FC,
    );
  });

  test('when a required field is dropped from any valid body, then it is refused naming that field', () => {
    fc.assert(fc.property(invalid.droppedRequired(), assertCaseRefused), FC);
  });

  test('when every "one of" field is dropped from a valid close or modify_pending, then it is refused naming the choices', () => {
    fc.assert(
      fc.property(invalid.droppedOneOf, (c) => {
        const result = validate(c.body);
        if (result.ok) throw new Error(`accepted: ${JSON.stringify(c.body)}`);
        for (const f of c.names) expect(result.error).toContain(f);
      }),
      FC,
    );
  });

  test('when an unknown top-level key is added to any valid body, then it is refused naming that key', () => {
    fc.assert(fc.property(invalid.unknownKey, assertCaseRefused), FC);
  });

  test('when a numeric field of any valid body is sent as its string form, then it is refused naming that field', () => {
    fc.assert(fc.property(invalid.numericAsString, assertCaseRefused), FC);
  });

  test('when a numeric field of any valid body is replaced by a non-number JSON value, then it is refused naming that field', () => {
    fc.assert(fc.property(invalid.notANumber, assertCaseRefused), FC);
  });

  test('when volume or partialVolume of any valid body is out of range (<= 0, > 100, NaN, infinite), then it is refused naming it', () => {
    fc.assert(fc.property(invalid.volumeOutOfRange, assertCaseRefused), FC);
  });

  test('when a field the action does not use is added to any valid body, then it is refused naming that field', () => {
    fc.assert(fc.property(invalid.unusedField, assertCaseRefused), FC);
  });
});
