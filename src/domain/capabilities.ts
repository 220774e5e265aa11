import type { Account, Platform } from './account';
import type { Action } from './actions';

/**
 * Which bridge version an action needs, by platform (docs/capabilities.md). Every other action needs only the
 * platform's base version. The version a bridge reported in hello is the one checked.
 */
export const CAPABILITIES: Record<Platform, { base: string; needs: Partial<Record<Action, string>> }> = {
  mt5: {
    base: '1.0.0',
    needs: {
      buy_stop_limit: '2.0.0',
      sell_stop_limit: '2.0.0',
      modify_pending: '2.0.0',
      modify_pending_expiry: '2.0.0',
    },
  },
  ctrader: {
    base: '1.0.0',
    needs: {
      buy_stop_limit: '1.1.0',
      sell_stop_limit: '1.1.0',
      modify_pending: '1.1.0',
      modify_pending_expiry: '1.1.0',
    },
  },
};

const STOP_LIMIT: readonly Action[] = ['buy_stop_limit', 'sell_stop_limit'];
const MODIFY_PENDING: readonly Action[] = ['modify_pending', 'modify_pending_expiry'];

/** Why the account cannot run the action, or undefined when it can. */
export function missingCapability(account: Pick<Account, 'platform' | 'bridgeVersion' | 'venue'>, action: Action): string | undefined {
  if (STOP_LIMIT.includes(action) && !account.venue.stopLimit) return `the venue of this account offers no stop-limit orders`;
  if (MODIFY_PENDING.includes(action) && !account.venue.modifyPending) return `the venue of this account cannot modify pending orders`;
  const table = CAPABILITIES[account.platform];
  const needed = table.needs[action] ?? table.base;
  if (compareVersions(account.bridgeVersion, needed) < 0) {
    return `${action} needs ${account.platform === 'mt5' ? 'EA' : 'cBot'} version ${needed} or later; this account's bridge is ${account.bridgeVersion}; update the bridge and retry`;
  }
  return undefined;
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
