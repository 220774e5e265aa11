import { ZodError } from 'zod';
import { hashCredential, newCredential } from '../registry/credentials';
import { importRegistry } from '../registry/import';
import { importDocumentSchema, type SecretGrant, type TokenGrant } from '../domain/account';
import type { RedisRegistry } from '../registry/registry';
import { isStoreFailure } from '../redis';
import { accountList_, accountResetDrawdown, accountRisk, accountSet, accountShow, describeWithdrawal, statusVerb } from './account-verbs';
import type { OwnerChangeWithdrawal } from '../bridge/owner-change';
import {
  accountList,
  CliError,
  expectPositionals,
  futureIso,
  hashPrefix,
  oneLine,
  owner as ownerArg,
  readFile,
  requireStr,
  str,
  summariseZod,
  type ParsedArgs,
} from './args';
import { OWNER_VERBS } from './owner-verbs';
import { CALLBACK_VERBS } from './callback-verbs';
import { tradesRepairClock } from './trades-verbs';
import { idOf, ONCE, plural, secretView, table, tokenView, type Verb, type VerbContext } from './verb-context';

export type { Verb, VerbContext } from './verb-context';

// ---------------------------------------------------------------------------------------------------------------
// import

const importVerb: Verb = {
  words: ['import'],
  usage: 'import FILE',
  summary: 'Upsert the accounts, secrets and tokens of a JSON import document (docs/registry.md).',
  options: {},
  async run(args, ctx) {
    const [file] = expectPositionals(args, ['FILE']) as [string];
    let input: unknown;
    try {
      input = JSON.parse(readFile(file));
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`${file} is not valid JSON: ${oneLine((err as Error).message)}`);
    }
    const parsed = importDocumentSchema.safeParse(input);
    if (!parsed.success) throw new CliError(`${file}: ${summariseZod(parsed.error)}`);
    const registry = await ctx.registry();
    let summary;
    try {
      summary = await importRegistry(registry, parsed.data);
    } catch (err) {
      // The link rules of importRegistry (unknown account, another owner's account) are validation errors.
      if (err instanceof ZodError) throw new CliError(`${file}: ${summariseZod(err)}`);
      if (err instanceof Error && !isStoreFailure(err)) throw new CliError(`${file}: ${oneLine(err.message)}; nothing was imported`);
      throw err;
    }
    const commands: OwnerChangeWithdrawal[] = [];
    for (const c of summary.ownerChanges) {
      const region = parsed.data.accounts.find((a) => a.id === c.accountId)?.region ?? 'default';
      commands.push(await ctx.withdrawForOwnerChange(c.accountId, region));
    }
    return {
      human: [
        `imported ${plural(summary.accounts, 'account')}, ${plural(summary.secrets, 'secret')}, ${plural(summary.tokens, 'token')}`,
        ...summary.ownerChanges.map(
          (c, i) =>
            `account ${c.accountId} changed owner: unlinked secret(s) ${c.secretsUnlinked.map(idOf).join(', ') || 'none'} and token(s) ${c.tokensUnlinked.map(idOf).join(', ') || 'none'}; its old bridge token no longer works\n${describeWithdrawal(commands[i]!)}`,
        ),
      ].join('\n'),
      json:
        summary.ownerChanges.length === 0
          ? { accounts: summary.accounts, secrets: summary.secrets, tokens: summary.tokens }
          : {
              ...summary,
              ownerChanges: summary.ownerChanges.map((c, i) => ({
                ...c,
                commands: commands[i],
                secretsUnlinked: c.secretsUnlinked.map(idOf),
                tokensUnlinked: c.tokensUnlinked.map(idOf),
              })),
            },
    };
  },
};

