import { capabilityGap, managementGap } from '../domain/capabilities';
import type { Account, SecretGrant } from '../domain/account';
import type { Registry } from '../registry/registry';
import type { Action } from '../domain/actions';
import type { ManagementRequest } from '../domain/management';
import { Refusal } from '../refusal';
import type { SkippedAccount } from '../domain/workflow-input';

/** What routing looks at: the action, and the trade management an entry asks for (protocol 1.6). */
type Entry = ManagementRequest & { action: Action };

export interface Routing {
  accounts: Account[];
  skipped: SkippedAccount[];
}

/**
 * Which accounts a signal runs on (design pipeline step 7). On the per-account URL every reason an account cannot
 * take the signal is an error; an unknown or unlinked account is the same 401 as a bad secret, so a caller cannot
 * probe which accounts exist. On the broadcast URL ineligible accounts are skipped, and none left is a 200.
 */
export async function resolveTargets(registry: Registry, grant: SecretGrant, signal: Entry, routeAccountId?: string): Promise<Routing> {
  if (routeAccountId !== undefined) {
    const account = grant.accounts.includes(routeAccountId) ? await registry.getAccount(routeAccountId) : null;
    if (!account || account.owner !== grant.owner) throw new Refusal('unauthorized', 'Invalid webhook secret or account');
    if (account.status === 'locked') throw new Refusal('forbidden', 'Account is locked');
    if (!account.entitled) throw new Refusal('forbidden', 'Account is not entitled to execute signals');
    if (account.type === 'copy_master') throw new Refusal('not_accepted_by_account', 'Account type does not accept signals (copy-only master account)');
    const gap = capabilityGap(account, signal.action) ?? managementGap(account, signal);
    if (gap) {
      throw new Refusal('bridge_too_old', `Not supported by this account's bridge: ${gap.message}`, gap.install ? { installBridgeVersion: gap.install } : {});
    }
    return { accounts: [account], skipped: [] };
  }
  const found = await registry.getAccounts(grant.accounts);
  const routing: Routing = { accounts: [], skipped: [] };
  found.forEach((a, i) => {
    const reason = skipReason(a, grant, signal);
    if (reason) routing.skipped.push({ accountId: grant.accounts[i]!, reason });
    else routing.accounts.push(a!);
  });
  return routing;
}

/** Why a broadcast skips an account the secret links, or undefined when it runs there. */
function skipReason(a: Account | null, grant: SecretGrant, signal: Entry): SkippedAccount['reason'] | undefined {
  // Gone, or moved to another owner: the same word for both, so nothing of another owner shows.
  if (a === null || a.owner !== grant.owner) return 'unavailable';
  if (a.status !== 'active') return 'locked';
  if (!a.entitled) return 'not_entitled';
  if (a.type !== 'standard') return 'copy_master';
  if (capabilityGap(a, signal.action) ?? managementGap(a, signal)) return 'bridge_too_old';
  return undefined;
}
