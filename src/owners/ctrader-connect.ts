import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { accountSchema, type Account } from '../domain/account';
import type { CtidTraderAccount } from '../ctrader/messages';
import { CtraderLinks, type LinkTokens } from '../ctrader/links';
import { exchangeCode, TokenEndpointError, authorizationUrl, type OAuthApplication } from '../ctrader/oauth';
import { createAccountsUnderCap, undoCreatedAccounts } from '../registry/capped-create';
import { hashCredential, newCredential, sameHash } from '../registry/credentials';
import type { RedisRegistry } from '../registry/registry';
import type { SecretBox } from '../secret-box';
import { Refusal } from '../refusal';
import type { OwnerStore } from './owner-store';
import { ownerKeys } from '../redis-keys';

/**
 * "Connect with cTrader" (docs/owners.md): the OAuth 2.0 authorisation-code flow of Spotware's Open API, for one
 * owner in one dashboard session.
 * 1. begin: a `state` (random, 256 bits) bound to the owner's session, single use, 10 minutes; Redis keeps only its
 *    SHA-256. The owner's browser goes to cTrader's granting-access page.
 * 2. complete: the browser is back with `code` and `state`; the state is taken (deleted) whatever follows, checked
 *    against the session, the code exchanged server-side, the token's accounts listed over Open API. The tokens wait,
 *    sealed, for the owner's pick (10 minutes, this session only); nothing is created yet.
 * 3. link: the picked accounts are created (all or none, under the owner's account cap) or, when already the
 *    owner's, given the new tokens; the connector picks them up from Redis.
 */
export interface CtraderConnectDeps {
  redis: Redis;
  registry: RedisRegistry;
  owners: OwnerStore;
  links: CtraderLinks;
  /** Seals the tokens while they wait for the owner's pick (the same box as the links). */
  box: SecretBox;
  app: OAuthApplication;
  /** ProtoOAGetAccountListByAccessTokenReq over Open API. */
  listAccounts: (accessToken: string) => Promise<CtidTraderAccount[]>;
  /** Most accounts an owner may have when the operator set none for them (DEFAULT_OWNER_ACCOUNT_CAP; docs/owners.md). */
  accountCap: number;
  now: () => Date;
  fetch?: typeof fetch;
}

const TEN_MINUTES = 600;
const key = {
  state: ownerKeys.ctraderOAuthState,
  pending: ownerKeys.ctraderOAuthPending,
};

interface StateRecord {
  owner: string;
  session: string;
}

interface PendingRecord {
  owner: string;
  session: string;
  accounts: CtidTraderAccount[];
  /** The tokens, sealed, bound to this pending id. */
  tokens: string;
}

/** The owner's pick: what comes back from cTrader, as the dashboard lists it. */
export interface OfferedAccount {
  ctidTraderAccountId: number;
  environment: 'demo' | 'live';
  traderLogin: number | null;
  broker: string | null;
  /** The owner's account it is linked to already (linking it again gives it the new tokens). */
  linkedTo: string | null;
}

const sessionHash = (sessionToken: string | undefined) => {
  if (!sessionToken) throw new Refusal('forbidden', 'Connect with cTrader from a dashboard session (sign in), not with an API key');
  return hashCredential(sessionToken);
};

export async function beginConnect(
  deps: CtraderConnectDeps,
  owner: string,
  sessionToken: string | undefined,
): Promise<{ authorizeUrl: string; expiresAt: string }> {
  const session = sessionHash(sessionToken);
  const state = randomBytes(32).toString('base64url');
  const record: StateRecord = { owner, session };
  await deps.redis.set(key.state(hashCredential(state)), JSON.stringify(record), 'EX', TEN_MINUTES);
  return { authorizeUrl: authorizationUrl(deps.app, state), expiresAt: new Date(deps.now().getTime() + TEN_MINUTES * 1000).toISOString() };
}

const callbackSchema = z.strictObject({
  code: z.string().min(1).max(2048),
  state: z.string().regex(/^[A-Za-z0-9_-]{20,128}$/, 'the state this service made'),
});

