import { CURRENT_BRIDGE_VERSION, managementGap } from '../../src/domain/capabilities';
import { accountSchema, BRIDGE_FEATURES, type BridgeFeature } from '../../src/domain/account';
import { featuresNeeded, resolveManagement, withoutManagement } from '../../src/domain/management';
import { commandSchema } from '../../src/domain/bridge-protocol';
import { riskSettingsSchema, symbolMapSchema } from '../../src/domain/risk-settings';
import { planOrder } from '../../src/risk/rules';
import type { AccountSnapshot, SignalInstruction } from '../../src/domain/workflow-input';

/**
 * Trade management from the signal to the command (docs/trade-management.md §2-§4): the features an entry needs, the
 * 412's gap, the owner's defaults merged by planOrder with the bridge's defaults resolved, and management_unsupported.
 */

const MANAGEMENT_FEATURES: BridgeFeature[] = ['trailing_stop', 'breakeven_trigger', 'take_profit_levels', 'close_opposite', 'max_spread'];
const WED_NOON = Date.parse('2024-06-12T12:00:00Z');
const times = { acceptedAtMs: WED_NOON, nowMs: WED_NOON, expiresAtMs: WED_NOON + 30_000 };

function snapshot(risk: unknown = {}, bridgeFeatures: BridgeFeature[] = MANAGEMENT_FEATURES): AccountSnapshot {
  return {
    id: 'acc-1',
    owner: 'alice',
    platform: 'mt5',
    region: 'default',
    bridgeVersion: '3.6.0',
    risk: riskSettingsSchema.parse(risk),
    symbols: symbolMapSchema.parse({}),
    ...(bridgeFeatures.length > 0 ? { bridgeFeatures } : {}),
  };
}

const buy = (extra: Partial<SignalInstruction> = {}): SignalInstruction => ({ action: 'buy', symbol: 'EURUSD', volume: 0.1, ...extra });
const levels = [
  { tpPips: 10, closePercent: 50 },
  { tpPips: 20, closePercent: 50 },
];

describe('featuresNeeded: one feature per kind of management (contract §2)', () => {
  test.each([
    [{ trailDistancePips: 10 }, ['trailing_stop']],
    [{ trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 }, ['trailing_stop']],
    [{ breakevenTriggerPips: 10 }, ['breakeven_trigger']],
    [{ breakevenTriggerPips: 10, breakevenOffsetPips: 1 }, ['breakeven_trigger']],
    [{ takeProfits: levels }, ['take_profit_levels']],
    [{ closeOpposite: true }, ['close_opposite']],
    [{ closeOpposite: false }, []],
    [{ maxSpreadPips: 2 }, ['max_spread']],
    [{}, []],
    [{ trailDistancePips: 5, breakevenTriggerPips: 5, takeProfits: levels, closeOpposite: true, maxSpreadPips: 1 }, MANAGEMENT_FEATURES],
  ])('when an entry asks for %j, then it needs %j', (m, needed) => {
    expect(featuresNeeded(m)).toEqual(needed);
  });

  test('when the contract names the features, then they are bridge features of the account schema', () => {
    for (const f of MANAGEMENT_FEATURES) expect(BRIDGE_FEATURES).toContain(f);
  });
});

describe('managementGap: the 412 of an entry whose bridge did not announce a feature it needs', () => {
  const account = (bridgeFeatures: BridgeFeature[], platform: 'mt5' | 'ctrader' = 'mt5') =>
    accountSchema.parse({ id: 'acc-1', owner: 'alice', platform, bridgeVersion: '3.5.0', bridgeFeatures });

  test('when the bridge announced nothing and the entry trails, then the gap names trailing_stop and the version to install', () => {
    const gap = managementGap(account([]), { trailDistancePips: 10 })!;
    expect(gap.message).toContain('trailing_stop');
    expect(gap.message).not.toContain('max_spread');
    expect(gap.message).toContain('update the bridge');
    expect(gap.install).toBe(CURRENT_BRIDGE_VERSION.mt5);
    expect(managementGap(account([], 'ctrader'), { maxSpreadPips: 1 })).toEqual({
      message: expect.stringContaining('cTrader connector'),
      install: CURRENT_BRIDGE_VERSION.ctrader,
    });
  });

  test('when the bridge announced some of the features, then only the missing ones are named', () => {
    const gap = managementGap(account(['trailing_stop', 'risk_sizing']), { trailDistancePips: 10, takeProfits: levels, closeOpposite: true })!;
    expect(gap.message).toContain('take_profit_levels, close_opposite');
    expect(gap.message).not.toContain('trailing_stop');
  });

  test('when the bridge announced every feature the entry needs, or the entry needs none, then there is no gap', () => {
    expect(
      managementGap(account(MANAGEMENT_FEATURES), {
        trailDistancePips: 10,
        breakevenTriggerPips: 5,
        takeProfits: levels,
        closeOpposite: true,
        maxSpreadPips: 1,
      }),
    ).toBeUndefined();
    expect(managementGap(account(['max_spread']), { maxSpreadPips: 1 })).toBeUndefined();
    expect(managementGap(account([]), { closeOpposite: false })).toBeUndefined();
    expect(managementGap(account([]), {})).toBeUndefined();
  });
});

