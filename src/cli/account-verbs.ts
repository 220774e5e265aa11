import { hashCredential, newCredential } from '../registry/credentials';
import { accountSchema, type Account } from '../domain/account';
import type { RedisRegistry } from '../registry/registry';
import { riskSettingsSchema, symbolMapSchema } from '../domain/risk-settings';
import { accountId, boolFlag, CliError, expectPositionals, jsonFlag, parseJsonFlag, requireStr, str, summariseZod } from './args';
import { idOf, ONCE, secretView, table, tokenView, type Verb, type VerbContext } from './verb-context';
import type { OwnerChangeWithdrawal } from '../bridge/owner-change';
import { RedisStopOuts, type StopOutSummary } from '../bridge/stop-outs';

/** The account verbs of the admin CLI (docs/registry.md). */

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
  json: {
    from: string;
    to: string;
    secretsUnlinked: string[];
    tokensUnlinked: string[];
    bridgeToken: 'revoked' | 'replaced';
    commands: OwnerChangeWithdrawal;
  };
}

/**
 * An account went to another owner: the old owner's secrets and tokens stop linking it (the registry already
 * revoked its bridge token, unless a new one was set in the same step), and its commands no bridge has taken are
 * withdrawn (their signals end `account_owner_changed`).
 */
async function afterOwnerChange(ctx: VerbContext, account: Account, from: string, newBridgeToken: boolean): Promise<OwnerChange> {
  const registry = await ctx.registry();
  const unlinked = await registry.unlinkFromOtherOwners(account.id, account.owner);
  const commands = await ctx.withdrawForOwnerChange(account.id, account.region);
  const json = {
    from,
    to: account.owner,
    secretsUnlinked: unlinked.secrets.map(idOf),
    tokensUnlinked: unlinked.tokens.map(idOf),
    bridgeToken: newBridgeToken ? ('replaced' as const) : ('revoked' as const),
    commands,
  };
  const human =
    `owner changed from ${from} to ${account.owner}: unlinked secret(s) ${json.secretsUnlinked.join(', ') || 'none'} and token(s) ${json.tokensUnlinked.join(', ') || 'none'}; ` +
    (newBridgeToken ? 'the bridge token was replaced' : 'the bridge token was revoked (make a new one with --new-bridge-token)') +
    `\n${describeWithdrawal(commands)}`;
  return { human, json };
}

/** What became of the old owner's commands, in an operator's words. */
export function describeWithdrawal(c: OwnerChangeWithdrawal): string {
  const lines = [`withdrew ${c.withdrawn.length} command(s) no bridge had taken (their signals end account_owner_changed)`];
  if (c.handedOut.length > 0)
    lines.push(`${c.handedOut.length} command(s) a bridge had already taken cannot be pulled back; its report decides them: ${c.handedOut.join(', ')}`);
  if (c.notTold.length > 0)
    lines.push(`${c.notTold.length} withdrawn command(s) whose workflow Temporal could not be told of end at their expiry instead: ${c.notTold.join(', ')}`);
  return lines.join('\n');
}

export const accountSet: Verb = {
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
    // An operator's word on the status is final: a first hello no longer unlocks an account an owner added.
    if (changes.status !== undefined) changes.unlockOnHello = false;
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
      if (result === 'owner_changed') moved = await afterOwnerChange(ctx, parsed.data, existing.owner, bridgeToken !== undefined);
    }
    const account = await mustGetAccount(registry, id);
    lines.push(`${existing ? 'updated' : 'created'} account ${id} (${describeAccount(account)})`);
    if (moved) lines.push(moved.human);
    if (bridgeToken) lines.push(`bridge token (replaces any earlier one):`, bridgeToken, ONCE);
    return {
      human: lines.join('\n'),
      json: { created: !existing, account, ...(moved ? { ownerChange: moved.json } : {}), ...(bridgeToken ? { bridgeToken } : {}) },
    };
  },
};