const AGAIN = 'click Connect with cTrader again';

export async function completeConnect(
  deps: CtraderConnectDeps,
  owner: string,
  sessionToken: string | undefined,
  body: unknown,
): Promise<{ connection: string; accounts: OfferedAccount[]; expiresAt: string }> {
  const session = sessionHash(sessionToken);
  const parsed = callbackSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error);
  // Taken whatever follows: a state is good for one try, so a replayed or stolen one is worth nothing.
  const raw = await deps.redis.getdel(key.state(hashCredential(parsed.data.state)));
  if (raw === null) throw new Refusal('invalid', `This cTrader authorisation was already used or is older than 10 minutes; ${AGAIN}`);
  const state = JSON.parse(raw) as StateRecord;
  if (state.owner !== owner || !sameHash(state.session, session))
    throw new Refusal('invalid', `This cTrader authorisation was started in another session; ${AGAIN} here`);
  let tokens: LinkTokens;
  try {
    tokens = await exchangeCode(deps.app, parsed.data.code, deps.fetch, () => deps.now().getTime());
  } catch (err) {
    if (!(err instanceof TokenEndpointError)) throw err;
    if (err.kind === 'refused') throw new Refusal('invalid', `${err.message}. The code is good for one minute and one use; ${AGAIN}`);
    throw new Refusal('upstream_unavailable', `${err.message}; nothing was linked, ${AGAIN}`);
  }
  let accounts: CtidTraderAccount[];
  try {
    accounts = await deps.listAccounts(tokens.accessToken);
  } catch {
    throw new Refusal('upstream_unavailable', `cTrader Open API did not list the accounts of this authorisation; nothing was linked, ${AGAIN}`);
  }
  if (accounts.length === 0)
    throw new Refusal('invalid', `This cTrader ID gave access to no trading account; ${AGAIN} and tick at least one account on cTrader's page`);
  const id = randomBytes(32).toString('base64url');
  const pending: PendingRecord = { owner, session, accounts, tokens: deps.box.seal(JSON.stringify(tokens), `ctrader-pending:${hashCredential(id)}`) };
  await deps.redis.set(key.pending(hashCredential(id)), JSON.stringify(pending), 'EX', TEN_MINUTES);
  return { connection: id, accounts: await offered(deps, owner, accounts), expiresAt: new Date(deps.now().getTime() + TEN_MINUTES * 1000).toISOString() };
}

async function offered(deps: CtraderConnectDeps, owner: string, accounts: CtidTraderAccount[]): Promise<OfferedAccount[]> {
  return Promise.all(
    accounts.map(async (a) => {
      const linked = await deps.links.accountOf(a.ctidTraderAccountId);
      const mine = linked ? (await deps.registry.getAccount(linked))?.owner === owner : false;
      return {
        ctidTraderAccountId: a.ctidTraderAccountId,
        environment: a.isLive ? ('live' as const) : ('demo' as const),
        traderLogin: a.traderLogin ?? null,
        broker: a.brokerTitleShort ?? null,
        linkedTo: mine ? linked : null,
      };
    }),
  );
}

const linkSchema = z.strictObject({
  connection: z.string().regex(/^[A-Za-z0-9_-]{20,128}$/),
  accounts: z.array(z.number().int().positive()).min(1, 'pick at least one account').max(100),
});

export interface LinkedAccount {
  accountId: string;
  ctidTraderAccountId: number;
  environment: 'demo' | 'live';
  created: boolean;
}

