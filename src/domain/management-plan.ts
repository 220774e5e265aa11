import type { BridgeFeature } from './account';
import type { BridgeCommand } from './bridge-protocol';
import type { ManagementDefaults } from './risk-settings';
import type { ManagementField, ManagementRequest } from './management';

/**
 * What an entry's trade management becomes on its command (docs/trade-management.md): the features it needs, the
 * owner's defaults resolved. Pure and free of zod (the schema is management.ts), because the account workflow runs it
 * through commandFor inside Temporal's sandbox, whose bundle it would otherwise carry.
 */

/** The eight fields of management.ts's schema, in its order (test/unit/trade-management-plan.test.ts holds them equal). */
export const MANAGEMENT_FIELDS: readonly ManagementField[] = [
  'trailDistancePips',
  'trailTriggerPips',
  'trailStepPips',
  'breakevenTriggerPips',
  'breakevenOffsetPips',
  'takeProfits',
  'closeOpposite',
  'maxSpreadPips',
];

/** What a command carries (protocol 1.6): defaults resolved, `closeOpposite` only when true, nothing when unused. */
export type CommandManagement = Pick<BridgeCommand, ManagementField>;

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
  return Object.fromEntries(Object.entries(fields).filter(([k]) => !(MANAGEMENT_FIELDS as readonly string[]).includes(k))) as Omit<T, ManagementField>;
}
