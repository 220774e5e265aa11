import { CAPABILITIES, compareVersions, missingCapability } from '../../src/domain/capabilities';
import { accountSchema, type Platform } from '../../src/domain/account';
import { ACTIONS, type Action } from '../../src/domain/actions';

/** Spec §2.1 (stop-limit entries and the modify_pending family need a recent bridge and may be unavailable on a venue). */

const NEEDS_RECENT: Action[] = ['buy_stop_limit', 'sell_stop_limit', 'modify_pending', 'modify_pending_expiry'];
const BASE_ACTIONS = ACTIONS.filter((a) => !NEEDS_RECENT.includes(a));

function account(platform: Platform, bridgeVersion: string, venue: { stopLimit?: boolean; modifyPending?: boolean } = {}) {
  return accountSchema.parse({ id: 'acc-1', owner: 'alice', platform, bridgeVersion, venue });
}

describe('capability table', () => {
  test('when the table is read, then mt5 needs EA 2.0.0 and ctrader cBot 1.1.0 for stop-limit and modify_pending; base is 1.0.0', () => {
    expect(CAPABILITIES.mt5.base).toBe('1.0.0');
    expect(CAPABILITIES.ctrader.base).toBe('1.0.0');
    for (const a of NEEDS_RECENT) {
      expect(CAPABILITIES.mt5.needs[a]).toBe('2.0.0');
      expect(CAPABILITIES.ctrader.needs[a]).toBe('1.1.0');
    }
    for (const a of BASE_ACTIONS) {
      expect(CAPABILITIES.mt5.needs[a]).toBeUndefined();
      expect(CAPABILITIES.ctrader.needs[a]).toBeUndefined();
    }
  });

  test.each(NEEDS_RECENT)('when an mt5 EA 1.9.9 receives %s, then it is refused naming EA 2.0.0 and the current version', (action) => {
    const why = missingCapability(account('mt5', '1.9.9'), action);
    expect(why).toContain('EA version 2.0.0');
    expect(why).toContain('1.9.9');
    expect(why).toContain(action);
  });

  test.each(NEEDS_RECENT)('when an mt5 EA 2.0.0 or later receives %s, then it is allowed', (action) => {
    expect(missingCapability(account('mt5', '2.0.0'), action)).toBeUndefined();
    expect(missingCapability(account('mt5', '2.0.1'), action)).toBeUndefined();
    expect(missingCapability(account('mt5', '10.0.0'), action)).toBeUndefined();
  });

  test.each(NEEDS_RECENT)('when a ctrader cBot 1.0.9 receives %s, then it is refused naming cBot 1.1.0', (action) => {
    const why = missingCapability(account('ctrader', '1.0.9'), action);
    expect(why).toContain('cBot version 1.1.0');
    expect(why).toContain('1.0.9');
  });

  test.each(NEEDS_RECENT)('when a ctrader cBot 1.1.0 or later receives %s, then it is allowed', (action) => {
    expect(missingCapability(account('ctrader', '1.1.0'), action)).toBeUndefined();
    expect(missingCapability(account('ctrader', '1.10.0'), action)).toBeUndefined();
  });

  test.each(BASE_ACTIONS)('when a base-version (1.0.0) bridge receives %s, then it is allowed on both platforms', (action) => {
    expect(missingCapability(account('mt5', '1.0.0'), action)).toBeUndefined();
    expect(missingCapability(account('ctrader', '1.0.0'), action)).toBeUndefined();
  });

  test.each(ACTIONS)('when a bridge below base (0.9.9, or the never-connected 0.0.0) receives %s, then it is refused', (action) => {
    expect(missingCapability(account('mt5', '0.9.9'), action)).toContain(NEEDS_RECENT.includes(action) ? '2.0.0' : '1.0.0');
    expect(missingCapability(account('ctrader', '0.0.0'), action)).toBeDefined();
  });

  test('when an account is registered without a bridge version, then it defaults to 0.0.0 and nothing runs', () => {
    const a = accountSchema.parse({ id: 'acc-2', owner: 'bob', platform: 'mt5' });
    expect(a.bridgeVersion).toBe('0.0.0');
    expect(missingCapability(a, 'buy')).toBeDefined();
  });
});

describe('venue flags', () => {
  test.each(['buy_stop_limit', 'sell_stop_limit'] as const)(
    'when the venue offers no stop-limit orders, then %s is refused even on the newest bridge',
    (action) => {
      expect(missingCapability(account('mt5', '9.0.0', { stopLimit: false }), action)).toMatch(/stop-limit/);
      expect(missingCapability(account('ctrader', '9.0.0', { stopLimit: false }), action)).toMatch(/stop-limit/);
    },
  );

  test.each(['modify_pending', 'modify_pending_expiry'] as const)(
    'when the venue cannot modify pending orders, then %s is refused even on the newest bridge',
    (action) => {
      expect(missingCapability(account('mt5', '9.0.0', { modifyPending: false }), action)).toMatch(/modify pending/);
    },
  );

  test('when the venue lacks stop-limit orders, then modify_pending and other actions are unaffected', () => {
    const a = account('mt5', '2.0.0', { stopLimit: false });
    expect(missingCapability(a, 'modify_pending')).toBeUndefined();
    expect(missingCapability(a, 'buy_limit')).toBeUndefined();
  });

  test('when the venue cannot modify pending orders, then stop-limit entries and other actions are unaffected', () => {
    const a = account('ctrader', '1.1.0', { modifyPending: false });
    expect(missingCapability(a, 'buy_stop_limit')).toBeUndefined();
    expect(missingCapability(a, 'cancel_pending')).toBeUndefined();
  });

  test('when the venue flags are not given, then both default to offered', () => {
    expect(account('mt5', '2.0.0').venue).toEqual({ stopLimit: true, modifyPending: true });
  });
});

describe('compareVersions', () => {
  test.each([
    ['1.0.0', '1.0.0', 0],
    ['2.0.0', '1.9.9', 1],
    ['1.9.9', '2.0.0', -1],
    ['1.10.0', '1.9.0', 1],
    ['1.0.10', '1.0.9', 1],
    ['0.0.1', '0.0.0', 1],
    ['2', '2.0.0', 0],
    ['2.1', '2.1.0', 0],
    ['2.1', '2.0.5', 1],
  ])('when %s is compared with %s, then the sign is %d (numeric, not lexicographic)', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
    expect(Math.sign(compareVersions(b, a))).toBe(-sign || 0);
  });
});