export async function linkPickedAccounts(
  deps: CtraderConnectDeps,
  owner: string,
  sessionToken: string | undefined,
  body: unknown,
): Promise<{ linked: LinkedAccount[] }> {
  const session = sessionHash(sessionToken);
  const parsed = linkSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error);
  const pendingKey = key.pending(hashCredential(parsed.data.connection));
  const raw = await deps.redis.get(pendingKey);
  const pending = raw === null ? null : (JSON.parse(raw) as PendingRecord);
  if (!pending || pending.owner !== owner || !sameHash(pending.session, session))
    throw new Refusal('invalid', `This list of cTrader accounts is gone (10 minutes, one session); ${AGAIN}`);
  const picked = [...new Set(parsed.data.accounts)].map((ctid) => {
    const a = pending.accounts.find((x) => x.ctidTraderAccountId === ctid);
    if (!a) throw new Refusal('invalid', 'Invalid request', { details: [{ path: 'accounts', message: `${ctid} is not one of the accounts cTrader listed` }] });
    return a;
  });
  const tokens = JSON.parse(deps.box.open(pending.tokens, `ctrader-pending:${hashCredential(parsed.data.connection)}`)) as LinkTokens;
  const offers = await offered(deps, owner, picked);
  for (const o of offers) {
    const other = o.linkedTo === null ? await deps.links.accountOf(o.ctidTraderAccountId) : null;
    if (other !== null) throw new Refusal('conflict', `cTrader account ${o.traderLogin ?? o.ctidTraderAccountId} is linked to another owner's account here`);
  }
  const fresh = offers.filter((o) => o.linkedTo === null);
  const made = await createCtraderAccounts(
    deps,
    owner,
    fresh.map((o) => ({ id: `ctrader-${o.ctidTraderAccountId}` })),
  );
  const linked: LinkedAccount[] = [];
  try {
    for (const o of offers) {
      const accountId = o.linkedTo ?? `ctrader-${o.ctidTraderAccountId}`;
      const bridgeToken = made.get(accountId);
      await deps.links.save(
        { accountId, owner, ctidTraderAccountId: o.ctidTraderAccountId, environment: o.environment, traderLogin: o.traderLogin, broker: o.broker },
        tokens,
        bridgeToken,
        deps.now(),
      );
      linked.push({ accountId, ctidTraderAccountId: o.ctidTraderAccountId, environment: o.environment, created: bridgeToken !== undefined });
    }
  } catch (err) {
    // Nothing half-made: the accounts this call created go again with their links.
    for (const accountId of made.keys()) await deps.links.remove(accountId).catch(() => undefined);
    await undoCreatedAccounts(deps.redis, owner, [...made.keys()]).catch(() => undefined);
    throw err;
  }
  await deps.redis.del(pendingKey);
  for (const l of linked)
    await deps.owners.audit(owner, {
      at: deps.now().toISOString(),
      by: 'owner',
      action: l.created ? 'ctrader.link' : 'ctrader.reauthorise',
      accountId: l.accountId,
      detail: { ctidTraderAccountId: l.ctidTraderAccountId, environment: l.environment },
    });
  return { linked };
}

/**
 * Creates the owner's new cTrader accounts, all or none, under the account cap, each with a new bridge token (for the
 * connector only; returned by account id). The one place this branch creates accounts: the owner's own "Add
 * account" (POST /v1/owner/accounts) is meant to share it.
 */
async function createCtraderAccounts(deps: CtraderConnectDeps, owner: string, specs: readonly { id: string }[]): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  if (specs.length === 0) return tokens;
  const batch = specs.map(({ id }) => {
    const bridgeToken = newCredential('brg');
    tokens.set(id, bridgeToken);
    const account: Account = accountSchema.parse({ id, owner, platform: 'ctrader' });
    return { account, bridgeTokenHash: hashCredential(bridgeToken) };
  });
  const result = await createAccountsUnderCap(deps.redis, owner, deps.accountCap, batch);
  if (result.created) return tokens;
  if (result.reason === 'at_cap')
    throw new Refusal(
      'conflict',
      `You have ${result.count} accounts and may have at most ${result.cap}; linking ${specs.length} more would pass that. Pick fewer, or ask your operator to raise the cap`,
    );
  throw new Refusal('conflict', `An account named ${result.accountId} exists already; ask the operator`);
}

function invalid(error: z.ZodError): Refusal {
  return new Refusal('invalid', 'Invalid request', { details: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) });
}
