import { ZodError } from 'zod';
import { hashCredential, newCredential } from '../registry/credentials';
import { importRegistry } from '../registry/import';
import { accountSchema, importDocumentSchema, type Account, type SecretGrant, type TokenGrant } from '../registry/model';
import type { RedisRegistry } from '../registry/registry';
import { isStoreFailure } from '../redis';
import { riskSettingsSchema, symbolMapSchema } from '../risk/settings';
import {
  accountId,
  accountList,
  boolFlag,
  CliError,
  expectPositionals,
  futureIso,
  hashPrefix,
  jsonFlag,
  oneLine,
  owner as ownerArg,
  parseJsonFlag,
  readFile,
  requireStr,
  str,
  summariseZod,
  type OptionSpec,
  type ParsedArgs,
} from './args';

/** What a verb needs at run time. The registry connects on first use, so a usage error never touches Redis. */
export interface VerbContext {
  registry(): Promise<RedisRegistry>;
  /** Reads standard input to the end (for `--secret -` and `--token -`). */
  readStdin(): Promise<string>;
  now(): number;
}

/** A verb's result: human text for a terminal, a value for `--json`. */
export interface VerbResult {
  human: string;
  json: unknown;
}

export interface Verb {
  /** The verb words, e.g. ['secret', 'create']. */
  words: string[];
  usage: string;
  summary: string;
  options: OptionSpec;
  run(args: ParsedArgs, ctx: VerbContext): Promise<VerbResult>;
}

/** The id the CLI shows for a secret or token: the first 12 hex characters of its SHA-256. */
export const ID_LENGTH = 12;
export const idOf = (hash: string): string => hash.slice(0, ID_LENGTH);