describe('resolveManagement: the command carries defaults resolved (contract §3, §4)', () => {
  test('when an entry asks for nothing and the owner set no defaults, then nothing is resolved', () => {
    expect(resolveManagement({})).toEqual({});
    expect(resolveManagement({ closeOpposite: false })).toEqual({});
  });

  test('when an entry trails without trigger and step, then trigger 0 and step 1 are filled in', () => {
    expect(resolveManagement({ trailDistancePips: 12 })).toEqual({ trailDistancePips: 12, trailTriggerPips: 0, trailStepPips: 1 });
  });

  test('when an entry moves to breakeven without an offset, then offset 0 is filled in', () => {
    expect(resolveManagement({ breakevenTriggerPips: 15 })).toEqual({ breakevenTriggerPips: 15, breakevenOffsetPips: 0 });
  });

  test("when the entry has its own trail fields, then the defaults' trail is ignored entirely (not merged field by field)", () => {
    const defaults = { trailDistancePips: 30, trailTriggerPips: 20, trailStepPips: 5 };
    expect(resolveManagement({ trailDistancePips: 10 }, defaults)).toEqual({ trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1 });
  });

  test("when the entry has its own breakeven, then the defaults' breakeven is ignored; their trail still applies", () => {
    const defaults = { trailDistancePips: 30, breakevenTriggerPips: 20, breakevenOffsetPips: 2 };
    expect(resolveManagement({ breakevenTriggerPips: 8 }, defaults)).toEqual({
      trailDistancePips: 30,
      trailTriggerPips: 0,
      trailStepPips: 1,
      breakevenTriggerPips: 8,
      breakevenOffsetPips: 0,
    });
  });

  test('when the entry asks for no trail or breakeven, then the defaults apply with theirs resolved', () => {
    expect(resolveManagement({}, { trailDistancePips: 25, trailStepPips: 3, breakevenTriggerPips: 10, breakevenOffsetPips: 1 })).toEqual({
      trailDistancePips: 25,
      trailTriggerPips: 0,
      trailStepPips: 3,
      breakevenTriggerPips: 10,
      breakevenOffsetPips: 1,
    });
  });

  test.each([
    [1.5, 3, 1.5],
    [3, 1.5, 1.5],
    [2, undefined, 2],
    [undefined, 2, 2],
  ])('when the entry max spread is %p and the default %p, then the tighter, %p, wins', (signal, defaults, wanted) => {
    expect(resolveManagement({ maxSpreadPips: signal }, { maxSpreadPips: defaults }).maxSpreadPips).toBe(wanted);
  });

  test('when the entry has take-profit levels and closeOpposite, then they travel as given (closeOpposite only when true)', () => {
    expect(resolveManagement({ takeProfits: levels, closeOpposite: true })).toEqual({ takeProfits: levels, closeOpposite: true });
  });

  test('when everything is resolved, then the result is a valid protocol 1.6 command part', () => {
    const m = resolveManagement({ trailDistancePips: 5, takeProfits: levels, closeOpposite: true }, { breakevenTriggerPips: 4, maxSpreadPips: 2 });
    const base = { commandId: 'c', seq: 1, signalId: 's', accountId: 'a', action: 'buy', symbol: 'EURUSD', volume: 1, acceptedAt: 'x', expiresAt: 'y' };
    expect(commandSchema.safeParse({ ...base, ...m }).success).toBe(true);
  });

  test('when the management fields are taken off an entry, then the rest keeps its fields and their order', () => {
    const sent = { action: 'buy', symbol: 'EURUSD', trailDistancePips: 4, closeOpposite: false, slPips: 10, takeProfits: levels, maxSpreadPips: 1 };
    expect(Object.keys(withoutManagement(sent))).toEqual(['action', 'symbol', 'slPips']);
  });
});

