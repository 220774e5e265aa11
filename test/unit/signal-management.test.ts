import { ACTIONS, type Action } from '../../src/domain/actions';
import type { ValidationDetail } from '../../src/domain/signal';
import { MINIMAL, SECRET, validate } from '../helpers/signal-schema';
import type { Body } from '../helpers/signal-arbitraries';

/**
 * The trade-management fields of the entries (docs/trade-management.md §1), checked against validateSignal: every
 * bound and cross-field rule, good and bad, each refusal naming the field path. Written from the contract, not read
 * from the schema.
 */

const MARKET: Action[] = ['buy', 'sell'];
const OTHER_ENTRIES: Action[] = ['buy_limit', 'sell_limit', 'buy_stop', 'sell_stop', 'buy_stop_limit', 'sell_stop_limit'];
// The smallest valid body of each action, on the same fixed clock as the schema's own tests.
const ENTRY_FIELDS: Partial<Record<Action, Body>> = Object.fromEntries([...MARKET, ...OTHER_ENTRIES].map((a) => [a, MINIMAL[a]]));
const EXITS = ACTIONS.filter((a) => !(a in ENTRY_FIELDS));

const entry = (action: Action, extra: Body = {}): Body => ({ secret: SECRET, action, ...MINIMAL[action], ...extra });
const buy = (extra: Body) => entry('buy', extra);

