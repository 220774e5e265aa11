import { ACTIONS, type Action } from '../../src/domain/actions';
import { validateSignal } from '../../src/domain/signal';
import { ALLOWED, FIELDS, NUMERIC_FIELDS, REQUIRED, without } from '../helpers/signal-arbitraries';
import { NOW_MS, SECRET, validate, refused, expectAccepted, expectRefusedNaming, expectRefusedAtPath, MINIMAL, SAMPLE, body } from '../helpers/signal-schema';

/**
 * The ExternalSignal of spec §2.1 and its action table, checked against validateSignal.
 * The expectations below are written from the spec, not read from ACTION_RULES, so a drift between the two shows.
 */

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

  test.each(['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'])('when modify_pending carries only %s besides orderId, then it is accepted', (field) => {
    expectAccepted(body('modify_pending', { orderId: 'o-1', [field]: SAMPLE[field] }));
  });

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

  test.each([
    ['close', 'positionId'],
    ['cancel_pending', 'orderId'],
  ] as const)("when a %s names a ticket in the trade journal's own form order:…, then it is refused naming %s", (action, field) => {
    const { details } = refused(body(action, { [field]: 'order:999' }));
    expect(details).toContainEqual({ path: field, message: "must not begin with order: (the trade journal's own form for pending orders)" });
    expectAccepted(body(action, { [field]: '999' }));
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
