import { hashCredential } from './credentials';
import { importDocumentSchema, type ImportDocument } from '../domain/account';
import type { RedisRegistry } from './registry';

export interface ImportSummary {
  accounts: number;
  secrets: number;
  tokens: number;
  /** Accounts the document gave to another owner: the old owner's secrets and tokens no longer link them. */
  ownerChanges: { accountId: string; secretsUnlinked: string[]; tokensUnlinked: string[] }[];
}

/**
 * Upserts an import document. A secret or token may link only accounts of its own owner (a token without `owner`
 * belongs to the one owner of its accounts), and every linked account must exist (in the document or already in the
 * registry): a link to somebody else's account is refused whole, before anything is written. An account the document
 * gives to another owner loses the old owner's links and its bridge token (unless the document sets a new one).
 */
export async function importRegistry(registry: RedisRegistry, input: unknown): Promise<ImportSummary> {
  const doc: ImportDocument = importDocumentSchema.parse(input);
  const inDoc = new Map(doc.accounts.map((a) => [a.id, a]));
  const linked = [...new Set([...doc.secrets.flatMap((s) => s.accounts), ...doc.tokens.flatMap((t) => t.accounts)])];
  const stored = await registry.getAccounts(linked.filter((id) => !inDoc.has(id)));
  const owners = new Map<string, string>();
  for (const a of stored) if (a) owners.set(a.id, a.owner);
  for (const a of doc.accounts) owners.set(a.id, a.owner);

  const checkLinks = (what: string, owner: string, ids: string[]) => {
    for (const id of ids) {
      const accountOwner = owners.get(id);
      if (accountOwner === undefined) throw new Error(`${what} of ${owner} links unknown account ${id}`);
      if (accountOwner !== owner) throw new Error(`${what} of ${owner} links account ${id} of another owner`);
    }
  };
  for (const s of doc.secrets) checkLinks('secret', s.owner, s.accounts);
  const tokenOwners = doc.tokens.map((t) => {
    for (const id of t.accounts) if (!owners.has(id)) throw new Error(`token grants unknown account ${id}`);
    const found = [...new Set(t.accounts.map((id) => owners.get(id)!))];
    if (t.owner === undefined && found.length !== 1) {
      throw new Error(
        found.length === 0
          ? 'a token without accounts needs an owner'
          : `a token grants accounts of several owners (${found.join(', ')}): make one token per owner`,
      );
    }
    const owner = t.owner ?? found[0]!;
    checkLinks('token', owner, t.accounts);
    return owner;
  });

  const ownerChanges: ImportSummary['ownerChanges'] = [];
  for (const { bridgeToken, ...account } of doc.accounts) {
    const result = await registry.putAccount(account, bridgeToken ? hashCredential(bridgeToken) : undefined);
    if (result === 'owner_changed') {
      const unlinked = await registry.unlinkFromOtherOwners(account.id, account.owner);
      ownerChanges.push({ accountId: account.id, secretsUnlinked: unlinked.secrets, tokensUnlinked: unlinked.tokens });
    }
  }
  for (const s of doc.secrets) {
    await registry.putSecret({ hash: hashCredential(s.secret), owner: s.owner, accounts: [...new Set(s.accounts)] });
  }
  for (const [i, t] of doc.tokens.entries()) {
    await registry.putToken({ hash: hashCredential(t.token), owner: tokenOwners[i]!, accounts: [...new Set(t.accounts)], suspendedUntil: t.suspendedUntil });
  }
  return { accounts: doc.accounts.length, secrets: doc.secrets.length, tokens: doc.tokens.length, ownerChanges };
}
