import type { z } from 'zod';
import { ACTIONS, type Action } from '../domain/actions';
import { ACTION_RULES, externalSignalShape, META_MAX_BYTES, META_MAX_DEPTH } from '../domain/signal';

/**
 * ExternalSignal in the OpenAPI document (spec §2.1): its shape comes from externalSignalShape, its per-action
 * conditions and the action table of its description from the same action table the ingress validates with
 * (ACTION_RULES).
 */

export type JsonSchema = z.core.JSONSchema.BaseSchema;
type SignalField = keyof typeof externalSignalShape.shape;

/**
 * The fields the action table governs: those some action requires or allows. Every other field (secret, action,
 * meta, ...) describes the request rather than the order, and any action may carry it.
 */
const GOVERNED = new Set<string>(ACTIONS.flatMap((a) => [...ACTION_RULES[a].required, ...ACTION_RULES[a].optional, ...(ACTION_RULES[a].oneOf ?? [])]));
const ACTION_FIELDS: readonly SignalField[] = (Object.keys(externalSignalShape.shape) as SignalField[]).filter((f) => GOVERNED.has(f));

/** Actions that share one rule, in ACTIONS order. */
function actionGroups(): { actions: Action[]; rule: (typeof ACTION_RULES)[Action] }[] {
  const groups = new Map<string, { actions: Action[]; rule: (typeof ACTION_RULES)[Action] }>();
  for (const action of ACTIONS) {
    const rule = ACTION_RULES[action];
    const key = JSON.stringify(rule);
    const group = groups.get(key);
    if (group) group.actions.push(action);
    else groups.set(key, { actions: [action], rule });
  }
  return [...groups.values()];
}

const present = (f: string): JsonSchema => ({ required: [f] });
const forbidden = (fields: readonly string[]): Record<string, JsonSchema | boolean> => Object.fromEntries(fields.map((f) => [f, false]));

/**
 * The per-action table and the cross-field rules of externalSignalSchema() as JSON Schema 2020-12 conditions.
 * The one rule JSON Schema cannot state (an expiry must be in the future) is in the description.
 */
export function actionConditions(): JsonSchema[] {
  const conditions: JsonSchema[] = actionGroups().map(({ actions, rule }) => {
    const allowed = new Set<string>([...rule.required, ...rule.optional]);
    const then: JsonSchema = {};
    if (rule.required.length > 0) then.required = [...rule.required];
    const unused = ACTION_FIELDS.filter((f) => !allowed.has(f));
    if (unused.length > 0) then.properties = forbidden(unused);
    if (rule.oneOf) then.anyOf = rule.oneOf.map(present);
    return { if: { properties: { action: { enum: actions } }, required: ['action'] }, then };
  });
  // close: a positionId, or a filtered close by at least one of its other fields, never both (see externalSignalSchema).
  const closeFilters = ACTION_RULES.close.optional.filter((f) => f !== 'positionId');
  conditions.push({
    if: { properties: { action: { const: 'close' } }, required: ['action'] },
    then: {
      oneOf: [
        { required: ['positionId'], properties: forbidden(closeFilters) },
        { properties: forbidden(['positionId']), anyOf: closeFilters.map(present) },
      ],
    },
  });
  conditions.push({ not: { required: ['sl', 'slPips'] } }, { not: { required: ['tp', 'tpPips'] } });
  return conditions;
}

function actionTable(): string {
  const list = (fields: readonly string[]) => (fields.length > 0 ? fields.join(', ') : '—');
  const rows = actionGroups().map(({ actions, rule }) => {
    const required = rule.oneOf ? `${list(rule.required)}; at least one of ${rule.oneOf.join(', ')}` : list(rule.required);
    return `| ${actions.join(', ')} | ${required} | ${list(rule.optional.filter((f) => !rule.oneOf?.includes(f)))} |`;
  });
  return ['| Action | Required | Optional |', '|---|---|---|', ...rows].join('\n');
}

export function externalSignalDescription(): string {
  return [
    "A trade signal for the caller's own trading account(s). `secret` (the webhook secret) authenticates it; there is no header signature scheme.",
    '',
    'Fields an action does not use are refused (400), so a mistaken template is caught:',
    '',
    actionTable(),
    '',
    '- close takes a `positionId`, or a filter by `symbol` / `side` / `pnl` (a filtered close), not both; use close_all to close everything.',
    '- Give `sl` or `slPips`, and `tp` or `tpPips`, not both.',
    '- `expiry` must be in the future (not expressible in JSON Schema).',
    `- \`meta\` is free-form; it never changes routing or execution. It may nest at most ${META_MAX_DEPTH} levels (meta itself is level 1) and take at most ${META_MAX_BYTES} bytes as JSON (else 400). Only \`meta.origin\` is kept with the signal (it shows in the Temporal UI); the rest is dropped after validation.`,
    '- Stop-limit entries and the modify_pending family need a recent MT5 bridge (EA) and may be unavailable on some venues; an outdated bridge yields 412.',
    '- Trade management (entries; docs/trade-management.md): `trailTriggerPips` and `trailStepPips` need `trailDistancePips`; `breakevenOffsetPips` needs `breakevenTriggerPips` and is less than it; ' +
      "`takeProfits` levels give exactly one of `tpPips` / `tp`, all of the same kind, at distinct levels, `closePercent` adding up to at most 100, and when the entry gives `tpPips` every level's `tpPips` is less than it; " +
      '`closeOpposite` is for market entries only. Each refusal is a 400 naming the field (`takeProfits.1.closePercent`). ' +
      'An account whose bridge did not announce the feature an entry needs (`trailing_stop`, `breakeven_trigger`, `take_profit_levels`, `close_opposite`, `max_spread`) yields 412 with `installBridgeVersion`.',
  ].join('\n');
}
