import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from '../domain/account';
import type { CreatedVia, MadeByOwner, SecretGrant, TokenGrant } from '../domain/account';
import { credentialId, hashCredential, newCredential } from '../registry/credentials';
import { RegistryRefusal, type RedisRegistry } from '../registry/registry';
import { Refusal } from '../refusal';
import type { OwnerStore } from './owner-store';

/**
 * An owner's webhook secrets, API tokens and bridge tokens. A credential is shown once, when made; afterwards it is
 * known by its id (the first 12 hex digits of its SHA-256). Links are checked by the registry in the same atomic
 * step as the write: a secret or token can never reach another owner's account.
 */
export interface OwnerCredentialsDeps {
  registry: RedisRegistry;
  owners: OwnerStore;
  now: () => Date;
}

export const MAX_SECRETS_PER_OWNER = 100;
export const MAX_TOKENS_PER_OWNER = 100;

const linksSchema = z.strictObject({ accounts: z.array(z.string().regex(ACCOUNT_ID_PATTERN)).min(1).max(1000) });

export interface CredentialView {
  id: string;
  accounts: string[];
  suspendedUntil?: string | null;
}

const idOf = credentialId;
const view = (g: SecretGrant | TokenGrant): CredentialView => ({
  id: idOf(g.hash),
  accounts: [...g.accounts],
  ...('suspendedUntil' in g ? { suspendedUntil: g.suspendedUntil } : {}),
});

function links(body: unknown): string[] {
  const parsed = linksSchema.safeParse(body);
  if (!parsed.success)
    throw new Refusal('invalid', 'Invalid links', { details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) });
  return [...new Set(parsed.data.accounts)];
}

/**
 * A registry refusal, as the owner sees it: an account that is not theirs does not exist. The owner API's one
 * translation of "no such account" and "another owner's account" (links, settings, bridge tokens).
 */
export async function asOwnerSees<T>(write: () => Promise<T>, notFound = new Refusal('not_found', 'No such account')): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof RegistryRefusal && (err.reason === 'no_account' || err.reason === 'owner_differs')) throw notFound;
    throw err;
  }
}

const linking = <T>(write: () => Promise<T>) =>
  asOwnerSees(
    write,
    new Refusal('not_found', 'No such account among yours', { details: [{ path: 'accounts', message: 'every account must be one of yours' }] }),
  );

type Kind = 'secret' | 'token';

/** What differs between webhook secrets and API tokens; everything else is the same code. */
function kindOps(deps: OwnerCredentialsDeps, kind: Kind) {
  return kind === 'secret'
    ? {
        list: (o: string): Promise<(SecretGrant | TokenGrant)[]> => deps.registry.secretsOf(o),
        max: MAX_SECRETS_PER_OWNER,
        prefix: 'whsec' as const,
        indexed: 'secrets' as const,
        put: (g: SecretGrant | TokenGrant) => deps.registry.putSecret(g),
        remove: (hash: string) => deps.registry.deleteSecret(hash),
      }
    : {
        list: (o: string): Promise<(SecretGrant | TokenGrant)[]> => deps.registry.tokensOf(o),
        max: MAX_TOKENS_PER_OWNER,
        prefix: 'tok' as const,
        indexed: 'tokens' as const,
        put: (g: SecretGrant | TokenGrant) => deps.registry.putToken({ suspendedUntil: null, ...g }),
        remove: (hash: string) => deps.registry.deleteToken(hash),
      };
}

export async function listCredentials(deps: OwnerCredentialsDeps, owner: string, kind: Kind): Promise<CredentialView[]> {
  return (await kindOps(deps, kind).list(owner)).map(view);
}

async function findCredential(deps: OwnerCredentialsDeps, owner: string, kind: Kind, id: string): Promise<SecretGrant | TokenGrant> {
  const found = /^[0-9a-f]{12}$/.test(id) ? (await kindOps(deps, kind).list(owner)).find((g) => idOf(g.hash) === id) : undefined;
  if (!found) throw new Refusal('not_found', `No such ${kind}`);
  return found;
}

/** A new webhook secret or API token linked to these accounts of the owner's; its value is in the answer only. */
export async function createCredential(
  deps: OwnerCredentialsDeps,
  owner: string,
  kind: Kind,
  body: unknown,
  via: CreatedVia,
): Promise<CredentialView & { value: string }> {
  const accounts = links(body);
  const ops = kindOps(deps, kind);
  // Listing drops the index's entries of revoked ones, which would otherwise count against the cap.
  await ops.list(owner);
  const value = newCredential(ops.prefix);
  const hash = hashCredential(value);
  const grant = { hash, owner, accounts, ...(kind === 'token' ? { suspendedUntil: null } : {}), ...madeBy(deps, via) };
  if ((await linking(() => deps.registry.addGrant(ops.indexed, grant, ops.max))) === 'full')
    throw new Refusal('invalid', `You have the most ${kind}s allowed (${ops.max}); revoke one first`);
  await audit(deps, owner, `${kind}.create`, { id: idOf(hash), accounts });
  return { id: idOf(hash), accounts, value };
}

/** Replaces the accounts a secret or token links. */
export async function relinkCredential(deps: OwnerCredentialsDeps, owner: string, kind: Kind, id: string, body: unknown): Promise<CredentialView> {
  const accounts = links(body);
  const found = await findCredential(deps, owner, kind, id);
  const before = [...found.accounts];
  await linking(() => kindOps(deps, kind).put({ ...found, accounts }));
  await audit(deps, owner, `${kind}.link`, { id, before, after: accounts });
  return view({ ...found, accounts });
}

export async function revokeCredential(deps: OwnerCredentialsDeps, owner: string, kind: Kind, id: string): Promise<void> {
  const found = await findCredential(deps, owner, kind, id);
  await kindOps(deps, kind).remove(found.hash);
  await audit(deps, owner, `${kind}.revoke`, { id });
}

/**
 * A new bridge token for one of the owner's accounts; the old one stops working at once. `why` names the audit entry
 * when the token is made for something else (the MT5 package download writes it into its config).
 */
export async function rotateBridgeToken(
  deps: OwnerCredentialsDeps,
  owner: string,
  accountId: string,
  via: CreatedVia,
  why: { action: string; detail: Record<string, unknown> } = { action: 'bridge_token.rotate', detail: {} },
): Promise<{ accountId: string; value: string }> {
  const value = newCredential('brg');
  await asOwnerSees(() =>
    deps.registry.updateAccount(accountId, {}, { expectOwner: owner, bridgeTokenHash: hashCredential(value), madeByOwner: madeBy(deps, via) }),
  );
  await audit(deps, owner, why.action, why.detail, accountId);
  return { accountId, value };
}

/** What a credential the owner makes records of its making: `owner reset` revokes what has it. */
export const madeBy = (deps: { now: () => Date }, via: CreatedVia): MadeByOwner => ({ createdVia: via, createdAt: deps.now().toISOString() });

async function audit(deps: OwnerCredentialsDeps, owner: string, action: string, detail: Record<string, unknown>, accountId?: string): Promise<void> {
  await deps.owners.audit(owner, { at: deps.now().toISOString(), by: 'owner', action, detail, ...(accountId ? { accountId } : {}) });
}
