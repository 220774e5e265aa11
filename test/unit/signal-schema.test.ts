import fc from 'fast-check';
import { ACTIONS, type Action } from '../../src/signals/actions';
import { validateSignal, type SignalValidation, type ValidationDetail } from '../../src/signals/schema';

/**
 * The ExternalSignal of spec §2.1 and its action table, checked against validateSignal.
 * The expectations below are written from the spec, not read from ACTION_RULES, so a drift between the two shows.
 */

const NOW_MS = Date.parse('2024-06-12T12:00:00Z');
const now = () => NOW_MS;
const FUTURE = '2024-06-12T13:00:00Z';
const SECRET = 'whsec_test';

type Body = Record<string, unknown>;

const validate = (body: unknown): SignalValidation => validateSignal(body, now);

function refused(body: unknown): { error: string; details: ValidationDetail[] } {
  const result = validate(body);
  if (result.ok) throw new Error(`expected the body to be refused: ${JSON.stringify(body)}`);
  return result;
}

function expectAccepted(body: unknown): void {
  const result = validate(body);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(body)} to be accepted, got: ${result.error}`);
  expect(result.ok).toBe(true);
}

/** A detail names the field when its path is the field or its message mentions the field. */
function namesField(details: ValidationDetail[], field: string): boolean {
  return details.some((d) => d.path === field || d.path.startsWith(`${field}.`) || d.message.includes(field));
}

function expectRefusedNaming(body: unknown, field: string): { error: string; details: ValidationDetail[] } {
  const result = refused(body);
  if (!namesField(result.details, field)) {
    throw new Error(`expected a detail naming ${field}, got ${JSON.stringify(result.details)}`);
  }
  expect(result.error).toContain(field);
  return result;
}

function expectRefusedAtPath(body: unknown, path: string): ValidationDetail {
  const result = refused(body);
  const detail = result.details.find((d) => d.path === path);
  if (!detail) throw new Error(`expected a detail at path ${path}, got ${JSON.stringify(result.details)}`);
  expect(result.error).toContain(path);
  return detail;
}

/** The smallest body each action accepts (spec §2.1 action table). */
const MINIMAL: Record<Action, Body> = {
  buy: { symbol: 'EURUSD', volume: 0.1 },
  sell: { symbol: 'EURUSD', volume: 0.1 },
  buy_limit: { symbol: 'EURUSD', volume: 0.1, price: 1.08 },
  sell_limit: { symbol: 'EURUSD', volume: 0.1, price: 1.09 },
  buy_stop: { symbol: 'EURUSD', volume: 0.1, price: 1.09 },
  sell_stop: { symbol: 'EURUSD', volume: 0.1, price: 1.08 },
  buy_stop_limit: { symbol: 'EURUSD', volume: 0.1, price: 1.09, stopLimitPrice: 1.095 },
  sell_stop_limit: { symbol: 'EURUSD', volume: 0.1, price: 1.08, stopLimitPrice: 1.075 },
  close: { positionId: '1001' },
  close_all: {},
  partial_close: { positionId: '1001', partialVolume: 0.05 },
  cancel_pending: { orderId: '2001' },
  modify_sl: { positionId: '1001', sl: 1.07 },
  modify_tp: { positionId: '1001', tp: 1.1 },
  modify_pending: { orderId: '2001', price: 1.081 },
  modify_pending_expiry: { orderId: '2001', expiry: FUTURE },
  breakeven: { positionId: '1001' },
};

/** Fields each action must carry (besides secret and action). close and modify_pending have "one of" rules instead. */
const REQUIRED: Record<Action, string[]> = {
  buy: ['symbol', 'volume'],
  sell: ['symbol', 'volume'],
  buy_limit: ['symbol', 'volume', 'price'],
  sell_limit: ['symbol', 'volume', 'price'],
  buy_stop: ['symbol', 'volume', 'price'],
  sell_stop: ['symbol', 'volume', 'price'],
  buy_stop_limit: ['symbol', 'volume', 'price', 'stopLimitPrice'],
  sell_stop_limit: ['symbol', 'volume', 'price', 'stopLimitPrice'],
  close: [],
  close_all: [],
  partial_close: ['positionId', 'partialVolume'],
  cancel_pending: ['orderId'],
  modify_sl: ['positionId', 'sl'],
  modify_tp: ['positionId', 'tp'],
  modify_pending: ['orderId'],
  modify_pending_expiry: ['orderId', 'expiry'],
  breakeven: ['positionId'],
};

const STOPS = ['sl', 'tp', 'slPips', 'tpPips'];
/** Every field each action may carry (besides secret, action and meta). */
const ALLOWED: Record<Action, string[]> = {
  buy: ['symbol', 'volume', ...STOPS],
  sell: ['symbol', 'volume', ...STOPS],
  buy_limit: ['symbol', 'volume', 'price', ...STOPS],
  sell_limit: ['symbol', 'volume', 'price', ...STOPS],
  buy_stop: ['symbol', 'volume', 'price', ...STOPS],
  sell_stop: ['symbol', 'volume', 'price', ...STOPS],
  buy_stop_limit: ['symbol', 'volume', 'price', 'stopLimitPrice', ...STOPS],
  sell_stop_limit: ['symbol', 'volume', 'price', 'stopLimitPrice', ...STOPS],
  close: ['positionId', 'symbol', 'side', 'pnl'],
  close_all: [],
  partial_close: ['positionId', 'partialVolume'],
  cancel_pending: ['orderId'],
  modify_sl: ['positionId', 'sl'],
  modify_tp: ['positionId', 'tp'],
  modify_pending: ['orderId', 'price', 'stopLimitPrice', 'sl', 'tp', 'expiry'],
  modify_pending_expiry: ['orderId', 'expiry'],
  breakeven: ['positionId'],
};

/** A valid value for every optional field of the schema. */
const SAMPLE: Record<string, unknown> = {
  symbol: 'EURUSD',
  volume: 1,
  price: 1.1,
  stopLimitPrice: 1.2,
  sl: 1.05,
  tp: 1.15,
  slPips: 10,
  tpPips: 20,
  positionId: 'p-1',
  orderId: 'o-1',
  partialVolume: 0.5,
  expiry: FUTURE,
  side: 'buy',
  pnl: 'profit',
};
const FIELDS = Object.keys(SAMPLE);
const NUMERIC_FIELDS = ['volume', 'price', 'stopLimitPrice', 'sl', 'tp', 'slPips', 'tpPips', 'partialVolume'];

const body = (action: Action, fields: Body = MINIMAL[action]): Body => ({ secret: SECRET, action, ...fields });
const without = (b: Body, field: string): Body => {
  const copy = { ...b };
  delete copy[field];
  return copy;
};

describe('ExternalSignal schema: minimal bodies', () => {
  test('when the suite lists its actions, then they are exactly the 17 actions of spec §2.1', () => {
    expect([...ACTIONS].sort()).toEqual(Object.keys(MINIMAL).sort());
    expect(ACTIONS).toHaveLength(17);
  });

  test.each(ACTIONS)('when a minimal valid %s body is sent, then it is accepted unchanged', (action) => {
    const result = validate(body(action));
    if (!result.ok) throw new Error(result.error);
    expect(result.signal).toEqual(body(action));
  });

  test('when a close names filters instead of a positionId, then each single filter and all of them together are accepted', () => {
    expectAccepted(body('close', { symbol: 'EURUSD' }));
    expectAccepted(body('close', { side: 'sell' }));
    expectAccepted(body('close', { pnl: 'loss' }));
    expectAccepted(body('close', { symbol: 'EURUSD', side: 'buy', pnl: 'profit' }));
  });

  test.each(['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'])(
    'when modify_pending carries only %s besides orderId, then it is accepted',
    (field) => {
      expectAccepted(body('modify_pending', { orderId: 'o-1', [field]: SAMPLE[field] }));
    },
  );

  test('when entries carry optional stops (sl/tp prices, pip distances, or one of each), then they are accepted', () => {
    expectAccepted(body('buy', { symbol: 'EURUSD', volume: 1, sl: 1.05, tp: 1.15 }));
    expectAccepted(body('sell', { symbol: 'EURUSD', volume: 1, slPips: 15, tpPips: 30 }));
    expectAccepted(body('buy_limit', { symbol: 'EURUSD', volume: 1, price: 1.08, sl: 1.07, tpPips: 25 }));
    expectAccepted(body('sell_stop_limit', { symbol: 'EURUSD', volume: 1, price: 1.08, stopLimitPrice: 1.07, slPips: 5, tp: 1.0 }));
  });
});

describe('ExternalSignal schema: required fields', () => {
  test.each(ACTIONS)('when a %s body has no secret, then it is refused naming secret', (action) => {
    expectRefusedAtPath(without(body(action), 'secret'), 'secret');
  });

  test('when the body has no action, then it is refused naming action', () => {
    expectRefusedAtPath({ secret: SECRET }, 'action');
  });

  test('when the action is not one of the 17 (unknown, wrong case, or not a string), then it is refused naming action', () => {
    expectRefusedAtPath({ secret: SECRET, action: 'hold' }, 'action');
    expectRefusedAtPath({ secret: SECRET, action: 'BUY', symbol: 'EURUSD', volume: 1 }, 'action');
    expectRefusedAtPath({ secret: SECRET, action: 1 }, 'action');
  });

  const requiredCases = ACTIONS.flatMap((action) => REQUIRED[action].map((field) => [action, field] as const));
  test.each(requiredCases)('when a %s body lacks %s, then it is refused with a detail at that field', (action, field) => {
    const detail = expectRefusedAtPath(without(body(action), field), field);
    expect(detail.message).toContain(field);
    expect(detail.message).toContain(action);
  });

  test('when modify_pending has only an orderId, then it is refused naming the fields it needs one of', () => {
    const { details } = refused(body('modify_pending', { orderId: 'o-1' }));
    const detail = details.find((d) => d.message.includes('modify_pending'));
    expect(detail).toBeDefined();
    for (const f of ['price', 'stopLimitPrice', 'sl', 'tp', 'expiry']) expect(detail!.message).toContain(f);
  });

  test('when modify_pending has no orderId but a new price, then it is refused naming orderId', () => {
    expectRefusedAtPath(body('modify_pending', { price: 1.1 }), 'orderId');
  });
});

describe('ExternalSignal schema: fields an action does not use', () => {
  const unusedCases = ACTIONS.flatMap((action) => FIELDS.filter((f) => !ALLOWED[action].includes(f)).map((f) => [action, f] as const));

  test.each(unusedCases)('when a %s body also carries %s, then it is refused naming that field', (action, field) => {
    const detail = expectRefusedAtPath(body(action, { ...MINIMAL[action], [field]: SAMPLE[field] }), field);
    expect(detail.message).toContain(field);
  });

  test.each(ACTIONS)('when a %s body carries meta, then it is accepted (meta is allowed on every action)', (action) => {
    expectAccepted(body(action, { ...MINIMAL[action], meta: { origin: 'tradingview' } }));
  });

  test.each(['foo', 'Symbol', 'stop_loss', 'accountId', 'idempotency_key', 'IdempotencyKey', 'constructor', 'toString'])(
    'when the body carries the unknown top-level field %s, then it is refused naming it',
    (field) => {
      const b = body('buy');
      Object.defineProperty(b, field, { value: 1, enumerable: true, configurable: true, writable: true });
      expectRefusedNaming(b, field);
    },
  );

  test('when a parsed JSON body carries a "__proto__" key, then it is refused naming it', () => {
    const b = JSON.parse(`{"secret":"${SECRET}","action":"close_all","__proto__":{"admin":true}}`);
    expectRefusedNaming(b, '__proto__');
  });

  test('when the body is not a JSON object (null, array, string, number), then it is refused with an error', () => {
    for (const b of [null, undefined, [], 'buy', 42, true]) {
      const result = refused(b);
      expect(result.error).toMatch(/^Invalid signal: /);
      expect(result.details.length).toBeGreaterThan(0);
    }
  });
});

describe('ExternalSignal schema: no coercion', () => {
  test.each([
    ['volume', '1.5'],
    ['volume', '1'],
    ['volume', true],
    ['volume', null],
    ['volume', [1]],
    ['volume', { value: 1 }],
  ])('when a buy carries %s = %j, then it is refused naming volume', (field, value) => {
    expectRefusedAtPath(body('buy', { symbol: 'EURUSD', volume: 1, [field]: value }), field);
  });

  test.each(NUMERIC_FIELDS)('when a field that must be a number (%s) is sent as a numeric string, then it is refused at that field', (field) => {
    const action: Action =
      field === 'partialVolume' ? 'partial_close' : field === 'stopLimitPrice' ? 'buy_stop_limit' : field === 'price' ? 'buy_limit' : 'buy';
    const b = body(action, { ...MINIMAL[action], [field]: String(SAMPLE[field]) });
    expectRefusedAtPath(b, field);
  });

  test('when strings are sent as other types ("true", numbers, booleans), then each is refused at its field', () => {
    expectRefusedAtPath(body('close', { side: true }), 'side');
    expectRefusedAtPath(body('close', { pnl: 'true' }), 'pnl');
    expectRefusedAtPath(body('close', { positionId: 1001 }), 'positionId');
    expectRefusedAtPath(body('cancel_pending', { orderId: 2001 }), 'orderId');
    expectRefusedAtPath(body('buy', { symbol: 123, volume: 1 }), 'symbol');
    expectRefusedAtPath(body('modify_pending_expiry', { orderId: 'o', expiry: NOW_MS + 60_000 }), 'expiry');
    expectRefusedAtPath({ secret: 12345, action: 'close_all' }, 'secret');
    expectRefusedAtPath({ secret: true, action: 'close_all' }, 'secret');
  });

  test('when a number is non-finite or NaN, then it is refused at its field', () => {
    expectRefusedAtPath(body('buy', { symbol: 'EURUSD', volume: Number.NaN }), 'volume');
    expectRefusedAtPath(body('buy', { symbol: 'EURUSD', volume: Number.POSITIVE_INFINITY }), 'volume');
    expectRefusedAtPath(body('buy', { symbol: 'EURUSD', volume: 1, slPips: Number.POSITIVE_INFINITY }), 'slPips');
  });
});

describe('ExternalSignal schema: numeric ranges', () => {
  test.each([0, -1, 100.0001, 101, -0.01])('when volume is %p, then it is refused naming volume', (volume) => {
    expectRefusedAtPath(body('buy', { symbol: 'EURUSD', volume }), 'volume');
  });

  test.each([100, 0.01, 0.001, 1, 99.99])('when volume is %p, then it is accepted', (volume) => {
    expectAccepted(body('buy', { symbol: 'EURUSD', volume }));
  });

  test.each([
    ['slPips', 0],
    ['slPips', -5],
    ['tpPips', 0],
    ['tpPips', -0.1],
  ])('when %s is %p, then it is refused at that field (must be greater than 0)', (field, value) => {
    expectRefusedAtPath(body('buy', { symbol: 'EURUSD', volume: 1, [field]: value }), field);
  });

  test('when slPips and tpPips are small positive numbers, then they are accepted', () => {
    expectAccepted(body('buy', { symbol: 'EURUSD', volume: 1, slPips: 0.1, tpPips: 0.5 }));
  });

  test.each([0, -0.5])('when partialVolume is %p, then it is refused naming partialVolume', (partialVolume) => {
    expectRefusedAtPath(body('partial_close', { positionId: 'p', partialVolume }), 'partialVolume');
  });

  test('when partialVolume is a small positive number, then it is accepted', () => {
    expectAccepted(body('partial_close', { positionId: 'p', partialVolume: 0.01 }));
  });

  test('when an entry carries both sl and slPips, then it is refused naming slPips', () => {
    const detail = expectRefusedAtPath(body('buy', { symbol: 'EURUSD', volume: 1, sl: 1.05, slPips: 10 }), 'slPips');
    expect(detail.message).toContain('sl');
  });

  test('when an entry carries both tp and tpPips, then it is refused naming tpPips', () => {
    const detail = expectRefusedAtPath(body('sell_limit', { symbol: 'EURUSD', volume: 1, price: 1.1, tp: 1.0, tpPips: 10 }), 'tpPips');
    expect(detail.message).toContain('tp');
  });
});

describe('ExternalSignal schema: filters, close and close_all', () => {
  test.each(['buy', 'sell'])('when the side filter is %s, then it is accepted', (side) => {
    expectAccepted(body('close', { side }));
  });

  test.each(['long', 'BUY', 'Sell', ''])('when the side filter is %p, then it is refused naming side', (side) => {
    expectRefusedAtPath(body('close', { side }), 'side');
  });

  test.each(['profit', 'loss'])('when the pnl filter is %s, then it is accepted', (pnl) => {
    expectAccepted(body('close', { pnl }));
  });

  test.each(['win', 'PROFIT', 'losses', ''])('when the pnl filter is %p, then it is refused naming pnl', (pnl) => {
    expectRefusedAtPath(body('close', { pnl }), 'pnl');
  });

  test('when a close has neither positionId nor any filter, then it is refused naming positionId and the filters', () => {
    const { details } = refused(body('close', {}));
    const detail = details.find((d) => d.message.includes('positionId'));
    expect(detail).toBeDefined();
    for (const f of ['symbol', 'side', 'pnl']) expect(detail!.message).toContain(f);
  });

  test.each([{ symbol: 'EURUSD' }, { side: 'buy' }, { pnl: 'loss' }])(
    'when a close has a positionId and also the filter %j, then it is refused naming positionId',
    (filter) => {
      const detail = expectRefusedAtPath(body('close', { positionId: 'p-1', ...filter }), 'positionId');
      expect(detail.message).toMatch(/not both/);
    },
  );

  test('when close_all carries any field besides secret, action and meta, then it is refused naming that field', () => {
    for (const field of FIELDS) expectRefusedAtPath(body('close_all', { [field]: SAMPLE[field] }), field);
    expectAccepted(body('close_all', { meta: { origin: 'panic-button' } }));
  });
});

describe('ExternalSignal schema: expiry', () => {
  test.each([
    '2024-06-12T12:00:01Z',
    '2024-06-12T12:00:00.001Z',
    '2024-06-12T14:30:00+02:00',
    '2024-06-12T09:30:00-03:00', // 12:30Z
    '2025-01-01T00:00:00.000+00:00',
  ])('when expiry is %s (ISO 8601 with offset, after now), then it is accepted', (expiry) => {
    expectAccepted(body('modify_pending_expiry', { orderId: 'o-1', expiry }));
  });

  test.each([
    '2024-06-12T12:00:00Z', // exactly now
    '2024-06-12T11:59:59Z',
    '2024-06-12T13:59:59+02:00', // 11:59:59Z
    '2020-01-01T00:00:00Z',
  ])('when expiry is %s (now or earlier), then it is refused naming expiry', (expiry) => {
    const detail = expectRefusedAtPath(body('modify_pending_expiry', { orderId: 'o-1', expiry }), 'expiry');
    expect(detail.message).toMatch(/future/);
  });

  test.each(['2024-06-13T12:00:00', '2024-06-13', '13/06/2024 12:00', 'tomorrow', '', '1718280000000', '2024-06-13T25:00:00Z'])(
    'when expiry is %p (not ISO 8601 with offset), then it is refused naming expiry',
    (expiry) => {
      expectRefusedAtPath(body('modify_pending_expiry', { orderId: 'o-1', expiry }), 'expiry');
    },
  );

  test('when the same expiry is checked against two injected clocks, then it is judged against the injected now', () => {
    const b = body('modify_pending_expiry', { orderId: 'o-1', expiry: '2024-06-12T12:00:00Z' });
    expect(validateSignal(b, () => NOW_MS - 1).ok).toBe(true);
    expect(validateSignal(b, () => NOW_MS).ok).toBe(false);
  });

  test('when modify_pending carries a past expiry, then it is refused naming expiry', () => {
    expectRefusedAtPath(body('modify_pending', { orderId: 'o-1', expiry: '2024-06-01T00:00:00Z' }), 'expiry');
  });
});

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

const FC = { numRuns: 1000, seed: 20240612 } as const;

const symbolArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._#\-/]{0,31}$/);
const idArb = fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/);
const secretArb = fc.string({ minLength: 1, maxLength: 256 });
const positive = (max: number) => fc.double({ min: Number.MIN_VALUE, max, noNaN: true });
const lotsArb = positive(100);
const priceArb = positive(1e9);
const pipsArb = positive(1e6);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
/** A future instant (1 s to ~5 years ahead), written with Z or a numeric offset, with or without milliseconds. */
const expiryArb = fc
  .record({
    aheadMs: fc.integer({ min: 1000, max: 5 * 365 * 86_400_000 }),
    offsetMin: fc.integer({ min: -12 * 4, max: 14 * 4 }).map((q) => q * 15),
    zulu: fc.boolean(),
    millis: fc.boolean(),
  })
  .map(({ aheadMs, offsetMin, zulu, millis }) => {
    const at = NOW_MS + aheadMs;
    if (zulu) {
      const iso = new Date(at).toISOString();
      return millis ? iso : iso.replace(/\.\d{3}Z$/, 'Z');
    }
    const local = new Date(at + offsetMin * 60_000).toISOString().slice(0, millis ? 23 : 19);
    const sign = offsetMin < 0 ? '-' : '+';
    const abs = Math.abs(offsetMin);
    return `${local}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  });