export const accountList_: Verb = {
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

export const accountShow: Verb = {
  words: ['account', 'show'],
  usage: 'account show ID',
  summary: 'Show one account, whether it has a bridge token, and the secrets and tokens linked to it (ids only).',
  options: {},
  async run(args, ctx) {
    const { id, registry, account } = await namedAccount(args, ctx);
    const [hasBridgeToken, secrets, tokens, figures, stopOut] = await Promise.all([
      registry.hasBridgeToken(id),
      registry.findSecretsByHashPrefix(''),
      registry.findTokensByHashPrefix(''),
      ctx.figures().then((store) => store.latest(id)),
      ctx.redis().then((redis) => new RedisStopOuts(redis).latest(id)),
    ]);
    const view = {
      account,
      figures: figures ?? null,
      stopOut: stopOut ?? null,
      bridgeToken: hasBridgeToken,
      secrets: secrets.filter((g) => g.accounts.includes(id)).map(secretView),
      tokens: tokens.filter((g) => g.accounts.includes(id)).map(tokenView),
    };
    const human = [
      `account ${id}`,
      ...Object.entries(account).map(([k, val]) => `  ${k}: ${typeof val === 'object' ? JSON.stringify(val) : String(val)}`),
      `  figures: ${figures ? `${JSON.stringify(figures.figures)} as of ${figures.at} (${Math.round((ctx.now() - Date.parse(figures.at)) / 1000)} s ago)` : 'none yet (the bridge sends them with its reports)'}`,
      `  stopOut: ${stopOut ? describeStopOut(stopOut) : 'none'}`,
      `  bridgeToken: ${hasBridgeToken ? 'set' : 'none'}`,
      `  secrets: ${view.secrets.map((s) => s.id).join(', ') || 'none'}`,
      `  tokens: ${view.tokens.map((t) => (t.suspendedUntil ? `${t.id} (suspended until ${t.suspendedUntil})` : t.id)).join(', ') || 'none'}`,
    ].join('\n');
    return { human, json: view };
  },
};

export function statusVerb(word: 'lock' | 'unlock'): Verb {
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
      // Final: a first hello no longer unlocks an account an owner added (docs/owners.md).
      await registry.updateAccount(id, { status, unlockOnHello: false });
      return { human: `account ${id} is ${status}`, json: await mustGetAccount(registry, id) };
    },
  };
}

export const accountRisk: Verb = {
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

export const accountResetDrawdown: Verb = {
  words: ['account', 'reset-drawdown'],
  usage: 'account reset-drawdown ID',
  summary: "Restart the account's drawdown guard from its equity now (the bridge takes the reset with the next entry).",
  options: {},
  async run(args, ctx) {
    const { id, registry, account } = await namedAccount(args, ctx);
    if (account.risk.lossGuards?.maxDrawdownPercent === undefined)
      throw new CliError(`account ${id} has no drawdown guard (risk.lossGuards.maxDrawdownPercent)`);
    const at = new Date(ctx.now()).toISOString();
    await registry.updateAccount(id, { risk: { ...account.risk, lossGuards: { ...account.risk.lossGuards, drawdownResetAt: at } } });
    return { human: `drawdown guard of ${id} reset at ${at}`, json: await mustGetAccount(registry, id) };
  },
};

/** The account a verb's one ID argument names, checked, with the registry it came from. */
async function namedAccount(args: Parameters<Verb['run']>[0], ctx: Parameters<Verb['run']>[1]) {
  const [id] = expectPositionals(args, ['ID']) as [string];
  accountId(id);
  const registry = await ctx.registry();
  return { id, registry, account: await mustGetAccount(registry, id) };
}

function describeStopOut(s: StopOutSummary): string {
  return (
    `stopped out at ${s.trippedAt}: equity ${s.equity} ${s.currency}, peak ${s.peak} (${s.drawdownPercent.toFixed(2)}% down, limit ${s.maxDrawdownPercent}%); ` +
    `${s.closed} closed, ${s.cancelled} cancelled, ${s.failed} failed (${s.eventId})`
  );
}

function describeAccount(a: Account): string {
  return `${a.owner}, ${a.platform}, ${a.type}, ${a.status}${a.entitled ? '' : ', not entitled'}, region ${a.region}`;
}
