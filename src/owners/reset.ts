import type { CreatedVia } from '../domain/account';
import { credentialId } from '../registry/credentials';
import type { RedisRegistry } from '../registry/registry';
import type { OwnerStore } from './owner-store';

/**
 * What `owner reset` takes back besides the sign-in: every webhook secret, API token and bridge token the owner made
 * through the owner API (signed in or with an owner API key), as its record says (`createdVia`). The reset recovers
 * from a sign-in someone else may have held; whatever that sign-in made is theirs as much as the owner's. Each reset
 * revokes them all, so those left are the ones made since the last reset. Credentials an operator imported or made
 * (and those written before the record was kept) carry no `createdVia` and stay. Each revocation is in the owner's
 * audit log, by the operator.
 */
export interface RevokedCredential {
  kind: 'secret' | 'token' | 'bridge_token';
  id: string;
  /** A secret's or token's linked accounts; a bridge token's one account. */
  accounts: string[];
  createdVia: CreatedVia;
  createdAt: string | null;
}

export interface ResetRevokeDeps {
  registry: RedisRegistry;
  owners: OwnerStore;
  now: () => Date;
}

export async function revokeOwnerMade(deps: ResetRevokeDeps, owner: string): Promise<RevokedCredential[]> {
  const revoked: RevokedCredential[] = [];
  const grants = [
    { kind: 'secret' as const, list: await deps.registry.secretsOf(owner), remove: (h: string) => deps.registry.deleteSecret(h) },
    { kind: 'token' as const, list: await deps.registry.tokensOf(owner), remove: (h: string) => deps.registry.deleteToken(h) },
  ];
  for (const { kind, list, remove } of grants)
    for (const g of list) {
      if (!g.createdVia) continue;
      await remove(g.hash);
      revoked.push({ kind, id: credentialId(g.hash), accounts: [...g.accounts], createdVia: g.createdVia, createdAt: g.createdAt ?? null });
    }
  const accounts = (await deps.registry.accountsOf(owner)).map((a) => a.id);
  for (const record of await deps.registry.bridgeTokenRecords(accounts)) {
    if (!record.createdVia || !(await deps.registry.revokeBridgeToken(record.accountId, record.hash))) continue;
    const r = { kind: 'bridge_token' as const, id: credentialId(record.hash), accounts: [record.accountId] };
    revoked.push({ ...r, createdVia: record.createdVia, createdAt: record.createdAt ?? null });
  }
  const at = deps.now().toISOString();
  for (const r of revoked)
    await deps.owners.audit(owner, {
      at,
      by: 'operator',
      action: `${r.kind}.revoke`,
      ...(r.kind === 'bridge_token' ? { accountId: r.accounts[0] } : {}),
      detail: { id: r.id, reason: 'owner_reset', createdVia: r.createdVia, createdAt: r.createdAt },
    });
  return revoked;
}

/** The CLI's lines for what a reset revoked (none, or one a credential, and what a revoked bridge token means). */
export function revokedLines(revoked: readonly RevokedCredential[]): string[] {
  if (revoked.length === 0) return ['No credential made through the owner API was left to revoke.'];
  const lines = [`Revoked ${revoked.length} credential(s) made through the owner API:`];
  for (const r of revoked) lines.push(`  ${r.kind} ${r.id} (${r.accounts.join(', ')}; made via ${r.createdVia}${r.createdAt ? ` at ${r.createdAt}` : ''})`);
  if (revoked.some((r) => r.kind === 'bridge_token'))
    lines.push("A revoked bridge token disconnects that account's bridge: once signed in, the owner downloads a new MT5 package or makes a new bridge token.");
  return lines;
}