function accepted(b: Body): void {
  const result = validate(b);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(b)} to be accepted, got: ${result.error}`);
  expect(result.signal).toEqual(b);
}

function refusedAt(b: Body, path: string): ValidationDetail {
  const result = validate(b);
  if (result.ok) throw new Error(`expected ${JSON.stringify(b)} to be refused at ${path}`);
  const detail = result.details.find((d) => d.path === path);
  if (!detail) throw new Error(`expected a detail at ${path}, got ${JSON.stringify(result.details)}`);
  expect(result.error).toContain(`${path}: `);
  return detail;
}

const EVERYTHING = {
  trailDistancePips: 15,
  trailTriggerPips: 10,
  trailStepPips: 2,
  breakevenTriggerPips: 20,
  breakevenOffsetPips: 2,
  takeProfits: [
    { tpPips: 10, closePercent: 50 },
    { tpPips: 25, closePercent: 50 },
  ],
  maxSpreadPips: 1.5,
};

describe('trade management on entries: where the fields go', () => {
  test.each(MARKET)('when a %s carries every management field and closeOpposite, then it is accepted unchanged', (action) => {
    accepted(entry(action, { ...EVERYTHING, closeOpposite: true, slPips: 20, tpPips: 40 }));
    accepted(entry(action, { closeOpposite: false }));
  });

  test.each(OTHER_ENTRIES)('when a %s carries every management field, then it is accepted unchanged', (action) => {
    accepted(entry(action, { ...EVERYTHING, sl: 1.0, tp: 1.5 }));
  });

  test.each(OTHER_ENTRIES)('when a %s carries closeOpposite (true or false), then it is refused: not used by a pending entry', (action) => {
    for (const closeOpposite of [true, false]) expect(refusedAt(entry(action, { closeOpposite }), 'closeOpposite').message).toContain(`not used by ${action}`);
  });

  const exitCases = EXITS.flatMap((action) => [...Object.keys(EVERYTHING), 'closeOpposite'].map((field) => [action, field] as const));
  test.each(exitCases)('when the exit %s carries %s, then it is refused naming it (not used by)', (action, field) => {
    const value = field === 'closeOpposite' ? true : EVERYTHING[field as keyof typeof EVERYTHING];
    expect(refusedAt(entry(action, { [field]: value }), field).message).toContain('not used by');
  });
});

describe('trade management on entries: bounds of the pip fields', () => {
  const positive = ['trailDistancePips', 'trailStepPips', 'breakevenTriggerPips', 'maxSpreadPips'];
  const withParents: Body = { trailDistancePips: 10, breakevenTriggerPips: 30 };

  test.each(positive.flatMap((f) => [0, -1, 1e6 + 1, '5', null, true].map((v) => [f, v] as const)))(
    'when %s is %p, then it is refused at it',
    (field, value) => {
      refusedAt(buy({ ...withParents, [field]: value }), field);
    },
  );

  test.each(positive.flatMap((f) => [0.1, 1e6].map((v) => [f, v] as const)))('when %s is %p, then it is accepted', (field, value) => {
    accepted(buy({ ...withParents, [field]: value }));
  });

  test.each([-0.1, 1e6 + 1, '0', null])('when trailTriggerPips is %p, then it is refused at it', (value) => {
    refusedAt(buy({ trailDistancePips: 10, trailTriggerPips: value }), 'trailTriggerPips');
  });

  test.each([-0.1, 1e6 + 1, '0', null])('when breakevenOffsetPips is %p, then it is refused at it', (value) => {
    refusedAt(buy({ breakevenTriggerPips: 10, breakevenOffsetPips: value }), 'breakevenOffsetPips');
  });

  test('when trailTriggerPips and breakevenOffsetPips are 0 (the defaults written out), then they are accepted', () => {
    accepted(buy({ trailDistancePips: 10, trailTriggerPips: 0, breakevenTriggerPips: 5, breakevenOffsetPips: 0 }));
  });

  test('when closeOpposite is not a boolean, then it is refused at it', () => {
    for (const v of ['true', 1, null]) refusedAt(buy({ closeOpposite: v }), 'closeOpposite');
  });
});

describe('trade management on entries: the fields that need another', () => {
  test.each(['trailTriggerPips', 'trailStepPips'])('when %s comes without trailDistancePips, then it is refused at it, naming trailDistancePips', (field) => {
    expect(refusedAt(buy({ [field]: 5 }), field).message).toContain('trailDistancePips');
  });

  test('when breakevenOffsetPips comes without breakevenTriggerPips, then it is refused at it', () => {
    expect(refusedAt(buy({ breakevenOffsetPips: 1 }), 'breakevenOffsetPips').message).toContain('breakevenTriggerPips');
  });

  test.each([10, 12])('when breakevenOffsetPips is %p with a trigger of 10 (not less than it), then it is refused at it', (offset) => {
    expect(refusedAt(buy({ breakevenTriggerPips: 10, breakevenOffsetPips: offset }), 'breakevenOffsetPips').message).toMatch(/less than/);
  });

  test('when breakevenOffsetPips is just under the trigger, and trailing and breakeven are combined, then it is accepted', () => {
    accepted(buy({ breakevenTriggerPips: 10, breakevenOffsetPips: 9.9, trailDistancePips: 5 }));
  });
});

describe('trade management on entries: take-profit levels', () => {
  const level = (tpPips: number, closePercent: number) => ({ tpPips, closePercent });

  test('when there are 1 and 5 levels, in pips or as prices, then they are accepted', () => {
    accepted(buy({ takeProfits: [level(10, 100)] }));
    accepted(buy({ takeProfits: [level(10, 20), level(20, 20), level(30, 20), level(40, 20), level(50, 20)] }));
    accepted(
      buy({
        tp: 1.2,
        takeProfits: [
          { tp: 1.1, closePercent: 30 },
          { tp: 1.15, closePercent: 30 },
        ],
      }),
    );
    // 33.3 + 33.3 + 33.4 is 100.00000000000001 as doubles: still 100.
    accepted(buy({ takeProfits: [level(10, 33.3), level(20, 33.3), level(30, 33.4)] }));
  });

  test('when takeProfits is empty, has 6 levels, or is not an array, then it is refused at takeProfits', () => {
    refusedAt(buy({ takeProfits: [] }), 'takeProfits');
    refusedAt(buy({ takeProfits: [1, 2, 3, 4, 5, 6].map((i) => level(i * 10, 10)) }), 'takeProfits');
    refusedAt(buy({ takeProfits: level(10, 50) }), 'takeProfits');
  });

  test.each([0, -5, 100.5, '50', null])('when a level closePercent is %p, then it is refused at takeProfits.1.closePercent', (closePercent) => {
    refusedAt(buy({ takeProfits: [level(10, 10), { tpPips: 20, closePercent }] }), 'takeProfits.1.closePercent');
  });

  test('when a level has no closePercent, then it is refused at takeProfits.0.closePercent', () => {
    refusedAt(buy({ takeProfits: [{ tpPips: 10 }] }), 'takeProfits.0.closePercent');
  });

  test('when a level carries an unknown key, then it is refused at that level naming the key', () => {
    const result = validate(buy({ takeProfits: [{ tpPips: 10, closePercent: 50, volume: 1 }] }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.details).toContainEqual({ path: 'takeProfits.0', message: expect.stringContaining('volume') });
  });

  test.each([
    [{ tpPips: 0, closePercent: 10 }, 'takeProfits.0.tpPips'],
    [{ tpPips: 1e6 + 1, closePercent: 10 }, 'takeProfits.0.tpPips'],
    [{ tp: 0, closePercent: 10 }, 'takeProfits.0.tp'],
    [{ tp: -1.1, closePercent: 10 }, 'takeProfits.0.tp'],
    [{ tp: '1.1', closePercent: 10 }, 'takeProfits.0.tp'],
  ])('when a level is %j, then it is refused at %s', (lvl, path) => {
    refusedAt(buy({ takeProfits: [lvl] }), path);
  });

  test('when a level gives neither tpPips nor tp, then it is refused at that level', () => {
    expect(refusedAt(buy({ takeProfits: [level(10, 10), { closePercent: 10 }] }), 'takeProfits.1').message).toMatch(/tpPips or tp/);
  });

  test('when a level gives both tpPips and tp, then it is refused at its tp', () => {
    expect(refusedAt(buy({ takeProfits: [{ tpPips: 10, tp: 1.1, closePercent: 10 }] }), 'takeProfits.0.tp').message).toMatch(/not both/);
  });

  test('when the levels mix tpPips and tp, then the first level of the other kind is refused', () => {
    refusedAt(buy({ takeProfits: [level(10, 10), level(20, 10), { tp: 1.2, closePercent: 10 }] }), 'takeProfits.2.tp');
    refusedAt(buy({ takeProfits: [{ tp: 1.2, closePercent: 10 }, level(20, 10)] }), 'takeProfits.1.tpPips');
  });

  test('when two levels are at the same distance (or price), then the later one is refused naming the earlier', () => {
    expect(refusedAt(buy({ takeProfits: [level(10, 10), level(20, 10), level(10, 10)] }), 'takeProfits.2.tpPips').message).toContain('takeProfits.0');
    refusedAt(
      buy({
        takeProfits: [
          { tp: 1.2, closePercent: 10 },
          { tp: 1.2, closePercent: 10 },
        ],
      }),
      'takeProfits.1.tp',
    );
  });

  test('when the closePercent of the levels add up to more than 100, then it is refused at takeProfits with the sum', () => {
    expect(refusedAt(buy({ takeProfits: [level(10, 60), level(20, 50)] }), 'takeProfits').message).toContain('110');
    refusedAt(buy({ takeProfits: [level(10, 100), level(20, 0.001)] }), 'takeProfits');
  });

  test("when the entry has tpPips, then every level's tpPips must be nearer; levels in tp prices are not compared to it", () => {
    accepted(buy({ tpPips: 30, takeProfits: [level(10, 50), level(29.9, 50)] }));
    expect(refusedAt(buy({ tpPips: 30, takeProfits: [level(10, 50), level(30, 50)] }), 'takeProfits.1.tpPips').message).toContain('tpPips');
    refusedAt(buy({ tpPips: 30, takeProfits: [level(40, 50)] }), 'takeProfits.0.tpPips');
    accepted(buy({ tpPips: 30, takeProfits: [{ tp: 1.3, closePercent: 50 }] }));
    accepted(buy({ tp: 1.2, takeProfits: [level(40, 50)] }));
  });

  test.each(OTHER_ENTRIES)('when the pending entry %s has a level beyond its tpPips, then it is refused too', (action) => {
    refusedAt(entry(action, { tpPips: 10, takeProfits: [level(12, 50)] }), 'takeProfits.0.tpPips');
  });
});

describe('trade management on entries: every existing rule still holds', () => {
  test('when a buy with management has no volume, then it is still refused at volume', () => {
    refusedAt({ secret: 'whsec_test', action: 'buy', symbol: 'EURUSD', ...EVERYTHING }, 'volume');
  });

  test('when a buy with management gives sl and slPips, then it is still refused at slPips', () => {
    refusedAt(buy({ ...EVERYTHING, sl: 1.0, slPips: 10 }), 'slPips');
  });
});
// The properties (generated valid entries with management accepted unchanged, their mutations refused naming the
// field) run with the schema's others in signal-schema.test.ts.
