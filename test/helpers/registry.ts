/**
 * The one registry builder of the tests (docs/testing.md): an owner's import document, with fresh credentials. Each
 * suite imports it its own way (in-process, or with the built admin CLI), but all build it here.
 */
import { randomBytes } from 'node:crypto';
import { newCredential } from '../../src/registry/credentials';

export interface AccountSpec {
  id: string;
  platform: 'mt5' | 'ctrader';
  /** Fresh unless given (a test that must know it before the document exists). */
  bridgeToken?: string;
  /** The bridge version the account declares; a current one of its platform unless given. */
  bridgeVersion?: string;
  risk?: Record<string, unknown>;
}

export interface OwnerDocument {
  owner: string;
  secret: string;
  token: string;
  accounts: { id: string; platform: 'mt5' | 'ctrader'; bridgeToken: string }[];
  /** The admin import document: the accounts, one secret linking them all and one poll token granting them all. */
  doc: {
    accounts: (Required<Omit<AccountSpec, 'risk'>> & { owner: string; risk?: Record<string, unknown> })[];
    secrets: { secret: string; owner: string; accounts: string[] }[];
    tokens: { token: string; accounts: string[]; suspendedUntil: null }[];
  };
}

const CURRENT_BRIDGE = { mt5: '2.1.0', ctrader: '1.2.0' } as const;

export function ownerDocument(owner: string, specs: readonly AccountSpec[]): OwnerDocument {
  const accounts = specs.map((s) => ({
    ...s,
    owner,
    bridgeVersion: s.bridgeVersion ?? CURRENT_BRIDGE[s.platform],
    bridgeToken: s.bridgeToken ?? newCredential('brg'),
  }));
  const ids = accounts.map((a) => a.id);
  const secret = newCredential('whsec');
  const token = newCredential('tok');
  return {
    owner,
    secret,
    token,
    accounts: accounts.map((a) => ({ id: a.id, platform: a.platform, bridgeToken: a.bridgeToken })),
    doc: { accounts, secrets: [{ secret, owner, accounts: ids }], tokens: [{ token, accounts: ids, suspendedUntil: null }] },
  };
}

/** The e2e suites' owner: one MT5 and one cTrader account, ids and owner named `<label>-<tag>`. */
export function mt5AndCtraderOwner(label: string): OwnerDocument & { tag: string; mt5: string; ctrader: string } {
  const tag = randomBytes(4).toString('hex');
  const mt5 = `${label}-${tag}-mt5`;
  const ctrader = `${label}-${tag}-ct`;
  const built = ownerDocument(`${label}-owner-${tag}`, [
    { id: mt5, platform: 'mt5' },
    { id: ctrader, platform: 'ctrader' },
  ]);
  return { ...built, tag, mt5, ctrader };
}
