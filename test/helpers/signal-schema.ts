import { type Action } from '../../src/domain/actions';
import { validateSignal, type SignalValidation, type ValidationDetail } from '../../src/domain/signal';
import { sampleValues, type Body } from './signal-arbitraries';

/** What the ExternalSignal schema's unit tests share: a fixed clock, the smallest body of each action, and the checks of a refusal. */

export const NOW_MS = Date.parse('2024-06-12T12:00:00Z');
const now = () => NOW_MS;
const FUTURE = '2024-06-12T13:00:00Z';
export const SECRET = 'whsec_test';

export const validate = (body: unknown): SignalValidation => validateSignal(body, now);

export function refused(body: unknown): { error: string; details: ValidationDetail[] } {
  const result = validate(body);
  if (result.ok) throw new Error(`expected the body to be refused: ${JSON.stringify(body)}`);
  return result;
}

export function expectAccepted(body: unknown): void {
  const result = validate(body);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(body)} to be accepted, got: ${result.error}`);
  expect(result.ok).toBe(true);
}

/** A detail names the field when its path is the field or its message mentions the field. */
export function namesField(details: ValidationDetail[], field: string): boolean {
  return details.some((d) => d.path === field || d.path.startsWith(`${field}.`) || d.message.includes(field));
}

export function expectRefusedNaming(body: unknown, field: string): { error: string; details: ValidationDetail[] } {
  const result = refused(body);
  if (!namesField(result.details, field)) {
    throw new Error(`expected a detail naming ${field}, got ${JSON.stringify(result.details)}`);
  }
  expect(result.error).toContain(field);
  return result;
}

export function expectRefusedAtPath(body: unknown, path: string): ValidationDetail {
  const result = refused(body);
  const detail = result.details.find((d) => d.path === path);
  if (!detail) throw new Error(`expected a detail at path ${path}, got ${JSON.stringify(result.details)}`);
  expect(result.error).toContain(path);
  return detail;
}

/** The smallest body each action accepts (spec §2.1 action table). */
export const MINIMAL: Record<Action, Body> = {
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

/** A valid value for every optional field of the schema. */
export const SAMPLE = sampleValues(FUTURE);

export const body = (action: Action, fields: Body = MINIMAL[action]): Body => ({ secret: SECRET, action, ...fields });
