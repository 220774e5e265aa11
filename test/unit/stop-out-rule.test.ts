import { riskSettingsSchema, symbolMapSchema } from '../../src/domain/risk-settings';
import type { AccountSnapshot } from '../../src/domain/workflow-input';
import { reportsBodySchema } from '../../src/domain/bridge-protocol';
import { EquityMarks } from '../../src/risk/equity-marks';
import { planOrder } from '../../src/risk/rules';
import { markStands, stopOutEventOf, watchStopOut } from '../../src/risk/stop-out';
import { arming, fresh, markOf, T0 } from '../helpers/stop-out-marks';

/** The copy-trading stop-out (docs/risk-sizing.md, "Stop-out"): the setting, the capability and the trip rule (the runner: stop-out-runner.test.ts). */

describe('the stopOut setting', () => {
  test('when stopOut is on without maxDrawdownPercent, then the settings are refused with a message naming it; with it they pass', () => {
    const bare = riskSettingsSchema.safeParse({ lossGuards: { stopOut: true, dailyLossPercent: 3 } });
    expect(bare.success).toBe(false);
    expect(bare.error?.issues[0]).toMatchObject({ path: ['lossGuards', 'stopOut'], message: expect.stringMatching(/maxDrawdownPercent/) });
    expect(riskSettingsSchema.parse({ lossGuards: { maxDrawdownPercent: 10, stopOut: true } }).lossGuards).toMatchObject({ stopOut: true });
    expect(riskSettingsSchema.safeParse({ lossGuards: { stopOut: false } }).success).toBe(true);
  });

  const snapshot = (features: AccountSnapshot['bridgeFeatures'], stopOut?: boolean): AccountSnapshot => ({
    id: 'acc-1',
    owner: 'alice',
    platform: 'mt5',
    region: 'default',
    bridgeVersion: '3.3.0',
    risk: riskSettingsSchema.parse({ lossGuards: { maxDrawdownPercent: 10, ...(stopOut !== undefined ? { stopOut } : {}) } }),
    symbols: symbolMapSchema.parse({}),
    bridgeFeatures: features,
  });
  const times = { acceptedAtMs: T0, nowMs: T0, expiresAtMs: T0 + 30_000 };
  const buy = { action: 'buy' as const, symbol: 'EURUSD', volume: 0.1 };

  test('when stopOut is on and the bridge did not announce stop_out, then an entry is refused risk_sizing_unsupported and an exit passes', () => {
    expect(planOrder(buy, snapshot(['loss_guards'], true), times)).toEqual({ ok: false, reason: 'risk_sizing_unsupported' });
    expect(planOrder({ action: 'close_all' }, snapshot(['loss_guards'], true), times)).toMatchObject({ ok: true });
  });

  test('when the bridge announced stop_out, then the entry carries stopOut in its guards; when it is off, the guards carry no stopOut key', () => {
    expect(planOrder(buy, snapshot(['loss_guards', 'stop_out'], true), times)).toMatchObject({ ok: true, order: { lossGuards: { stopOut: true } } });
    const off = planOrder(buy, snapshot(['loss_guards'], false), times);
    expect(off.ok && off.order.lossGuards).toEqual({ maxDrawdownPercent: 10, timezone: 'UTC' });
  });

  test('when a bridge sends more than 10 events, or a list of more than 500 tickets, then the body is refused; one event alone is a valid body', () => {
    const event = { ...stopOutEventOf(markOf()), closed: [{ ticket: '1', result: 'closed' }] };
    expect(reportsBodySchema.safeParse({ reports: [], events: [event] }).success).toBe(true);
    expect(reportsBodySchema.safeParse({ reports: [], events: Array.from({ length: 11 }, () => event) }).success).toBe(false);
    const many = Array.from({ length: 501 }, (_, i) => ({ ticket: String(i), result: 'closed' }));
    expect(reportsBodySchema.safeParse({ reports: [], events: [{ ...event, closed: many }] }).success).toBe(false);
  });
});

