import { z } from 'zod';
import type { BridgeFeature } from './account';
import type { BridgeCommand } from './bridge-protocol';
import type { ManagementDefaults } from './risk-settings';

/**
 * Trade management asked for by an entry (docs/trade-management.md, protocol 1.6): the signal's eight optional fields
 * and their rules, the bridge features they need, and the management a command carries once the owner's defaults are
 * merged in. Pure: the ingress validates with it, the routing refuses (412) with it, the risk rules resolve with it.
 */

const pips = z.number().gt(0).max(1e6);
const pipsOrZero = z.number().gte(0).max(1e6);
const price = z.number().gt(0).max(1e9);
/** A percentage sum of 33.3 + 33.3 + 33.4 must not be refused for the last bit of a double. */
const PERCENT_SUM_TOLERANCE = 1e-9;

const takeProfitLevel = z.strictObject({
  tpPips: pips.optional().describe("The level's distance from the entry price, in pips."),
  tp: price.optional().describe("The level's price."),
  closePercent: z.number().gt(0).lte(100).describe("Percent of the entry's volume to close at this level, greater than 0 and at most 100."),
});
type TakeProfitLevel = z.infer<typeof takeProfitLevel>;

const levelKind = (level: TakeProfitLevel): 'tpPips' | 'tp' | undefined => (level.tpPips !== undefined ? 'tpPips' : level.tp !== undefined ? 'tp' : undefined);

/** The rules between levels; paths are relative to the array (`1.tp`), so the refusal reads `takeProfits.1.tp`. */
const takeProfits = z
  .array(takeProfitLevel)
  .min(1)
  .max(5)
  .superRefine((levels, ctx) => {
    for (const issue of levelIssues(levels)) ctx.addIssue({ code: 'custom', ...issue });
  });

/** The first problem of each level (its kind, then whether an earlier level is at the same place), and the sum's. */
function levelIssues(levels: TakeProfitLevel[]): Issue[] {
  const issues: Issue[] = [];
  const first = levels.map(levelKind).find((k) => k !== undefined);
  const seen = new Map<number, number>();
  levels.forEach((level, i) => {
    const kind = levelKind(level);
    if (level.tpPips !== undefined && level.tp !== undefined) issues.push({ path: [i, 'tp'], message: 'give tpPips or tp, not both' });
    else if (kind === undefined) issues.push({ path: [i], message: 'give tpPips or tp' });
    else if (kind !== first) issues.push({ path: [i, kind], message: `every level gives the same kind as the first one (${first})` });
    else if (seen.has(level[kind]!)) issues.push({ path: [i, kind], message: `same level as takeProfits.${seen.get(level[kind]!)}` });
    else seen.set(level[kind]!, i);
  });
  const sum = levels.reduce((s, l) => s + l.closePercent, 0);
  if (sum > 100 + PERCENT_SUM_TOLERANCE) issues.push({ path: [], message: `the levels' closePercent add up to ${Number(sum.toFixed(6))}; at most 100` });
  return issues;
}

/** The eight fields on the entries (order fields of the action table, actions.ts). */
export const managementSignalFields = {
  trailDistancePips: pips.describe('Trailing stop: keep the stop loss this many pips behind the best price since the trail started.'),
  trailTriggerPips: pipsOrZero.describe('Start trailing once the position is this many pips in profit (default 0); needs trailDistancePips.'),
  trailStepPips: pips.describe('Move the trailing stop only in steps of at least this many pips (default 1); needs trailDistancePips.'),
  breakevenTriggerPips: pips.describe('Once the position is this many pips in profit, move the stop loss to the entry price (plus breakevenOffsetPips).'),
  breakevenOffsetPips: pipsOrZero.describe('Pips beyond the entry price the breakeven stop locks (default 0); needs breakevenTriggerPips and is less than it.'),
  takeProfits: takeProfits.describe(
    "Take-profit levels, 1 to 5, all as tpPips or all as tp: close closePercent of the entry's volume at each (sum at most 100); the entry's own tp/tpPips stays the final target.",
  ),
  closeOpposite: z.boolean().describe("Market entries: first close this account's positions of the symbol on the other side, then enter (reverse)."),
  maxSpreadPips: pips.describe('Refuse the entry (spread_too_wide) when the spread at execution is wider than this many pips.'),
} as const;

export type ManagementField = keyof typeof managementSignalFields;
export const MANAGEMENT_FIELDS = Object.keys(managementSignalFields) as ManagementField[];

/** What an entry asks for: the signal's fields as validated. */
export type ManagementRequest = { [K in ManagementField]?: z.infer<(typeof managementSignalFields)[K]> };

