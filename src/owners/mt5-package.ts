import type { CreatedVia } from '../domain/account';
import { Refusal } from '../refusal';
import { ownerAccount, type OwnerAccountsDeps } from './accounts';
import { rotateBridgeToken, type OwnerCredentialsDeps } from './credentials';
import { configUrl, packageFileName, type Mt5Packages } from '../downloads/mt5-package';

/**
 * The MT5 bridge package of one of the owner's MT5 accounts, ready to run (docs/mt5-bridge.md): the service's own
 * package with the service URL and a NEW bridge token in its config. The token is made for this download and is in
 * the zip only (shown once, as every secret); the account's previous token stops working at once.
 */
export interface OwnerMt5PackageDeps {
  accounts: OwnerAccountsDeps;
  credentials: OwnerCredentialsDeps;
  /** The service's address as its bridges reach it (PUBLIC_URL). */
  publicUrl: string;
}

export async function personalMt5Package(
  deps: OwnerMt5PackageDeps,
  packages: Mt5Packages,
  owner: string,
  accountId: string,
  via: CreatedVia,
): Promise<{ fileName: string; zip: Buffer }> {
  const account = await ownerAccount(deps.accounts, owner, accountId);
  if (account.platform !== 'mt5') {
    throw new Refusal('not_accepted_by_account', `Account ${account.id} is a ${account.platform} account: the MT5 bridge package is for MT5 accounts`);
  }
  // Before the token changes: a server without the package must not leave the owner's running bridge locked out.
  const pkg = packages.current();
  if (!pkg) throw new Refusal('not_available', 'The MT5 bridge package is not built on this server; ask the operator (make dist, docs/mt5-bridge.md)');
  if (configUrl(deps.publicUrl) === undefined)
    throw new Refusal('not_available', "This server's PUBLIC_URL cannot go into the bridge's config; ask the operator");
  const { value } = await rotateBridgeToken(deps.credentials, owner, account.id, via, {
    action: 'mt5_package.download',
    detail: { version: pkg.manifest.version, bridgeToken: 'replaced' },
  });
  return { fileName: packageFileName(pkg.manifest.version).replace(/\.zip$/, `-${account.id}.zip`), zip: packages.personal(pkg, deps.publicUrl, value) };
}
