import { outcomeOfReport } from '../../src/domain/outcome';
import { signalOutcomeSchema } from '../../src/http/openapi-schemas';
import { buildOpenApiDocument } from '../../src/http/openapi';

/**
 * The poll's additive `entry` and `fill` (docs/poll.md): what a bridge's report gives for each kind of action, and that
 * the spec's account item (§2.4) keeps exactly its fields, types and required list.
 */

const report = (fields: Record<string, unknown>) =>
  ({ commandId: 'signal/sig_0123456789abcdefghij/account/acc-1', ...fields }) as Parameters<typeof outcomeOfReport>[0];

describe('the outcome of a bridge report', () => {
  test('when a market buy is filled with price and volume, then it is a position with its fill', () => {
    expect(outcomeOfReport(report({ status: 'filled', ticket: '7', price: 1.0801, volume: 1.76 }), 'buy')).toEqual({
      outcome: 'filled',
      ticket: '7',
      reason: null,
      entry: 'position',
      fill: { price: 1.0801, volume: 1.76 },
    });
  });

  test('when a market sell is filled without a volume, then it is a position without a fill', () => {
    expect(outcomeOfReport(report({ status: 'filled', ticket: '7', price: 1.08 }), 'sell')).toEqual({
      outcome: 'filled',
      ticket: '7',
      reason: null,
      entry: 'position',
    });
  });

  test('when a pending entry is placed, then it is an order and has no fill (its price is where it waits)', () => {
    for (const action of ['buy_limit', 'sell_stop', 'buy_stop_limit'] as const) {
      expect(outcomeOfReport(report({ status: 'filled', ticket: '9', price: 1.07, volume: 0.1 }), action)).toEqual({
        outcome: 'filled',
        ticket: '9',
        reason: null,
        entry: 'order',
      });
    }
  });

  test('when an entry is rejected or expired, or an exit is done, then neither entry nor fill is given', () => {
    expect(outcomeOfReport(report({ status: 'rejected', retcode: 10019, message: 'No money', price: 1, volume: 1 }), 'buy')).toEqual({
      outcome: 'rejected',
      ticket: null,
      reason: 'broker:10019 No money',
    });
    expect(outcomeOfReport(report({ status: 'expired' }), 'buy')).toEqual({ outcome: 'rejected', ticket: null, reason: 'signal_expired' });
    expect(outcomeOfReport(report({ status: 'done', ticket: '7', price: 1.09, volume: 0.1 }), 'close')).toEqual({ outcome: 'done', ticket: '7', reason: null });
  });

  test("when a bridge refuses by one of the reason table's bridge codes, then the reason is that code, else the broker's diagnostic", () => {
    for (const code of ['spread_too_wide', 'take_profit_level_invalid', 'close_opposite_failed']) {
      expect(outcomeOfReport(report({ status: 'rejected', retcode: code, message: 'spread 5 pips > max 3' }), 'buy')).toEqual({
        outcome: 'rejected',
        ticket: null,
        reason: code,
      });
    }
    // A code the table does not raise from a bridge stays the broker's.
    expect(outcomeOfReport(report({ status: 'rejected', retcode: 'management_unsupported', message: 'm' }), 'buy').reason).toBe(
      'broker:management_unsupported m',
    );
    expect(outcomeOfReport(report({ status: 'rejected', retcode: 'TRADING_BAD_STOPS', message: 'bad' }), 'buy').reason).toBe('broker:TRADING_BAD_STOPS bad');
  });

  test('when the reported numbers are not a real fill, then no fill is given', () => {
    for (const bad of [
      { price: 0, volume: 0.1 },
      { price: 1.1, volume: -1 },
      { price: null, volume: 0.1 },
    ]) {
      expect(outcomeOfReport(report({ status: 'filled', ticket: '7', ...bad }), 'buy')).not.toHaveProperty('fill');
    }
  });
});

describe("the spec's account item (§2.4) is unchanged", () => {
  type Json = Record<string, any>;
  const item: Json = (buildOpenApiDocument() as Json).components.schemas.SignalStatus.properties.accounts.items;
  const resolved: Json = item.$ref ? (buildOpenApiDocument() as Json).components.schemas[item.$ref.split('/').pop()] : item;

  test("when the document describes the account item, then its required fields are exactly the spec's and entry and fill are optional", () => {
    expect([...resolved.required].sort()).toEqual(['accountId', 'occurredAt', 'outcome']);
    expect(resolved.properties.outcome.enum).toEqual(['filled', 'rejected']);
    expect(resolved.properties.accountId.type).toBe('string');
    expect(resolved.properties.occurredAt).toMatchObject({ type: 'string', format: 'date-time' });
    expect(Object.keys(resolved.properties).sort()).toEqual(['accountId', 'entry', 'fill', 'occurredAt', 'outcome', 'reason', 'ticket']);
    expect(resolved.properties.entry.enum).toEqual(['position', 'order']);
  });

  test("when an item carries only the spec's fields, or also entry and fill, then both parse; a spec client sees its fields unchanged", () => {
    const spec = { accountId: 'acc-1', outcome: 'filled', ticket: '1', reason: null, occurredAt: '2026-11-26T12:00:00.000Z' };
    expect(signalOutcomeSchema.parse(spec)).toEqual(spec);
    const extended = { ...spec, entry: 'position', fill: { price: 1.08, volume: 0.1 } };
    expect(signalOutcomeSchema.parse(extended)).toEqual(extended);
    expect(() => signalOutcomeSchema.parse({ ...spec, entry: 'filled' })).toThrow();
  });
});