/** What a command carries (protocol 1.6): defaults resolved, `closeOpposite` only when true, nothing when unused. */
export type CommandManagement = Pick<BridgeCommand, ManagementField>;

interface Issue {
  path: (string | number)[];
  message: string;
}

/** The rules between the management fields and the rest of the entry, each naming the field at fault. */
export function managementIssues(signal: ManagementRequest & { tpPips?: number }): Issue[] {
  const issues: Issue[] = [];
  for (const f of ['trailTriggerPips', 'trailStepPips'] as const) {
    if (signal[f] !== undefined && signal.trailDistancePips === undefined) issues.push({ path: [f], message: `${f} needs trailDistancePips` });
  }
  const { breakevenTriggerPips: trigger, breakevenOffsetPips: offset } = signal;
  if (offset !== undefined && trigger === undefined) issues.push({ path: ['breakevenOffsetPips'], message: 'breakevenOffsetPips needs breakevenTriggerPips' });
  if (offset !== undefined && trigger !== undefined && offset >= trigger) {
    issues.push({ path: ['breakevenOffsetPips'], message: `breakevenOffsetPips must be less than breakevenTriggerPips (${trigger})` });
  }
  const final = signal.tpPips;
  signal.takeProfits?.forEach((level, i) => {
    if (final !== undefined && level.tpPips !== undefined && level.tpPips >= final) {
      issues.push({ path: ['takeProfits', i, 'tpPips'], message: `must be less than the entry's tpPips (${final}), which stays the final target` });
    }
  });
  return issues;
}

const TRAIL = ['trailDistancePips', 'trailTriggerPips', 'trailStepPips'] as const;
const BREAKEVEN = ['breakevenTriggerPips', 'breakevenOffsetPips'] as const;

/** The bridge features (protocol 1.6) an entry's management needs: the same names on a signal and on a command. */
export function featuresNeeded(m: ManagementRequest): BridgeFeature[] {
  const needed: BridgeFeature[] = [];
  if (TRAIL.some((f) => m[f] !== undefined)) needed.push('trailing_stop');
  if (BREAKEVEN.some((f) => m[f] !== undefined)) needed.push('breakeven_trigger');
  if (m.takeProfits !== undefined) needed.push('take_profit_levels');
  if (m.closeOpposite === true) needed.push('close_opposite');
  if (m.maxSpreadPips !== undefined) needed.push('max_spread');
  return needed;
}

/** The features `needed` that the bridge did not announce. */
export function missingFeatures(needed: readonly BridgeFeature[], announced: readonly BridgeFeature[] = []): BridgeFeature[] {
  return needed.filter((f) => !announced.includes(f));
}

/**
 * The management a command carries: the signal's own trail (or breakeven) fields when it has any, else the owner's
 * defaults', with the defaults the bridges never apply themselves filled in; the tighter of the two max spreads.
 * An entry that asks for nothing, on an account without defaults, resolves to {} so its command is as before.
 */
export function resolveManagement(signal: ManagementRequest, defaults: ManagementDefaults = {}): CommandManagement {
  const trail = TRAIL.some((f) => signal[f] !== undefined) ? signal : defaults;
  const breakeven = BREAKEVEN.some((f) => signal[f] !== undefined) ? signal : defaults;
  const spreads = [signal.maxSpreadPips, defaults.maxSpreadPips].filter((s): s is number => s !== undefined);
  return {
    ...(trail.trailDistancePips !== undefined
      ? { trailDistancePips: trail.trailDistancePips, trailTriggerPips: trail.trailTriggerPips ?? 0, trailStepPips: trail.trailStepPips ?? 1 }
      : {}),
    ...(breakeven.breakevenTriggerPips !== undefined
      ? { breakevenTriggerPips: breakeven.breakevenTriggerPips, breakevenOffsetPips: breakeven.breakevenOffsetPips ?? 0 }
      : {}),
    ...(signal.takeProfits !== undefined ? { takeProfits: signal.takeProfits.map((l) => ({ ...l })) } : {}),
    ...(signal.closeOpposite === true ? { closeOpposite: true as const } : {}),
    ...(spreads.length > 0 ? { maxSpreadPips: Math.min(...spreads) } : {}),
  };
}

/** The entry without its management fields: the command takes them from the plan, resolved, never raw. */
export function withoutManagement<T extends object>(fields: T): Omit<T, ManagementField> {
  return Object.fromEntries(Object.entries(fields).filter(([k]) => !(MANAGEMENT_FIELDS as string[]).includes(k))) as Omit<T, ManagementField>;
}