describe('planOrder: trade management (contract §3)', () => {
  test('when an entry asks for nothing and the account has no defaults, then the order is exactly as before (no management keys)', () => {
    const plan = planOrder(buy(), snapshot({}, []), times);
    expect(plan).toEqual({ ok: true, order: { symbol: 'EURUSD', volume: 0.1 } });
    expect(Object.keys(plan.ok ? plan.order : {})).toEqual(['symbol', 'volume']);
  });

  test('when an entry trails on a capable bridge, then the order carries the trail with the defaults resolved', () => {
    expect(planOrder(buy({ trailDistancePips: 10, maxSpreadPips: 2 }), snapshot(), times)).toEqual({
      ok: true,
      order: { symbol: 'EURUSD', volume: 0.1, trailDistancePips: 10, trailTriggerPips: 0, trailStepPips: 1, maxSpreadPips: 2 },
    });
  });

  test("when the owner's defaults trail and cap the spread, then a plain entry gets them, and the entry's own tighter spread wins", () => {
    const risk = { management: { trailDistancePips: 20, trailTriggerPips: 5, maxSpreadPips: 3 } };
    expect(planOrder(buy(), snapshot(risk), times)).toEqual({
      ok: true,
      order: { symbol: 'EURUSD', volume: 0.1, trailDistancePips: 20, trailTriggerPips: 5, trailStepPips: 1, maxSpreadPips: 3 },
    });
    expect(planOrder(buy({ maxSpreadPips: 1, breakevenTriggerPips: 10 }), snapshot(risk), times)).toEqual({
      ok: true,
      order: {
        symbol: 'EURUSD',
        volume: 0.1,
        trailDistancePips: 20,
        trailTriggerPips: 5,
        trailStepPips: 1,
        breakevenTriggerPips: 10,
        breakevenOffsetPips: 0,
        maxSpreadPips: 1,
      },
    });
  });

  test('when a pending entry carries management, then the order carries it too', () => {
    const plan = planOrder({ action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.05, takeProfits: levels }, snapshot(), times);
    expect(plan).toEqual({ ok: true, order: { symbol: 'EURUSD', volume: 0.1, takeProfits: levels } });
  });

  test('when the entry is sized by risk, then the management travels with the sizing', () => {
    const plan = planOrder(
      buy({ slPips: 10, trailDistancePips: 8 }),
      snapshot({ sizing: { mode: 'risk_percent', of: 'equity', percent: 1 } }, ['risk_sizing', 'trailing_stop']),
      times,
    );
    expect(plan.ok && plan.order).toMatchObject({
      riskSizing: { basis: 'equity_percent', value: 1 },
      trailDistancePips: 8,
      trailTriggerPips: 0,
      trailStepPips: 1,
    });
  });

  test.each([
    [{ trailDistancePips: 10 }, 'trailing_stop'],
    [{ breakevenTriggerPips: 10 }, 'breakeven_trigger'],
    [{ maxSpreadPips: 2 }, 'max_spread'],
  ])("when the owner's defaults are %j and the bridge did not announce %s, then the entry is refused management_unsupported", (management, feature) => {
    const others = MANAGEMENT_FEATURES.filter((f) => f !== feature);
    expect(planOrder(buy(), snapshot({ management }, others), times)).toEqual({ ok: false, reason: 'management_unsupported' });
    expect(planOrder(buy(), snapshot({ management }), times).ok).toBe(true);
  });

  test("when the signal asks only for a spread cap, then the defaults' trail still needs trailing_stop; its own trail replaces theirs", () => {
    const risk = { management: { trailDistancePips: 10, trailStepPips: 4 } };
    expect(planOrder(buy({ maxSpreadPips: 1 }), snapshot(risk, ['max_spread']), times)).toEqual({ ok: false, reason: 'management_unsupported' });
    expect(planOrder(buy({ trailDistancePips: 5 }), snapshot(risk, ['trailing_stop']), times)).toEqual({
      ok: true,
      order: { symbol: 'EURUSD', volume: 0.1, trailDistancePips: 5, trailTriggerPips: 0, trailStepPips: 1 },
    });
  });

  test('when the bridge announced nothing and the owner has defaults, then exits still run, without management', () => {
    const account = snapshot({ management: { trailDistancePips: 10, maxSpreadPips: 1 } }, []);
    expect(planOrder({ action: 'close', positionId: 'p1' }, account, times)).toEqual({ ok: true, order: { symbol: undefined } });
    expect(planOrder({ action: 'breakeven', positionId: 'p1' }, account, times)).toEqual({ ok: true, order: { symbol: undefined } });
    expect(planOrder(buy(), account, times)).toEqual({ ok: false, reason: 'management_unsupported' });
  });

  test('when a rule the owner set refuses the entry first (close-only, blocked symbol), then that reason wins', () => {
    const management = { trailDistancePips: 10 };
    expect(planOrder(buy(), snapshot({ management, closeOnly: true }, []), times)).toEqual({ ok: false, reason: 'risk_close_only' });
    expect(planOrder(buy(), snapshot({ management, blockedSymbols: ['EURUSD'] }, []), times)).toEqual({ ok: false, reason: 'risk_symbol_blocked' });
  });
});
