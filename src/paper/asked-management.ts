import type { ManagementAsked } from '../bridge-kit/trade-management';
import type { BrokerCommand } from './broker-types';

/** The entry's management fields as the position keeps them (none: the entry asked for no management). */
export function managementOf(cmd: BrokerCommand): { management?: ManagementAsked } {
  const { trailDistancePips, trailTriggerPips, trailStepPips, breakevenTriggerPips, breakevenOffsetPips, takeProfits } = cmd;
  if (trailDistancePips === undefined && breakevenTriggerPips === undefined && (takeProfits?.length ?? 0) === 0) return {};
  const asked = { trailDistancePips, trailTriggerPips, trailStepPips, breakevenTriggerPips, breakevenOffsetPips, takeProfits };
  return { management: Object.fromEntries(Object.entries(asked).filter(([, v]) => v !== undefined)) };
}
