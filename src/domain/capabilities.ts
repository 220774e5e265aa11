import { BRIDGE_FEATURES, type Account, type Platform } from './account';
import { ACTION_TABLE, ACTIONS, type Action, type ActionDescription } from './actions';
import { featuresNeeded, missingFeatures, type ManagementRequest } from './management';

/**
 * Which bridge version an action needs, by platform (docs/capabilities.md). Every other action needs only the
 * platform's base version. The version a bridge reported in hello is the one checked.
 */
export const CAPABILITIES: Record<Platform, { base: string; needs: Partial<Record<Action, string>> }> = {
  mt5: { base: '1.0.0', needs: needsOf('mt5') },
  ctrader: { base: '1.0.0', needs: needsOf('ctrader') },
};

function needsOf(platform: Platform): Partial<Record<Action, string>> {
  return Object.fromEntries(
    ACTIONS.flatMap((a) => {
      const needs: { mt5: string; ctrader: string } | undefined = (ACTION_TABLE[a] as ActionDescription).needs;
      return needs ? [[a, needs[platform]]] : [];
    }),
  );
}

/**
 * The bridge version to install, by platform: for MT5 the version of the package the service serves
 * (bridges/mt5/src/es_mt5_bridge/__init__.py `__version__`, which the wheel and the bridge's hello carry;
 * test/integration/mt5-package-contents.test.ts and `make dist` fail when the two differ), for cTrader the connector's
 * (src/ctrader/bridge.ts reports this one).
 */
export const CURRENT_BRIDGE_VERSION: Record<Platform, string> = { mt5: '3.6.0', ctrader: '1.5.0' };

/** Why the account cannot run the action, and the bridge version that would (none when only the venue lacks it). */
export interface CapabilityGap {
  message: string;
  install?: string;
}

export function capabilityGap(account: Pick<Account, 'platform' | 'bridgeVersion' | 'venue'>, action: Action): CapabilityGap | undefined {
  const venue = (ACTION_TABLE[action] as ActionDescription).venue;
  if (venue === 'stopLimit' && !account.venue.stopLimit) return { message: `the venue of this account offers no stop-limit orders` };
  if (venue === 'modifyPending' && !account.venue.modifyPending) return { message: `the venue of this account cannot modify pending orders` };
  const table = CAPABILITIES[account.platform];
  const needed = table.needs[action] ?? table.base;
  if (compareVersions(account.bridgeVersion, needed) < 0) {
    const install = CURRENT_BRIDGE_VERSION[account.platform];
    return {
      message: `${action} needs ${account.platform === 'mt5' ? 'EA' : 'cBot'} version ${needed} or later; this account's bridge is ${account.bridgeVersion}; update the bridge and retry: ${howToUpdate(account.platform)}`,
      install,
    };
  }
  return undefined;
}

/**
 * Why the account's bridge cannot manage the trade the entry asks for (protocol 1.6): the features it did not announce
 * in its hello. A bridge announces what it can rather than a version, so the features decide, not the version.
 */
export function managementGap(account: Pick<Account, 'platform' | 'bridgeVersion' | 'bridgeFeatures'>, signal: ManagementRequest): CapabilityGap | undefined {
  const missing = missingFeatures(featuresNeeded(signal), account.bridgeFeatures);
  if (missing.length === 0) return undefined;
  return {
    message: `trade management needs the bridge feature(s) ${missing.join(', ')}, which this account's bridge (${account.bridgeVersion}) did not announce; update the bridge and retry: ${howToUpdate(account.platform)}`,
    install: CURRENT_BRIDGE_VERSION[account.platform],
  };
}

function howToUpdate(platform: Platform): string {
  const install = CURRENT_BRIDGE_VERSION[platform];
  return platform === 'mt5'
    ? `install the MT5 bridge ${install} (the download on the account's page of the dashboard)`
    : `run the cTrader connector ${install}`;
}

/**
 * Why an account's bridge is worth updating, for its page: the actions its version is too old for and the features
 * it did not announce, which the service offers. Undefined when it runs everything (a version behind the current one
 * that lacks nothing is not nagged about), when no bridge has said hello, and for the current version or newer.
 */
export function bridgeUpdateReason(account: Pick<Account, 'platform' | 'bridgeVersion' | 'bridgeFeatures'>): string | undefined {
  const { platform, bridgeVersion: version } = account;
  if (version === '0.0.0' || compareVersions(version, CURRENT_BRIDGE_VERSION[platform]) >= 0) return undefined;
  const actions = Object.entries(CAPABILITIES[platform].needs)
    .filter(([, needed]) => compareVersions(version, needed) < 0)
    .map(([action]) => action);
  const features = BRIDGE_FEATURES.filter((f) => !account.bridgeFeatures.includes(f));
  const lacks = [actions.length > 0 ? `the actions ${actions.join(', ')}` : '', features.length > 0 ? `the features ${features.join(', ')}` : '']
    .filter(Boolean)
    .join(' and ');
  return lacks === '' ? undefined : `it cannot run ${lacks}`;
}

/** Why the account cannot run the action, or undefined when it can. */
export function missingCapability(account: Pick<Account, 'platform' | 'bridgeVersion' | 'venue'>, action: Action): string | undefined {
  return capabilityGap(account, action)?.message;
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