const ONCE = 'This is the only time it is shown: store it now.';

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
    return {
      human: [
        `imported ${plural(summary.accounts, 'account')}, ${plural(summary.secrets, 'secret')}, ${plural(summary.tokens, 'token')}`,
        ...summary.ownerChanges.map(
          (c) =>
            `account ${c.accountId} changed owner: unlinked secret(s) ${c.secretsUnlinked.map(idOf).join(', ') || 'none'} and token(s) ${c.tokensUnlinked.map(idOf).join(', ') || 'none'}; its old bridge token no longer works`,
        ),
      ].join('\n'),
      json: summary.ownerChanges.length === 0 ? { accounts: summary.accounts, secrets: summary.secrets, tokens: summary.tokens } : {
        ...summary,
        ownerChanges: summary.ownerChanges.map((c) => ({ ...c, secretsUnlinked: c.secretsUnlinked.map(idOf), tokensUnlinked: c.tokensUnlinked.map(idOf) })),
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
        (revoked.length === 0 ? 'revoked no token' : `revoked token(s) ${revoked.join(', ')}: each granted accounts of several owners (or none); make one token per owner`),
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
  if (owners.length > 1) throw new CliError(`the accounts belong to ${owners.join(', ')}: a token may grant only one owner's accounts; make one token per owner`);
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
  selectCredential<SecretGrant>(args, ctx, 'secret', (r, p) => r.findSecretsByHashPrefix(p), (r, v) => r.authenticateSecret(v));
const selectToken = (args: ParsedArgs, ctx: VerbContext) =>
  selectCredential<TokenGrant>(args, ctx, 'token', (r, p) => r.findTokensByHashPrefix(p), (r, v) => r.authenticateToken(v));

const secretView = (g: SecretGrant) => ({ id: idOf(g.hash), owner: g.owner, accounts: g.accounts });
const tokenView = (g: TokenGrant) => ({ id: idOf(g.hash), owner: g.owner ?? null, accounts: g.accounts, suspendedUntil: g.suspendedUntil });

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

// ---------------------------------------------------------------------------------------------------------------
// accounts

const FLAG_OF: Record<string, string> = {
  id: 'ID',
  owner: '--owner',
  platform: '--platform',
  type: '--type',
  status: '--status',
  entitled: '--entitled',
  region: '--region',
  bridgeVersion: '--bridge-version',
  venue: '--venue',
  risk: '--risk',
  symbols: '--symbols',
};
/** A zod path of an account as the flag it came from: `--risk sizing.lots`, `--platform`. */
const flagPath = (path: PropertyKey[]): string => {
  const [head, ...rest] = path.map(String);
  return [FLAG_OF[head ?? ''] ?? head, rest.join('.')].filter(Boolean).join(' ');
};

async function mustGetAccount(registry: RedisRegistry, id: string): Promise<Account> {
  const account = await registry.getAccount(id);
  if (!account) throw new CliError(`no account ${id}`);
  return account;
}

interface OwnerChange {
  human: string;
  json: { from: string; to: string; secretsUnlinked: string[]; tokensUnlinked: string[]; bridgeToken: 'revoked' | 'replaced' };
}

/**
 * An account went to another owner: the old owner's secrets and tokens stop linking it (the registry already
 * revoked its bridge token, unless a new one was set in the same step).
 */
async function afterOwnerChange(registry: RedisRegistry, id: string, from: string, to: string, newBridgeToken: boolean): Promise<OwnerChange> {
  const unlinked = await registry.unlinkFromOtherOwners(id, to);
  const json = {
    from,
    to,
    secretsUnlinked: unlinked.secrets.map(idOf),
    tokensUnlinked: unlinked.tokens.map(idOf),
    bridgeToken: newBridgeToken ? ('replaced' as const) : ('revoked' as const),
  };
  const human =
    `owner changed from ${from} to ${to}: unlinked secret(s) ${json.secretsUnlinked.join(', ') || 'none'} and token(s) ${json.tokensUnlinked.join(', ') || 'none'}; ` +
    (newBridgeToken ? 'the bridge token was replaced' : 'the bridge token was revoked (make a new one with --new-bridge-token)');
  return { human, json };
}

const accountSet: Verb = {
  words: ['account', 'set'],
  usage:
    'account set ID [--owner U] [--platform mt5|ctrader] [--type standard|copy_master] [--status active|locked] ' +
    '[--entitled true|false] [--region R] [--bridge-version X.Y.Z] [--venue JSON] [--risk JSON] [--symbols JSON] [--new-bridge-token]',
  summary: 'Create or update one account (a new one needs --owner and --platform); --new-bridge-token prints a bridge token once.',
  options: {
    owner: { type: 'string' },
    platform: { type: 'string' },
    type: { type: 'string' },
    status: { type: 'string' },
    entitled: { type: 'string' },
    region: { type: 'string' },
    'bridge-version': { type: 'string' },
    venue: { type: 'string' },
    risk: { type: 'string' },
    symbols: { type: 'string' },
    'new-bridge-token': { type: 'boolean' },
  },
  async run(args, ctx) {
    const [id] = expectPositionals(args, ['ID']) as [string];
    accountId(id);
    const v = args.values;
    const changes: Record<string, unknown> = {};
    for (const [flag, field] of [
      ['owner', 'owner'],
      ['platform', 'platform'],
      ['type', 'type'],
      ['status', 'status'],
      ['region', 'region'],
      ['bridge-version', 'bridgeVersion'],
    ] as const) {
      const value = str(v, flag);
      if (value !== undefined) changes[field] = value;
    }
    const entitled = boolFlag('entitled', str(v, 'entitled'));
    if (entitled !== undefined) changes.entitled = entitled;
    const venue = str(v, 'venue');
    if (venue !== undefined) changes.venue = jsonFlag('venue', venue);
    const risk = str(v, 'risk');
    if (risk !== undefined) changes.risk = parseJsonFlag('risk', risk, riskSettingsSchema);
    const symbols = str(v, 'symbols');
    if (symbols !== undefined) changes.symbols = parseJsonFlag('symbols', symbols, symbolMapSchema);
    const newBridgeToken = v['new-bridge-token'] === true;
    if (Object.keys(changes).length === 0 && !newBridgeToken) throw new CliError('nothing to set: give at least one field flag or --new-bridge-token');

    const registry = await ctx.registry();
    const existing = await registry.getAccount(id);
    if (!existing && (changes.owner === undefined || changes.platform === undefined)) {
      throw new CliError(`account ${id} does not exist: a new account needs --owner and --platform`);
    }
    const parsed = accountSchema.safeParse({ ...(existing ?? {}), ...changes, id });
    if (!parsed.success) throw new CliError(summariseZod(parsed.error, flagPath));
    const bridgeToken = newBridgeToken ? newCredential('brg') : undefined;
    const bridgeTokenHash = bridgeToken ? hashCredential(bridgeToken) : undefined;
    const lines: string[] = [];
    let moved: OwnerChange | undefined;
    if (!existing) {
      await registry.createAccount(parsed.data, bridgeTokenHash);
    } else {
      // Only the fields given are written, in one step: whatever else changed meanwhile (a bridge's hello) stays.
      const given = Object.fromEntries(Object.keys(changes).map((k) => [k, parsed.data[k as keyof Account]])) as Partial<Account>;
      const result = await registry.updateAccount(id, given, { expectOwner: existing.owner, bridgeTokenHash });
      if (result === 'owner_changed') moved = await afterOwnerChange(registry, id, existing.owner, parsed.data.owner, bridgeToken !== undefined);
    }
    const account = await mustGetAccount(registry, id);
    lines.push(`${existing ? 'updated' : 'created'} account ${id} (${describeAccount(account)})`);
    if (moved) lines.push(moved.human);
    if (bridgeToken) lines.push(`bridge token (replaces any earlier one):`, bridgeToken, ONCE);
    return { human: lines.join('\n'), json: { created: !existing, account, ...(moved ? { ownerChange: moved.json } : {}), ...(bridgeToken ? { bridgeToken } : {}) } };
  },
};

const accountList_: Verb = {
  words: ['account', 'list'],
  usage: 'account list',
  summary: 'List every account.',
  options: {},
  async run(args, ctx) {
    expectPositionals(args, []);
    const registry = await ctx.registry();
    const accounts = (await registry.getAccounts(await registry.listAccountIds())).filter((a): a is Account => a !== null);
    return {
      human:
        accounts.length === 0
          ? 'no accounts'
          : table([
              ['ID', 'OWNER', 'PLATFORM', 'TYPE', 'STATUS', 'ENTITLED', 'REGION', 'BRIDGE'],
              ...accounts.map((a) => [a.id, a.owner, a.platform, a.type, a.status, String(a.entitled), a.region, a.bridgeVersion]),
            ]),
      json: accounts,
    };
  },
};

const accountShow: Verb = {
  words: ['account', 'show'],
  usage: 'account show ID',
  summary: 'Show one account, whether it has a bridge token, and the secrets and tokens linked to it (ids only).',
  options: {},
  async run(args, ctx) {
    const [id] = expectPositionals(args, ['ID']) as [string];
    accountId(id);
    const registry = await ctx.registry();
    const account = await mustGetAccount(registry, id);
    const [hasBridgeToken, secrets, tokens] = await Promise.all([
      registry.hasBridgeToken(id),
      registry.findSecretsByHashPrefix(''),
      registry.findTokensByHashPrefix(''),
    ]);
    const view = {
      account,
      bridgeToken: hasBridgeToken,
      secrets: secrets.filter((g) => g.accounts.includes(id)).map(secretView),
      tokens: tokens.filter((g) => g.accounts.includes(id)).map(tokenView),
    };
    const human = [
      `account ${id}`,
      ...Object.entries(account).map(([k, val]) => `  ${k}: ${typeof val === 'object' ? JSON.stringify(val) : String(val)}`),
      `  bridgeToken: ${hasBridgeToken ? 'set' : 'none'}`,
      `  secrets: ${view.secrets.map((s) => s.id).join(', ') || 'none'}`,
      `  tokens: ${view.tokens.map((t) => (t.suspendedUntil ? `${t.id} (suspended until ${t.suspendedUntil})` : t.id)).join(', ') || 'none'}`,
    ].join('\n');
    return { human, json: view };
  },
};

function statusVerb(word: 'lock' | 'unlock'): Verb {
  const status = word === 'lock' ? 'locked' : 'active';
  return {
    words: ['account', word],
    usage: `account ${word} ID`,
    summary: word === 'lock' ? 'Lock an account: signals for it are refused (403) until it is unlocked.' : 'Make a locked account active again.',
    options: {},
    async run(args, ctx) {
      const [id] = expectPositionals(args, ['ID']) as [string];
      accountId(id);
      const registry = await ctx.registry();
      await registry.updateAccount(id, { status });
      return { human: `account ${id} is ${status}`, json: await mustGetAccount(registry, id) };
    },
  };
}

const accountRisk: Verb = {
  words: ['account', 'risk'],
  usage: 'account risk ID --set JSON',
  summary: "Replace an account's risk settings (fields left out take their defaults).",
  options: { set: { type: 'string' } },
  async run(args, ctx) {
    const [id] = expectPositionals(args, ['ID']) as [string];
    accountId(id);
    const risk = parseJsonFlag('set', requireStr(args.values, 'set'), riskSettingsSchema);
    const registry = await ctx.registry();
    await registry.updateAccount(id, { risk });
    return { human: `risk settings of ${id}: ${JSON.stringify(risk)}`, json: await mustGetAccount(registry, id) };
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
];

// ---------------------------------------------------------------------------------------------------------------

function describeAccount(a: Account): string {
  return `${a.owner}, ${a.platform}, ${a.type}, ${a.status}${a.entitled ? '' : ', not entitled'}, region ${a.region}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}
