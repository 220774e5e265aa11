import { type Plan } from '../../src/risk/rules';
import { riskSettingsSchema, symbolMapSchema } from '../../src/domain/risk-settings';
import type { AccountSnapshot, SignalInstruction } from '../../src/domain/workflow-input';

/** What the risk rules' unit tests share: an account snapshot from raw settings, a buy, the clock and the plan's checks. */

// 2024-06-12 is a Wednesday (UTC day 3).
export const WED_NOON = Date.parse('2024-06-12T12:00:00Z');
export const at = (iso: string) => Date.parse(iso);

export function snapshot(risk: unknown = {}, symbols: unknown = {}): AccountSnapshot {
  return {
    id: 'acc-1',
    owner: 'alice',
    platform: 'mt5',
    region: 'default',
    bridgeVersion: '2.0.0',
    risk: riskSettingsSchema.parse(risk),
    symbols: symbolMapSchema.parse(symbols),
  };
}

export const times = (acceptedAtMs = WED_NOON, nowMs = acceptedAtMs, expiresAtMs = acceptedAtMs + 30_000) => ({ acceptedAtMs, nowMs, expiresAtMs });

export const buy = (extra: Partial<SignalInstruction> = {}): SignalInstruction => ({ action: 'buy', symbol: 'EURUSD', volume: 0.1, ...extra });

export function expectRefused(plan: Plan, reason: string) {
  expect(plan).toEqual({ ok: false, reason });
}

export function expectOrder(plan: Plan, order: { symbol?: string; volume?: number }) {
  expect(plan).toEqual({ ok: true, order });
}
