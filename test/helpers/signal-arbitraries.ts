import fc from 'fast-check';
import { ACTIONS, type Action } from '../../src/domain/actions';

/**
 * fast-check generators of ExternalSignal bodies (spec §2.1): valid bodies for every action, and mutations of them
 * that the schema must refuse, each naming the field at fault. Shared by the unit properties of the schema
 * (test/unit/signal-schema.test.ts, against validateSignal) and the same properties over HTTP against a running
 * ingress (test/fault/schema-http.test.ts).
 *
 * The tables below are written from the spec, not read from ACTION_RULES, so a drift between the two shows.
 * Everything that depends on the clock (expiries "in the future") is built from the `nowMs` given to
 * `signalArbitraries`.
 */

export type Body = Record<string, unknown>;

/** Fields each action must carry (besides secret and action). close and modify_pending have "one of" rules instead. */
export const REQUIRED: Record<Action, string[]> = {
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
/** Trade management (docs/trade-management.md §1): on every entry; closeOpposite on market entries only. */
const MANAGEMENT = ['trailDistancePips', 'trailTriggerPips', 'trailStepPips', 'breakevenTriggerPips', 'breakevenOffsetPips', 'takeProfits', 'maxSpreadPips'];
const ENTRY = [...STOPS, ...MANAGEMENT];
/** Every field each action may carry (besides secret, action and meta). */
export const ALLOWED: Record<Action, string[]> = {
  buy: ['symbol', 'volume', ...ENTRY, 'closeOpposite'],
  sell: ['symbol', 'volume', ...ENTRY, 'closeOpposite'],
  buy_limit: ['symbol', 'volume', 'price', ...ENTRY],
  sell_limit: ['symbol', 'volume', 'price', ...ENTRY],
  buy_stop: ['symbol', 'volume', 'price', ...ENTRY],
  sell_stop: ['symbol', 'volume', 'price', ...ENTRY],
  buy_stop_limit: ['symbol', 'volume', 'price', 'stopLimitPrice', ...ENTRY],
  sell_stop_limit: ['symbol', 'volume', 'price', 'stopLimitPrice', ...ENTRY],
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

/** The "at least one of" choices of close and modify_pending. */
const ONE_OF: Partial<Record<Action, string[]>> = {
  close: ['positionId', 'symbol', 'side', 'pnl'],
  modify_pending: ['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'],
};

/** A valid value for every optional field of the schema; `future` is the expiry (an ISO date-time in the future). */
export function sampleValues(future: string): Record<string, unknown> {
  return {
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
    expiry: future,
    side: 'buy',
    pnl: 'profit',
    trailDistancePips: 15,
    trailTriggerPips: 10,
    trailStepPips: 2,
    breakevenTriggerPips: 20,
    breakevenOffsetPips: 2,
    takeProfits: [{ tpPips: 10, closePercent: 50 }],
    closeOpposite: true,
    maxSpreadPips: 1.5,
  };
}

/** The order fields of the schema (everything but secret, action, meta and idempotencyKey). */
export const FIELDS = Object.keys(sampleValues(''));
export const NUMERIC_FIELDS = [
  'volume',
  'price',
  'stopLimitPrice',
  'sl',
  'tp',
  'slPips',
  'tpPips',
  'partialVolume',
  'trailDistancePips',
  'trailTriggerPips',
  'trailStepPips',
  'breakevenTriggerPips',
  'breakevenOffsetPips',
  'maxSpreadPips',
];
const KNOWN_KEYS = new Set(['secret', 'action', 'meta', 'idempotencyKey', ...FIELDS]);

export const without = (b: Body, field: string): Body => {
  const copy = { ...b };
  delete copy[field];
  return copy;
};

/** What the refusal of an invalid body must name. */
export interface InvalidCase {
  /** Which mutation made it. */
  kind: 'dropped_required' | 'dropped_one_of' | 'unknown_key' | 'numeric_as_string' | 'not_a_number' | 'volume_out_of_range' | 'unused_field';
  body: Body;
  /** Each of these must be named by the refusal (a detail's path or message, and the error string). */
  names: string[];
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const positive = (max: number) => fc.double({ min: Number.MIN_VALUE, max, noNaN: true });

export interface SignalArbitrariesOptions {
  /** "Now" for expiries: they are generated 1 s to ~5 years after it. */
  nowMs: number;
  /** The secret of generated bodies; default any 1-256 character string (the schema alone does not check it). */
  secret?: fc.Arbitrary<string>;
  /**
   * Entries carry trade management too (docs/trade-management.md §1). Off by default: over HTTP an account whose
   * bridge did not announce the features answers 412, not 202.
   */
  management?: boolean;
}

export function signalArbitraries(opts: SignalArbitrariesOptions) {
  const { nowMs } = opts;
  const symbolArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._#\-/]{0,31}$/);
  const idArb = fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/);
  const secretArb = opts.secret ?? fc.string({ minLength: 1, maxLength: 256 });
  const lotsArb = positive(100);
  const priceArb = positive(1e9);
  const pipsArb = positive(1e6);
  const sample = sampleValues(new Date(nowMs + 3_600_000).toISOString());

  /** A future instant (1 s to ~5 years ahead), written with Z or a numeric offset, with or without milliseconds. */
  const expiryArb = fc
    .record({
      aheadMs: fc.integer({ min: 1000, max: 5 * 365 * 86_400_000 }),
      offsetMin: fc.integer({ min: -12 * 4, max: 14 * 4 }).map((q) => q * 15),
      zulu: fc.boolean(),
      millis: fc.boolean(),
    })
    .map(({ aheadMs, offsetMin, zulu, millis }) => {
      const at = nowMs + aheadMs;
      if (zulu) {
        const iso = new Date(at).toISOString();
        return millis ? iso : iso.replace(/\.\d{3}Z$/, 'Z');
      }
      const local = new Date(at + offsetMin * 60_000).toISOString().slice(0, millis ? 23 : 19);
      const sign = offsetMin < 0 ? '-' : '+';
      const abs = Math.abs(offsetMin);
      return `${local}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
    });

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
      sl: fc.oneof(
        fc.constant({}),
        priceArb.map((sl) => ({ sl })),
        pipsArb.map((slPips) => ({ slPips })),
      ),
      tp: fc.oneof(
        fc.constant({}),
        priceArb.map((tp) => ({ tp })),
        pipsArb.map((tpPips) => ({ tpPips })),
      ),
    })
    .map(({ sl, tp }) => ({ ...sl, ...tp }));

  /**
   * Valid trade management for an entry with these stops: trail and breakeven with their optional parts, take-profit
   * levels all of one kind at distinct distances whose percentages add up to at most 100 and, as tpPips, nearer than
   * the entry's tpPips; closeOpposite on market entries only.
   */
  const managementArb = (market: boolean, stops: Body): fc.Arbitrary<Body> => {
    const finalPips = typeof stops.tpPips === 'number' ? stops.tpPips : undefined;
    const trail = fc.record(
      { trailDistancePips: pipsArb, trailTriggerPips: fc.oneof(fc.constant(0), pipsArb), trailStepPips: pipsArb },
      { requiredKeys: ['trailDistancePips'] },
    );
    const breakeven = fc
      .record({ trigger: pipsArb, offsetShare: fc.option(fc.double({ min: 0, max: 0.99, noNaN: true }), { nil: undefined }) })
      .map(({ trigger, offsetShare }) => ({
        breakevenTriggerPips: trigger,
        ...(offsetShare === undefined ? {} : { breakevenOffsetPips: trigger * offsetShare }),
      }))
      // Near the smallest double, trigger × share rounds back up to trigger.
      .filter((b) => b.breakevenOffsetPips === undefined || b.breakevenOffsetPips < b.breakevenTriggerPips);
    // Levels in pips must be nearer than the entry's tpPips; below a millionth of a pip there is no room for five.
    const levelPips = finalPips === undefined ? pipsArb : fc.double({ min: finalPips / 1e6, max: finalPips, maxExcluded: true, noNaN: true });
    const kinds = finalPips !== undefined && finalPips < 1e-6 ? fc.constant('tp') : fc.constantFrom('tpPips', 'tp');
    const levels = fc.record({ kind: kinds, count: fc.integer({ min: 1, max: 5 }) }).chain(({ kind, count }) =>
      fc
        .record({
          at: fc.uniqueArray(kind === 'tp' ? priceArb : levelPips, { minLength: count, maxLength: count }),
          percents: fc.array(fc.double({ min: 0.01, max: 100 / count, noNaN: true }), { minLength: count, maxLength: count }),
        })
        .map(({ at, percents }) => at.map((v, i) => ({ [kind]: v, closePercent: percents[i]! }))),
    );
    return fc
      .record({ trail, breakeven, takeProfits: levels, maxSpreadPips: pipsArb, ...(market ? { closeOpposite: fc.boolean() } : {}) }, { requiredKeys: [] })
      .map(({ trail: t, breakeven: b, ...rest }) => ({ ...(t ?? {}), ...(b ?? {}), ...rest }));
  };

  /** An entry's fields, with its management when the options ask for it. */
  const entryArb = (market: boolean, fields: fc.Arbitrary<Body>): fc.Arbitrary<Body> =>
    opts.management ? fields.chain((f) => managementArb(market, f).map((m) => ({ ...f, ...m }))) : fields;

  /** A non-empty subset of the given field generators, as an object. */
  const someOf = (arbs: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Body> =>
    fc.record(arbs, { requiredKeys: [] }).filter((o) => Object.keys(o).length > 0);

  const fieldsArb: Record<Action, fc.Arbitrary<Body>> = (() => {
    const market = entryArb(
      true,
      fc.record({ symbol: symbolArb, volume: lotsArb, stops: entryStopsArb }).map(({ stops, ...f }) => ({ ...f, ...stops })),
    );
    const pending = entryArb(
      false,
      fc.record({ symbol: symbolArb, volume: lotsArb, price: priceArb, stops: entryStopsArb }).map(({ stops, ...f }) => ({ ...f, ...stops })),
    );
    const stopLimit = entryArb(
      false,
      fc
        .record({ symbol: symbolArb, volume: lotsArb, price: priceArb, stopLimitPrice: priceArb, stops: entryStopsArb })
        .map(({ stops, ...f }) => ({ ...f, ...stops })),
    );
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

  // ---- mutations of valid bodies that the schema must refuse -------------------------------------------------

  /** A required field dropped (`secret` and `action` too, unless `keepSecret`: over HTTP a missing secret is a 401). */
  const droppedRequired = (keepSecret = false): fc.Arbitrary<InvalidCase> =>
    validBodyArb
      .filter((b) => [...(keepSecret ? [] : ['secret']), 'action', ...REQUIRED[b.action as Action]].length > 0)
      .chain((b) => fc.record({ b: fc.constant(b), field: fc.constantFrom(...(keepSecret ? [] : ['secret']), 'action', ...REQUIRED[b.action as Action]) }))
      .map(({ b, field }) => ({ kind: 'dropped_required', body: without(b, field), names: [field] }));

  /** Every "one of" field dropped from a valid close or modify_pending: the refusal names every choice. */
  const droppedOneOf: fc.Arbitrary<InvalidCase> = fc
    .constantFrom<Action>('close', 'modify_pending')
    .chain(validBodyOf)
    .map((b) => {
      const choices = ONE_OF[b.action as Action]!;
      let mutated = b;
      for (const f of choices) mutated = without(mutated, f);
      return { kind: 'dropped_one_of', body: mutated, names: choices };
    });

  /** An unknown top-level key (including prototype-ish names and near-misses of real fields). */
  const unknownKey: fc.Arbitrary<InvalidCase> = (() => {
    const keyArb = fc.oneof(
      fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$-]{0,20}$/),
      fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'Secret', 'ACTION', 'Volume', 'stop_loss'),
    );
    return fc.record({ b: validBodyArb, key: keyArb.filter((k) => !KNOWN_KEYS.has(k)), value: fc.jsonValue({ maxDepth: 1 }) }).map(({ b, key, value }) => {
      const mutated = { ...b };
      Object.defineProperty(mutated, key, { value, enumerable: true, configurable: true, writable: true });
      return { kind: 'unknown_key', body: mutated, names: [key] };
    });
  })();

  /** A numeric field sent as its string form ("1.5" is not a volume). */
  const numericAsString: fc.Arbitrary<InvalidCase> = validBodyArb
    .filter((b) => NUMERIC_FIELDS.some((f) => f in b))
    .chain((b) => fc.record({ b: fc.constant(b), field: fc.constantFrom(...NUMERIC_FIELDS.filter((f) => f in b)) }))
    .map(({ b, field }) => ({ kind: 'numeric_as_string', body: { ...b, [field]: String(b[field]) }, names: [field] }));

  /** A numeric field replaced by a non-number JSON value. */
  const notANumber: fc.Arbitrary<InvalidCase> = (() => {
    const notNumber = fc.oneof(fc.boolean(), fc.constant(null), fc.string(), fc.array(fc.double(), { maxLength: 2 }), fc.object({ maxDepth: 1 }));
    return validBodyArb
      .filter((b) => NUMERIC_FIELDS.some((f) => f in b))
      .chain((b) => fc.record({ b: fc.constant(b), field: fc.constantFrom(...NUMERIC_FIELDS.filter((f) => f in b)), value: notNumber }))
      .map(({ b, field, value }) => ({ kind: 'not_a_number', body: { ...b, [field]: value }, names: [field] }));
  })();

  /** volume or partialVolume out of range (<= 0, > 100, NaN, infinite). Over JSON, NaN and infinities travel as null. */
  const volumeOutOfRange: fc.Arbitrary<InvalidCase> = (() => {
    const outOfRange = fc.oneof(
      fc.double({ max: 0, noNaN: true }),
      fc.double({ min: 100, minExcluded: true, noNaN: true }),
      fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 100.0001, 100 + Number.EPSILON * 100),
    );
    return validBodyArb
      .filter((b) => 'volume' in b || 'partialVolume' in b)
      .chain((b) => fc.record({ b: fc.constant(b), value: outOfRange }))
      .map(({ b, value }) => {
        const field = 'volume' in b ? 'volume' : 'partialVolume';
        return { kind: 'volume_out_of_range', body: { ...b, [field]: value }, names: [field] };
      });
  })();

  /** A field the action does not use (`positionId is not used by buy`). */
  const unusedField: fc.Arbitrary<InvalidCase> = validBodyArb
    .filter((b) => FIELDS.some((f) => !ALLOWED[b.action as Action].includes(f)))
    .chain((b) => fc.record({ b: fc.constant(b), field: fc.constantFrom(...FIELDS.filter((f) => !ALLOWED[b.action as Action].includes(f))) }))
    .map(({ b, field }) => ({ kind: 'unused_field', body: { ...b, [field]: sample[field] }, names: [field] }));

  return {
    symbolArb,
    idArb,
    secretArb,
    lotsArb,
    priceArb,
    pipsArb,
    expiryArb,
    metaArb,
    entryStopsArb,
    fieldsArb,
    validBodyOf,
    validBodyArb,
    sample,
    invalid: { droppedRequired, droppedOneOf, unknownKey, numericAsString, notANumber, volumeOutOfRange, unusedField },
  };
}
