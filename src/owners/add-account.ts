import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { accountSchema, type CreatedVia } from '../domain/account';
import { madeBy } from './credentials';
import { hashCredential, newCredential } from '../registry/credentials';
import type { OwnedAccounts } from '../registry/owned-accounts';
import { Refusal } from '../refusal';
import { showOwnerAccount, type OwnerAccountsDeps, type OwnerAccountView } from './accounts';

/**
 * An owner adds a trading account (docs/owners.md, "Adding an account"): a name, the platform and the type. The id is
 * made here (random: nobody can guess another owner's), the account comes with its bridge token (shown once, in this
 * answer only) and is created locked until a bridge with that token says hello. The cap on the owner's accounts is
 * checked and charged in the same Redis step as the write (src/registry/owned-accounts.ts): at the cap, nothing is
 * made, not even an audit entry.
 */
export interface AddAccountDeps extends OwnerAccountsDeps {
  owned: OwnedAccounts;
  /** The cap for an owner the operator has set none for (DEFAULT_OWNER_ACCOUNT_CAP). */
  defaultCap: number;
}

export const addAccountSchema = z.strictObject({
  name: z.string().trim().min(1, 'a name of 1 to 64 characters').max(64, 'a name of 1 to 64 characters'),
  platform: z.enum(['mt5', 'ctrader'], { error: 'mt5 or ctrader' }),
  type: z.enum(['standard', 'copy_master'], { error: 'standard or copy_master' }).default('standard'),
});

/** 96 random bits, in the characters an account id may have: unguessable, and short enough for a webhook URL. */
const newAccountId = (): string => `acc_${randomBytes(12).toString('base64url')}`;

export async function addOwnerAccount(
  deps: AddAccountDeps,
  owner: string,
  body: unknown,
  via: CreatedVia,
): Promise<{ account: OwnerAccountView; bridgeToken: string }> {
  const parsed = addAccountSchema.safeParse(body);
  if (!parsed.success) {
    const details = parsed.error.issues.flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => ({ path: k, message: 'not a field of an account' }))
        : [{ path: i.path.join('.') || 'body', message: i.message }],
    );
    throw new Refusal('invalid', `Invalid account: ${details.map((d) => d.path).join(', ')}`, { details });
  }
  const { name, platform, type } = parsed.data;
  const account = accountSchema.parse({ id: newAccountId(), owner, name, platform, type, status: 'locked', unlockOnHello: true });
  const bridgeToken = newCredential('brg');
  const added = await deps.owned.add(account, hashCredential(bridgeToken), deps.defaultCap, madeBy(deps, via));
  if (added.result === 'at_cap') {
    throw new Refusal('at_cap', `You have ${added.count} accounts, the most allowed (${added.cap}); ask your operator to raise the cap`, {
      limit: added.cap,
    });
  }
  await deps.owners.audit(owner, {
    at: deps.now().toISOString(),
    by: 'owner',
    action: 'account.create',
    accountId: account.id,
    detail: { name, platform, type },
  });
  return { account: await showOwnerAccount(deps, owner, account.id), bridgeToken };
}