const KNOWN_KEYS = new Set(['secret', 'action', 'meta', 'idempotencyKey', ...FIELDS]);
const metaArb = fc
  .record(
    {
      origin: fc.string({ maxLength: 256 }),
      extra: fc.dictionary(
        fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,11}$/).filter((k) => k !== 'origin'),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 4 },
      ),
    },
    { requiredKeys: [] },
  )
  .map(({ origin, extra }) => ({ ...(extra ?? {}), ...(origin === undefined ? {} : { origin }) }));

/** Optional stop fields of an entry: sl xor slPips (or neither), tp xor tpPips (or neither). */
const entryStopsArb = fc
  .record({
    sl: fc.oneof(fc.constant({}), priceArb.map((sl) => ({ sl })), pipsArb.map((slPips) => ({ slPips }))),
    tp: fc.oneof(fc.constant({}), priceArb.map((tp) => ({ tp })), pipsArb.map((tpPips) => ({ tpPips }))),
  })
  .map(({ sl, tp }) => ({ ...sl, ...tp }));

/** A non-empty subset of the given field generators, as an object. */
function someOf(arbs: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Body> {
  return fc.record(arbs, { requiredKeys: [] }).filter((o) => Object.keys(o).length > 0);
}

const fieldsArb: Record<Action, fc.Arbitrary<Body>> = (() => {
  const market = fc.record({ symbol: symbolArb, volume: lotsArb, stops: entryStopsArb }).map(({ stops, ...f }) => ({ ...f, ...stops }));
  const pending = fc
    .record({ symbol: symbolArb, volume: lotsArb, price: priceArb, stops: entryStopsArb })
    .map(({ stops, ...f }) => ({ ...f, ...stops }));
  const stopLimit = fc
    .record({ symbol: symbolArb, volume: lotsArb, price: priceArb, stopLimitPrice: priceArb, stops: entryStopsArb })
    .map(({ stops, ...f }) => ({ ...f, ...stops }));
  return {
    buy: market,
    sell: market,
    buy_limit: pending,
    sell_limit: pending,
    buy_stop: pending,
    sell_stop: pending,
    buy_stop_limit: stopLimit,
    sell_stop_limit: stopLimit,
    close: fc.oneof(
      fc.record({ positionId: idArb }),
      someOf({ symbol: symbolArb, side: fc.constantFrom('buy', 'sell'), pnl: fc.constantFrom('profit', 'loss') }),
    ),
    close_all: fc.constant({}),
    partial_close: fc.record({ positionId: idArb, partialVolume: lotsArb }),
    cancel_pending: fc.record({ orderId: idArb }),
    modify_sl: fc.record({ positionId: idArb, sl: priceArb }),
    modify_tp: fc.record({ positionId: idArb, tp: priceArb }),
    modify_pending: fc
      .record({
        orderId: idArb,
        changes: someOf({ price: priceArb, stopLimitPrice: priceArb, sl: priceArb, tp: priceArb, expiry: expiryArb }),
      })
      .map(({ orderId, changes }) => ({ orderId, ...changes })),
    modify_pending_expiry: fc.record({ orderId: idArb, expiry: expiryArb }),
    breakeven: fc.record({ positionId: idArb }),
  };
})();

const validBodyOf = (action: Action): fc.Arbitrary<Body> =>
  fc
    .record({
      secret: secretArb,
      fields: fieldsArb[action],
      meta: fc.option(metaArb, { nil: undefined }),
      idempotencyKey: fc.option(fc.string({ minLength: 1, maxLength: 128 }), { nil: undefined }),
    })
    .map(({ secret, fields, meta, idempotencyKey }) => ({
      secret,
      action,
      ...fields,
      ...(meta === undefined ? {} : { meta }),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    }));

const validBodyArb: fc.Arbitrary<Body> = fc.constantFrom(...ACTIONS).chain(validBodyOf);

function assertRefusedNaming(b: Body, field: string): void {
  const result = validate(b);
  if (result.ok) throw new Error(`accepted although ${field} is wrong: ${JSON.stringify(b)}`);
  if (!namesField(result.details, field)) throw new Error(`no detail names ${field}: ${JSON.stringify(result.details)}`);
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
    const arb = validBodyArb
      .filter((b) => ['secret', 'action', ...REQUIRED[b.action as Action]].length > 0)
      .chain((b) => fc.record({ b: fc.constant(b), field: fc.constantFrom('secret', 'action', ...REQUIRED[b.action as Action]) }));
    fc.assert(
      fc.property(arb, ({ b, field }) => {
        assertRefusedNaming(without(b, field), field);
      }),
      FC,
    );
  });

  test('when every "one of" field is dropped from a valid close or modify_pending, then it is refused naming the choices', () => {
    const arb = fc.constantFrom<Action>('close', 'modify_pending').chain(validBodyOf);
    fc.assert(
      fc.property(arb, (b) => {
        const choices = b.action === 'close' ? ['positionId', 'symbol', 'side', 'pnl'] : ['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'];
        let mutated = b;
        for (const f of choices) mutated = without(mutated, f);
        const result = validate(mutated);
        if (result.ok) throw new Error(`accepted: ${JSON.stringify(mutated)}`);
        for (const f of choices) expect(result.error).toContain(f);
      }),
      FC,
    );
  });

  test('when an unknown top-level key is added to any valid body, then it is refused naming that key', () => {
    const keyArb = fc.oneof(
      fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$-]{0,20}$/),
      fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'Secret', 'ACTION', 'Volume', 'stop_loss'),
    );
    const arb = fc.record({ b: validBodyArb, key: keyArb.filter((k) => !KNOWN_KEYS.has(k)), value: fc.jsonValue({ maxDepth: 1 }) });
    fc.assert(
      fc.property(arb, ({ b, key, value }) => {
        const mutated = { ...b };
        Object.defineProperty(mutated, key, { value, enumerable: true, configurable: true, writable: true });
        assertRefusedNaming(mutated, key);
      }),
      FC,
    );
  });

  test('when a numeric field of any valid body is sent as its string form, then it is refused naming that field', () => {
    const arb = validBodyArb
      .filter((b) => NUMERIC_FIELDS.some((f) => f in b))
      .chain((b) => fc.record({ b: fc.constant(b), field: fc.constantFrom(...NUMERIC_FIELDS.filter((f) => f in b)) }));
    fc.assert(
      fc.property(arb, ({ b, field }) => {
        assertRefusedNaming({ ...b, [field]: String(b[field]) }, field);
      }),
      FC,
    );
  });

  test('when a numeric field of any valid body is replaced by a non-number JSON value, then it is refused naming that field', () => {
    const notNumber = fc.oneof(fc.boolean(), fc.constant(null), fc.string(), fc.array(fc.double(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
    const arb = validBodyArb
      .filter((b) => NUMERIC_FIELDS.some((f) => f in b))
      .chain((b) => fc.record({ b: fc.constant(b), field: fc.constantFrom(...NUMERIC_FIELDS.filter((f) => f in b)), value: notNumber }));
    fc.assert(
      fc.property(arb, ({ b, field, value }) => {
        assertRefusedNaming({ ...b, [field]: value }, field);
      }),
      FC,
    );
  });

  test('when volume or partialVolume of any valid body is out of range (<= 0, > 100, NaN, infinite), then it is refused naming it', () => {
    const outOfRange = fc.oneof(
      fc.double({ max: 0, noNaN: true }),
      fc.double({ min: 100, minExcluded: true, noNaN: true }),
      fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 100.0001, 100 + Number.EPSILON * 100),
    );
    const arb = validBodyArb
      .filter((b) => 'volume' in b || 'partialVolume' in b)
      .chain((b) => fc.record({ b: fc.constant(b), value: outOfRange }));
    fc.assert(
      fc.property(arb, ({ b, value }) => {
        const field = 'volume' in b ? 'volume' : 'partialVolume';
        assertRefusedNaming({ ...b, [field]: value }, field);
      }),
      FC,
    );
  });

  test('when a field the action does not use is added to any valid body, then it is refused naming that field', () => {
    const arb = validBodyArb
      .filter((b) => FIELDS.some((f) => !ALLOWED[b.action as Action].includes(f)))
      .chain((b) =>
        fc.record({ b: fc.constant(b), field: fc.constantFrom(...FIELDS.filter((f) => !ALLOWED[b.action as Action].includes(f))) }),
      );
    fc.assert(
      fc.property(arb, ({ b, field }) => {
        assertRefusedNaming({ ...b, [field]: SAMPLE[field] }, field);
      }),
      FC,
    );
  });
});