const migrateVerb: Verb = {
  words: ['migrate'],
  usage: 'migrate',
  summary: 'Bring a registry written by an earlier version up to date (idempotent; docs/registry.md).',
  options: {},
  async run(args, ctx) {
    expectPositionals(args, []);
    const result = await (await ctx.registry()).migrate();
    const revoked = result.tokensRevoked.map(idOf);
    return {
      human:
        `converted ${plural(result.accountsConverted, 'account')} to field records; gave ${plural(result.tokensOwned, 'token')} an owner; ` +
        (revoked.length === 0
          ? 'revoked no token'
          : `revoked token(s) ${revoked.join(', ')}: each granted accounts of several owners (or none); make one token per owner`),
      json: { ...result, tokensRevoked: revoked },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------
// secrets

/**
 * The rule of the import document: every linked account exists and belongs to the secret's or token's owner. The
 * registry checks it again in the same step as the write; this check gives the clearer message.
 */
async function checkLinks(registry: RedisRegistry, ids: string[], owner: string, kind: 'secret' | 'token' = 'secret'): Promise<void> {
  const accounts = await registry.getAccounts(ids);
  ids.forEach((id, i) => {
    const account = accounts[i];
    if (!account) throw new CliError(`unknown account ${id}`);
    if (account.owner !== owner) {
      throw new CliError(`account ${id} belongs to another owner: a ${kind} of ${owner} may link only ${owner}'s accounts`);
    }
  });
}

/** The one owner of these accounts, for a token made without --owner. */
async function soleOwner(registry: RedisRegistry, ids: string[]): Promise<string> {
  if (ids.length === 0) throw new CliError('a token without accounts needs --owner');
  const accounts = await registry.getAccounts(ids);
  const missing = ids.find((_, i) => !accounts[i]);
  if (missing !== undefined) throw new CliError(`unknown account ${missing}`);
  const owners = [...new Set(accounts.map((a) => a!.owner))];
  if (owners.length > 1)
    throw new CliError(`the accounts belong to ${owners.join(', ')}: a token may grant only one owner's accounts; make one token per owner`);
  return owners[0]!;
}

async function one<T>(kind: string, id: string, found: T[]): Promise<T> {
  if (found.length === 0) throw new CliError(`no ${kind} with id ${id}`);
  if (found.length > 1) throw new CliError(`id ${id} matches ${found.length} ${kind}s: give more characters`);
  return found[0]!;
}

/** `--id HASHPREFIX` or `--<flag> VALUE` (`-` reads it from stdin), exactly one of the two. */
async function selectCredential<T>(
  args: ParsedArgs,
  ctx: VerbContext,
  kind: 'secret' | 'token',
  byPrefix: (registry: RedisRegistry, prefix: string) => Promise<T[]>,
  byValue: (registry: RedisRegistry, value: string) => Promise<T | null>,
): Promise<T> {
  const id = str(args.values, 'id');
  let value = str(args.values, kind);
  if ((id === undefined) === (value === undefined)) throw new CliError(`give exactly one of --id HASHPREFIX and --${kind} VALUE`);
  if (id !== undefined) {
    const prefix = hashPrefix(id);
    return one(kind, prefix, await byPrefix(await ctx.registry(), prefix));
  }
  if (value === '-') value = (await ctx.readStdin()).trim();
  if (!value) throw new CliError(`--${kind} is empty`);
  const found = await byValue(await ctx.registry(), value);
  // The value itself is never echoed back.
  if (!found) throw new CliError(`no such ${kind}`);
  return found;
}

const selectSecret = (args: ParsedArgs, ctx: VerbContext) =>
  selectCredential<SecretGrant>(
    args,
    ctx,
    'secret',
    (r, p) => r.findSecretsByHashPrefix(p),
    (r, v) => r.authenticateSecret(v),
  );
const selectToken = (args: ParsedArgs, ctx: VerbContext) =>
  selectCredential<TokenGrant>(
    args,
    ctx,
    'token',
    (r, p) => r.findTokensByHashPrefix(p),
    (r, v) => r.authenticateToken(v),
  );

const secretCreate: Verb = {
  words: ['secret', 'create'],
  usage: 'secret create --owner U --accounts a,b',
  summary: "Make a webhook secret linking some of the owner's accounts; prints it once.",
  options: { owner: { type: 'string' }, accounts: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const o = ownerArg(requireStr(args.values, 'owner'));
    const accounts = accountList(str(args.values, 'accounts'));
    const registry = await ctx.registry();
    await checkLinks(registry, accounts, o);
    const secret = newCredential('whsec');
    const grant: SecretGrant = { hash: hashCredential(secret), owner: o, accounts };
    await registry.putSecret(grant);
    return {
      human: `created secret ${idOf(grant.hash)} of ${o} for ${accounts.join(', ')}\n${secret}\n${ONCE}`,
      json: { ...secretView(grant), secret },
    };
  },
};

const secretRotate: Verb = {
  words: ['secret', 'rotate'],
  usage: 'secret rotate (--id HASHPREFIX | --secret S)',
  summary: 'Replace a secret by a new one for the same owner and accounts; the old one stops working at once.',
  options: { id: { type: 'string' }, secret: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const old = await selectSecret(args, ctx);
    const registry = await ctx.registry();
    await checkLinks(registry, old.accounts, old.owner);
    const secret = newCredential('whsec');
    const grant: SecretGrant = { hash: hashCredential(secret), owner: old.owner, accounts: old.accounts };
    await registry.putSecret(grant);
    await registry.deleteSecret(old.hash);
    return {
      human: `rotated secret ${idOf(old.hash)} to ${idOf(grant.hash)} (owner ${grant.owner}, accounts ${grant.accounts.join(', ')})\n${secret}\n${ONCE}`,
      json: { ...secretView(grant), secret, replaced: idOf(old.hash) },
    };
  },
};

const secretRevoke: Verb = {
  words: ['secret', 'revoke'],
  usage: 'secret revoke (--id HASHPREFIX | --secret S)',
  summary: 'Delete a secret; signals sent with it are refused from now on.',
  options: { id: { type: 'string' }, secret: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const grant = await selectSecret(args, ctx);
    await (await ctx.registry()).deleteSecret(grant.hash);
    return { human: `revoked secret ${idOf(grant.hash)} of ${grant.owner}`, json: { revoked: idOf(grant.hash), owner: grant.owner } };
  },
};

const secretList: Verb = {
  words: ['secret', 'list'],
  usage: 'secret list [--owner U]',
  summary: 'List secrets by id, owner and linked accounts (never the secrets).',
  options: { owner: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const o = str(args.values, 'owner');
    const grants = (await (await ctx.registry()).findSecretsByHashPrefix('')).filter((g) => o === undefined || g.owner === o);
    const rows = grants.map(secretView);
    return {
      human: rows.length === 0 ? 'no secrets' : table([['ID', 'OWNER', 'ACCOUNTS'], ...rows.map((r) => [r.id, r.owner, r.accounts.join(',')])]),
      json: rows,
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------
// tokens

const tokenCreate: Verb = {
  words: ['token', 'create'],
  usage: 'token create [--owner U] --accounts a,b [--suspended-until ISO]',
  summary: "Make an API token that reads these accounts' outcomes (all of one owner); prints it once.",
  options: { owner: { type: 'string' }, accounts: { type: 'string' }, 'suspended-until': { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const given = str(args.values, 'owner');
    const accounts = accountList(str(args.values, 'accounts'));
    const until = str(args.values, 'suspended-until');
    const suspendedUntil = until === undefined ? null : futureIso('suspended-until', until, ctx.now());
    const registry = await ctx.registry();
    const o = given === undefined ? await soleOwner(registry, accounts) : ownerArg(given);
    await checkLinks(registry, accounts, o, 'token');
    const token = newCredential('tok');
    const grant: TokenGrant = { hash: hashCredential(token), owner: o, accounts, suspendedUntil };
    await registry.putToken(grant);
    const suspended = suspendedUntil ? `, suspended until ${suspendedUntil}` : '';
    return {
      human: `created token ${idOf(grant.hash)} of ${o} for ${accounts.join(', ')}${suspended}\n${token}\n${ONCE}`,
      json: { ...tokenView(grant), token },
    };
  },
};

/** Changes the token as it is now: one revoked meanwhile stays revoked. */
async function changeToken(grant: TokenGrant, ctx: VerbContext, change: (g: TokenGrant) => TokenGrant): Promise<TokenGrant> {
  const after = await (await ctx.registry()).modifyToken(grant.hash, change);
  if (!after) throw new CliError(`token ${idOf(grant.hash)} was revoked meanwhile`);
  return after;
}

const tokenSuspend: Verb = {
  words: ['token', 'suspend'],
  usage: 'token suspend (--id HASHPREFIX | --token T) --until ISO',
  summary: 'Suspend a token until a time: the status poll answers token_suspended until then.',
  options: { id: { type: 'string' }, token: { type: 'string' }, until: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const until = futureIso('until', requireStr(args.values, 'until'), ctx.now());
    const grant = await changeToken(await selectToken(args, ctx), ctx, (g) => ({ ...g, suspendedUntil: until }));
    return { human: `suspended token ${idOf(grant.hash)} until ${until}`, json: tokenView(grant) };
  },
};

const tokenUnsuspend: Verb = {
  words: ['token', 'unsuspend'],
  usage: 'token unsuspend (--id HASHPREFIX | --token T)',
  summary: 'Lift a suspension at once.',
  options: { id: { type: 'string' }, token: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const grant = await changeToken(await selectToken(args, ctx), ctx, (g) => ({ ...g, suspendedUntil: null }));
    return { human: `token ${idOf(grant.hash)} is not suspended`, json: tokenView(grant) };
  },
};

const tokenRevoke: Verb = {
  words: ['token', 'revoke'],
  usage: 'token revoke (--id HASHPREFIX | --token T)',
  summary: 'Delete a token.',
  options: { id: { type: 'string' }, token: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const grant = await selectToken(args, ctx);
    await (await ctx.registry()).deleteToken(grant.hash);
    return { human: `revoked token ${idOf(grant.hash)}`, json: { revoked: idOf(grant.hash) } };
  },
};

const tokenList: Verb = {
  words: ['token', 'list'],
  usage: 'token list [--owner U]',
  summary: 'List tokens by id, owner, accounts and suspension (never the tokens).',
  options: { owner: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const o = str(args.values, 'owner');
    const rows = (await (await ctx.registry()).findTokensByHashPrefix('')).filter((g) => o === undefined || g.owner === o).map(tokenView);
    return {
      human:
        rows.length === 0
          ? 'no tokens'
          : table([['ID', 'OWNER', 'ACCOUNTS', 'SUSPENDED UNTIL'], ...rows.map((r) => [r.id, r.owner ?? '-', r.accounts.join(','), r.suspendedUntil ?? '-'])]),
      json: rows,
    };
  },
};

export const VERBS: Verb[] = [
  importVerb,
  migrateVerb,
  secretCreate,
  secretRotate,
  secretRevoke,
  secretList,
  tokenCreate,
  tokenSuspend,
  tokenUnsuspend,
  tokenRevoke,
  tokenList,
  accountSet,
  accountList_,
  accountShow,
  statusVerb('lock'),
  statusVerb('unlock'),
  accountRisk,
  accountResetDrawdown,
  ...OWNER_VERBS,
  ...CALLBACK_VERBS,
  tradesRepairClock,
];
