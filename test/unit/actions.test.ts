import { ACTIONS, entrySide, isMarketEntry, isOpening, requiresIdempotencyKey, type Action } from '../../src/domain/actions';
import { SPEC_NOT_OPENING, SPEC_OPENING } from '../helpers/spec-actions';

/** Spec §1.6 (opening signals), §2.1 action table and §5 rule 4 (actions that need X-Idempotency-Key). */

const OPENING: readonly Action[] = SPEC_OPENING;
const NOT_OPENING: readonly Action[] = SPEC_NOT_OPENING;

describe('actions', () => {
  test('when the action list is read, then it holds the 17 actions of spec §2.1 once each', () => {
    expect(new Set(ACTIONS).size).toBe(17);
    expect([...ACTIONS].sort()).toEqual([...OPENING, ...NOT_OPENING].sort());
  });

  test.each(OPENING)('when the action is the entry %s, then it is opening', (action) => {
    expect(isOpening(action)).toBe(true);
  });

  test.each(NOT_OPENING)('when the action is %s, then it is not opening', (action) => {
    expect(isOpening(action)).toBe(false);
  });

  test.each([
    ['buy', 'buy'],
    ['buy_limit', 'buy'],
    ['buy_stop', 'buy'],
    ['buy_stop_limit', 'buy'],
    ['sell', 'sell'],
    ['sell_limit', 'sell'],
    ['sell_stop', 'sell'],
    ['sell_stop_limit', 'sell'],
  ] as const)('when the entry is %s, then its side is %s', (action, side) => {
    expect(entrySide(action)).toBe(side);
  });

  test.each(NOT_OPENING)('when the action %s opens nothing, then it has no entry side', (action) => {
    expect(entrySide(action)).toBeUndefined();
  });

  test('when the action is buy or sell, then it is a market entry; pending and stop-limit entries are not', () => {
    expect(isMarketEntry('buy')).toBe(true);
    expect(isMarketEntry('sell')).toBe(true);
    for (const a of OPENING.filter((x) => x !== 'buy' && x !== 'sell')) expect(isMarketEntry(a)).toBe(false);
    for (const a of NOT_OPENING) expect(isMarketEntry(a)).toBe(false);
  });
});

describe('requiresIdempotencyKey (spec §5 rule 4)', () => {
  test.each(['breakeven', 'modify_sl', 'modify_tp'] as const)('when the action is %s, then a key is required (with a positionId too)', (action) => {
    expect(requiresIdempotencyKey({ action })).toBe(true);
    expect(requiresIdempotencyKey({ action, positionId: '1001' })).toBe(true);
  });

  test('when the action is a filtered close (no positionId), then a key is required', () => {
    expect(requiresIdempotencyKey({ action: 'close' })).toBe(true);
    expect(requiresIdempotencyKey({ action: 'close', positionId: undefined })).toBe(true);
  });

  test('when the action is a close by positionId, then no key is required', () => {
    expect(requiresIdempotencyKey({ action: 'close', positionId: '1001' })).toBe(false);
  });

  const others = ACTIONS.filter((a) => !['breakeven', 'modify_sl', 'modify_tp', 'close'].includes(a));
  test.each(others)('when the action is %s, then no key is required', (action) => {
    expect(requiresIdempotencyKey({ action })).toBe(false);
    expect(requiresIdempotencyKey({ action, positionId: '1001' })).toBe(false);
  });

  test('when every action is checked, then exactly four need a key without a positionId', () => {
    expect(ACTIONS.filter((action) => requiresIdempotencyKey({ action })).sort()).toEqual(['breakeven', 'close', 'modify_sl', 'modify_tp']);
  });
});
