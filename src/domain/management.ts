import type { BridgeFeature } from './account';
import type { BridgeCommand } from './bridge-protocol';
import type { managementSignalFields, ManagementRequest } from './management-fields';
import type { ManagementDefaults } from './risk-settings';

/**
 * Trade management asked for by an entry (docs/trade-management.md, protocol 1.6): the bridge features its fields
 * need, and the management a command carries once the owner's defaults are merged in. Pure, and free of zod: the
 * workflows import it (the fields' validation is management-fields.ts). The routing refuses (412) with it, the risk
 * rules resolve with it.
 */

export type ManagementField = keyof typeof managementSignalFields;
export type { ManagementRequest };

/** Every field once: the compiler refuses a field missing here or one that is not a management field. */
const FIELDS: Record<ManagementField, true> = {
  trailDistancePips: true,
  trailTriggerPips: true,
  trailStepPips: true,
  breakevenTriggerPips: true,
  breakevenOffsetPips: true,
  takeProfits: true,
  closeOpposite: true,
  maxSpreadPips: true,
};
export const MANAGEMENT_FIELDS = Object.keys(FIELDS) as ManagementField[];

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
  return Object.fromEntries(Object.entries(fields).filter(([k]) => !(MANAGEMENT_FIELDS as string[]).includes(k))) as Omit<T, ManagementField>;
}
