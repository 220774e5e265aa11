import { z } from 'zod';
import { ACTION_RULES, ACTIONS, type OrderField } from './actions';
import { SPEC_LIMITS } from './limits';
import { refusedValueHint, SYMBOL_PATTERN } from './symbol';
import { brokerTicket } from './ticket';
import { managementIssues, managementSignalFields } from './management-fields';

/**
 * The ExternalSignal of spec §2.1, with the per-action conditions of the action table (actions.ts). The ingress
 * validates with it and the OpenAPI document is generated from it.
 * Numbers are never coerced: "1.5" is not a volume.
 */

const ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

const price = z.number().gt(0).max(1e9);
const pips = z.number().gt(0).max(1e6);
const lots = z.number().gt(0).lte(100);
/** A pattern's refusal with what the value most likely is (a placeholder left in, an exchange prefix), when it says. */
const refusal = (rule: string, field: 'symbol' | 'id') => ({
  error: (issue: { input?: unknown }) => {
    const hint = refusedValueHint(issue.input, field);
    return hint ? `${rule}; ${hint}` : rule;
  },
});
const id = z.string().regex(ID_PATTERN, refusal('must be 1 to 64 letters, digits or ._:-', 'id'));
const SECRET_MAX_LENGTH = 256;
/** meta is the caller's, not ours: bounded so that a body cannot nest deep enough to overflow a recursive walk. */
export const META_MAX_DEPTH = 5;
export const META_MAX_BYTES = 4096;

/** Why meta is out of bounds, or undefined. Depth first, without recursion, so a 30,000-level body is cheap to refuse. */
function metaProblem(meta: unknown): string | undefined {
  let level: object[] = typeof meta === 'object' && meta !== null ? [meta] : [];
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > META_MAX_DEPTH) return `must nest at most ${META_MAX_DEPTH} levels deep`;
    const next: object[] = [];
    for (const v of level) for (const child of Object.values(v) as unknown[]) if (child !== null && typeof child === 'object') next.push(child);
    level = next;
  }
  if (new TextEncoder().encode(JSON.stringify(meta)).length > META_MAX_BYTES) return `must be at most ${META_MAX_BYTES} bytes as JSON`;
  return undefined;
}

export const signalFields = {
  secret: z.string().min(1).max(SECRET_MAX_LENGTH).describe('Webhook secret; authenticates the signal and selects the linked accounts.'),
  action: z.enum(ACTIONS).describe('What to do.'),
  symbol: z.string().regex(SYMBOL_PATTERN, refusal('must be 1 to 32 letters, digits or ._#-/', 'symbol')).describe('Instrument symbol.'),
  volume: lots.describe('Lots, greater than 0 and at most 100.'),
  price: price.describe('Entry price of a pending order; the new price for modify_pending.'),
  stopLimitPrice: price.describe('Trigger price of a stop-limit entry.'),
  sl: price.describe('Stop-loss price level.'),
  tp: price.describe('Take-profit price level.'),
  slPips: pips.describe('Stop-loss as a pip distance from entry.'),
  tpPips: pips.describe('Take-profit as a pip distance from entry.'),
  positionId: brokerTicket(id).describe('Open-position id.'),
  orderId: brokerTicket(id).describe('Pending-order id.'),
  partialVolume: lots.describe('Lots to close, greater than 0.'),
  expiry: z.iso.datetime({ offset: true }).describe('Pending-order expiry, ISO 8601 date-time with offset, in the future.'),
  side: z.enum(['buy', 'sell']).describe('Filter of a filtered close.'),
  pnl: z.enum(['profit', 'loss']).describe('Filter of a filtered close.'),
  ...managementSignalFields,
  meta: z
    .looseObject({ origin: z.string().max(256).optional() })
    .check((ctx) => {
      const problem = metaProblem(ctx.value);
      if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    })
    .describe(
      `Free-form tags for the caller; never changes routing or execution. At most ${META_MAX_DEPTH} levels deep (meta itself is level 1) ` +
        `and ${META_MAX_BYTES} bytes as JSON. Only \`origin\` is kept with the signal; the rest is checked and dropped.`,
    ),
  idempotencyKey: z
    .string()
    .min(1)
    .max(SPEC_LIMITS.idempotencyKeyMaxLength)
    .describe('Same as the X-Idempotency-Key header, for callers that cannot set headers (TradingView). If both are given they must be equal.'),
} as const;

/** Fields every action may carry: they describe the request, not the order. */
const REQUEST_FIELDS = ['secret', 'action', 'meta', 'idempotencyKey'] as const;

