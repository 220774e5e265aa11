import { hashCredential } from './credentials';
import { importDocumentSchema, type ImportDocument } from './model';
import type { Registry } from './registry';

export interface ImportSummary {
  accounts: number;
  secrets: number;
  tokens: number;
}

/**
 * Upserts an import document. A secret may link only accounts of its own owner, and every linked account must
 * exist (in the document or already in the registry): a link to somebody else's account is refused whole.
 */
export async function importRegistry(registry: Registry, input: unknown): Promise<ImportSummary> {
  const doc: ImportDocument = importDocumentSchema.parse(input);
  const inDoc = new Map(doc.accounts.map((a) => [a.id, a]));
  const linked = [...new Set([...doc.secrets.flatMap((s) => s.accounts), ...doc.tokens.flatMap((t) => t.accounts)])];
  const stored = await registry.getAccounts(linked.filter((id) => !inDoc.has(id)));
  const owners = new Map<string, string>();
  for (const a of stored) if (a) owners.set(a.id, a.owner);
  for (const a of doc.accounts) owners.set(a.id, a.owner);

  for (const s of doc.secrets) {
    for (const id of s.accounts) {
      const owner = owners.get(id);
      if (owner === undefined) throw new Error(`secret of ${s.owner} links unknown account ${id}`);
      if (owner !== s.owner) throw new Error(`secret of ${s.owner} links account ${id} of another owner`);
    }
  }
  for (const t of doc.tokens) {
    for (const id of t.accounts) if (!owners.has(id)) throw new Error(`token grants unknown account ${id}`);
  }

  for (const { bridgeToken, ...account } of doc.accounts) {
    await registry.putAccount(account, bridgeToken ? hashCredential(bridgeToken) : undefined);
  }
  for (const s of doc.secrets) {
    await registry.putSecret({ hash: hashCredential(s.secret), owner: s.owner, accounts: [...new Set(s.accounts)] });
  }
  for (const t of doc.tokens) {
    await registry.putToken({ hash: hashCredential(t.token), accounts: [...new Set(t.accounts)], suspendedUntil: t.suspendedUntil });
  }
  return { accounts: doc.accounts.length, secrets: doc.secrets.length, tokens: doc.tokens.length };
}