describe('the trip rule', () => {
  test('when equity is exactly maxDrawdownPercent below the peak, then it trips; a cent above, it holds', () => {
    const marks = new EquityMarks();
    expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity: 10_000, quotes: fresh, nowMs: T0 })).toMatchObject({
      kind: 'holding',
      peak: 10_000,
    });
    expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity: 9_000.01, quotes: fresh, nowMs: T0 })).toMatchObject({ kind: 'holding' });
    expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity: 9_000, quotes: fresh, nowMs: T0 })).toEqual({
      kind: 'trip',
      peak: 10_000,
      drawdownPercent: 10,
    });
  });

  test('when a quote behind equity is older than figuresMaxAgeMs, then it neither trips nor raises the peak; fresh again, it trips', () => {
    const marks = new EquityMarks({ dayOpen: 10_000, peak: 10_000, resetApplied: '' });
    const stale = [{ symbol: 'EURUSD', quotedAtMs: T0 - 61_000 }];
    expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity: 8_000, quotes: stale, nowMs: T0 })).toMatchObject({
      kind: 'stale',
      message: expect.stringMatching(/EURUSD/),
    });
    expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity: 12_000, quotes: stale, nowMs: T0 }).kind).toBe('stale');
    expect(marks.state().peak).toBe(10_000);
    expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity: 8_000, quotes: fresh, nowMs: T0 })).toMatchObject({ kind: 'trip' });
  });

  test('when a mark stands for the current reset, then it never trips again; a newer reset re-arms it, from the equity seen then', () => {
    const marks = new EquityMarks({ dayOpen: 10_000, peak: 10_000, resetApplied: '' });
    const done = markOf({ resetAt: null });
    expect(watchStopOut({ arming: arming(), mark: done, marks, equity: 5_000, quotes: fresh, nowMs: T0 })).toEqual({ kind: 'stopped_out' });
    const reset = '2026-11-25T11:00:00.000Z';
    // The reset restarts the peak at 5,000: no trip at once.
    expect(watchStopOut({ arming: arming({ drawdownResetAt: reset }), mark: done, marks, equity: 5_000, quotes: fresh, nowMs: T0 })).toMatchObject({
      kind: 'holding',
      peak: 5_000,
    });
    expect(watchStopOut({ arming: arming({ drawdownResetAt: reset }), mark: done, marks, equity: 4_500, quotes: fresh, nowMs: T0 }).kind).toBe('trip');
    // A mark of that reset stands against it; an older reset never re-arms.
    expect(markStands(markOf({ resetAt: reset }), reset)).toBe(true);
    expect(markStands(markOf({ resetAt: reset }), '2026-11-25T10:30:00.000Z')).toBe(true);
    expect(markStands(markOf({ resetAt: reset }), null)).toBe(true);
    expect(markStands(undefined, null)).toBe(false);
  });

  test('when equity is NaN or undefined, then it neither trips nor touches the peak; a real reading after it still trips', () => {
    const marks = new EquityMarks({ dayOpen: 10_000, peak: 10_000, resetApplied: '' });
    for (const equity of [Number.NaN, undefined as unknown as number, Number.POSITIVE_INFINITY])
      expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity, quotes: fresh, nowMs: T0 })).toMatchObject({
        kind: 'stale',
        message: expect.stringMatching(/equity is unreadable/),
      });
    expect(marks.state().peak).toBe(10_000);
    // Nor a reset's restart of the peak: it waits for a reading.
    const reset = '2026-11-25T11:00:00.000Z';
    expect(marks.observePeak(Number.NaN, reset)).toBe(10_000);
    expect(watchStopOut({ arming: arming(), mark: undefined, marks, equity: 9_000, quotes: fresh, nowMs: T0 })).toMatchObject({ kind: 'trip', peak: 10_000 });
  });

  test("when the event is made from a mark, then its eventId names the reset (or 'initial') and it counts what was closed", () => {
    expect(stopOutEventOf(markOf())).toMatchObject({ eventId: 'stop-out/initial', drawdownPercent: 10, equity: 9_000, peak: 10_000 });
    expect(stopOutEventOf(markOf({ resetAt: '2026-11-25T11:00:00.000Z' })).eventId).toBe('stop-out/2026-11-25T11:00:00.000Z');
  });
});