type Field = Exclude<keyof typeof signalFields, (typeof REQUEST_FIELDS)[number]>;

// The action table's field names are exactly the schema's order fields.
const _fieldsAgree: [Field extends OrderField ? true : false, OrderField extends Field ? true : false] = [true, true];

/** The action table of spec §2.1 (actions.ts), re-exported where the schema lives. */
export { ACTION_RULES };

const FIELD_NAMES = Object.keys(signalFields) as (keyof typeof signalFields)[];
const ORDER_FIELDS = FIELD_NAMES.filter((f): f is Field => !(REQUEST_FIELDS as readonly string[]).includes(f));

/** The object shape alone: types of every field, no unknown top-level field. */
export const externalSignalShape = z.strictObject({
  secret: signalFields.secret,
  action: signalFields.action,
  ...Object.fromEntries(FIELD_NAMES.filter((f) => f !== 'secret' && f !== 'action').map((f) => [f, signalFields[f].optional()])),
} as { secret: typeof signalFields.secret; action: typeof signalFields.action } & {
  [K in Exclude<keyof typeof signalFields, 'secret' | 'action'>]: z.ZodOptional<(typeof signalFields)[K]>;
});

export type ExternalSignal = z.infer<typeof externalSignalShape>;

/** What a signal asked of its accounts: its order fields as given (no secret, no meta, no key), for the signal's page. */
type SentFields = Partial<Record<Field, unknown>>;
export function sentFields(signal: object): SentFields {
  const s = signal as Record<string, unknown>;
  return Object.fromEntries(ORDER_FIELDS.filter((f) => s[f] !== undefined).map((f) => [f, s[f]]));
}

/** The whole ExternalSignal: shape plus the per-action table. `now` decides whether an expiry is in the future. */
function externalSignalSchema(now: () => number = Date.now) {
  return externalSignalShape.superRefine((signal, ctx) => {
    const rule = ACTION_RULES[signal.action];
    const present = (f: Field) => signal[f] !== undefined;
    for (const f of rule.required) {
      if (!present(f)) ctx.addIssue({ code: 'custom', path: [f], message: `${f} is required for ${signal.action}` });
    }
    const allowed = new Set<Field>([...rule.required, ...rule.optional]);
    for (const f of ORDER_FIELDS) {
      if (present(f) && !allowed.has(f)) {
        ctx.addIssue({ code: 'custom', path: [f], message: `${f} is not used by ${signal.action}` });
      }
    }
    if (rule.oneOf && !rule.oneOf.some(present)) {
      ctx.addIssue({ code: 'custom', path: [], message: `${signal.action} needs at least one of ${rule.oneOf.join(', ')}` });
    }
    if (signal.action === 'close') {
      const filtered = present('symbol') || present('side') || present('pnl');
      if (present('positionId') && filtered) {
        ctx.addIssue({ code: 'custom', path: ['positionId'], message: 'close takes a positionId or a filter (symbol, side, pnl), not both' });
      } else if (!present('positionId') && !filtered) {
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: 'close needs a positionId or at least one filter (symbol, side, pnl); use close_all to close everything',
        });
      }
    }
    if (present('sl') && present('slPips')) ctx.addIssue({ code: 'custom', path: ['slPips'], message: 'give sl or slPips, not both' });
    if (present('tp') && present('tpPips')) ctx.addIssue({ code: 'custom', path: ['tpPips'], message: 'give tp or tpPips, not both' });
    for (const issue of managementIssues(signal)) ctx.addIssue({ code: 'custom', ...issue });
    if (signal.expiry !== undefined && Date.parse(signal.expiry) <= now()) {
      ctx.addIssue({ code: 'custom', path: ['expiry'], message: 'expiry must be in the future' });
    }
  });
}

export interface ValidationDetail {
  path: string;
  message: string;
}

export type SignalValidation = { ok: true; signal: ExternalSignal } | { ok: false; error: string; details: ValidationDetail[] };

/** Built once per clock, not per request: zod compiles a schema on first use, and the ingress validates every signal. */
const schemaByClock = new WeakMap<() => number, ReturnType<typeof externalSignalSchema>>();

export function validateSignal(body: unknown, now: () => number = Date.now): SignalValidation {
  let schema = schemaByClock.get(now);
  if (!schema) {
    schema = externalSignalSchema(now);
    schemaByClock.set(now, schema);
  }
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, signal: result.data };
  const details = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message,
  }));
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  return { ok: false, error: `Invalid signal: ${summary}`, details };
}
