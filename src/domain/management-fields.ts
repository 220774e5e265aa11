import { z } from 'zod';

/**
 * The signal's eight trade-management fields (docs/trade-management.md, protocol 1.6) as the ingress validates them,
 * and the rules between them and the rest of the entry. Kept apart from management.ts, which the workflows import:
 * the workflow sandbox evaluates its bundle's modules again for every workflow, and zod's are most of that work.
 */

interface Issue {
  path: (string | number)[];
  message: string;
}

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

/** What an entry asks for: the signal's fields as validated. */
export type ManagementRequest = { [K in keyof typeof managementSignalFields]?: z.infer<(typeof managementSignalFields)[K]> };

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
