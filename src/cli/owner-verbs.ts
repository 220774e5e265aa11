import type { Redis } from 'ioredis';
import { Refusal } from '../refusal';
import { OwnerStore } from '../owners/owner-store';
import { SessionStore } from '../owners/sessions';
import { ApiKeyStore } from '../owners/api-keys';
import { disableOwner, openSetup, type SetupDeps } from '../owners/sign-in';
import { revokedLines } from '../owners/reset';
import { CliError, expectPositionals, owner as ownerArg } from './args';
import { table, type Verb, type VerbContext } from './verb-context';
import { OwnedAccounts } from '../registry/owned-accounts';

/** The operator's side of owners (docs/owners.md): create one and hand over its setup link, reset, disable, list. */

async function setupDeps(ctx: VerbContext): Promise<SetupDeps & { redis: Redis }> {
  const redis = await ctx.redis();
  return {
    redis,
    owners: new OwnerStore(redis),
    sessions: new SessionStore(redis, ctx.config.owners.sessionTtlSeconds),
    apiKeys: new ApiKeyStore(redis),
    setupTtlSeconds: ctx.config.owners.setupTtlSeconds,
    now: () => new Date(ctx.now()),
  };
}

/** The link's token rides in the fragment: browsers never send it to a server, so no access log or proxy sees it. */
const setupLink = async (ctx: VerbContext, token: string) => `${await ctx.publicUrl()}/dashboard/setup#${token}`;

function setupVerb(reset: boolean): Verb {
  return {
    words: ['owner', reset ? 'reset' : 'create'],
    usage: `owner ${reset ? 'reset' : 'create'} OWNER`,
    summary: reset
      ? "Clear an owner's password and second factor, end their sessions, revoke their API keys and every credential made through them, and print a new setup link."
      : 'Give an owner a sign-in: print a one-time setup link (their accounts, secrets and tokens are the ones with this owner).',
    options: {},
    async run(args, ctx) {
      const [id] = expectPositionals(args, ['OWNER']) as [string];
      ownerArg(id);
      // The signal log finds an owner's signals by OwnerId in Temporal visibility, where a value with a double quote,
      // a backslash or a control character never matches (docs/signal-log.md): such an owner could not see its log.
      if (/["\\\p{Cc}]/u.test(id)) throw new CliError('an owner who signs in needs an id without double quotes, backslashes or control characters');
      const deps = await setupDeps(ctx);
      // An owner of a registry imported before owners signed in: list what is already theirs (a reset reads the list).
      const registry = await ctx.registry();
      await registry.indexOwners();
      let opened;
      try {
        opened = await openSetup({ ...deps, registry }, id, reset);
      } catch (err) {
        if (err instanceof Refusal) throw new CliError(err.message);
        throw err;
      }
      const link = await setupLink(ctx, opened.token);
      return {
        human: [
          `setup link for owner ${id} (expires ${opened.expiresAt}):`,
          link,
          'Send it to the owner over a channel you trust; it works once.',
          ...(reset ? revokedLines(opened.revoked) : []),
        ].join('\n'),
        json: { owner: id, setupLink: link, expiresAt: opened.expiresAt, ...(reset ? { revoked: opened.revoked } : {}) },
      };
    },
  };
}

const ownerDisable: Verb = {
  words: ['owner', 'disable'],
  usage: 'owner disable OWNER',
  summary: 'Stop an owner signing in and end their sessions (their accounts keep trading; lock those separately).',
  options: {},
  async run(args, ctx) {
    const [id] = expectPositionals(args, ['OWNER']) as [string];
    if (!(await disableOwner(await setupDeps(ctx), ownerArg(id)))) throw new CliError(`no owner ${id}`);
    return { human: `owner ${id} is disabled`, json: { owner: id, status: 'disabled' } };
  },
};

const ownerList: Verb = {
  words: ['owner', 'list'],
  usage: 'owner list',
  summary: 'List the owners who have (or were given) a sign-in.',
  options: {},
  async run(_args, ctx) {
    const owners = await (await setupDeps(ctx)).owners.list();
    return {
      human: owners.length === 0 ? 'no owners' : table([['OWNER', 'STATUS', 'CREATED'], ...owners.map((o) => [o.id, o.status, o.createdAt])]),
      json: owners,
    };
  },
};

const ownerAccountCap: Verb = {
  words: ['owner', 'account-cap'],
  usage: 'owner account-cap OWNER [N | default]',
  summary: `Show or set the most accounts an owner may have when adding one on the dashboard (0 to 1000; default: 10).`,
  options: {},
  async run(args, ctx) {
    const [id, value] = args.positionals as [string | undefined, string | undefined];
    if (id === undefined || args.positionals.length > 2) throw new CliError('usage: owner account-cap OWNER [N | default]');
    ownerArg(id);
    const owned = new OwnedAccounts(await ctx.redis());
    if (value !== undefined) {
      if (value !== 'default' && !/^\d{1,4}$/.test(value)) throw new CliError('the cap is a whole number from 0 to 1000, or "default"');
      const cap = value === 'default' ? null : Number(value);
      if (cap !== null && cap > 1000) throw new CliError('the cap is a whole number from 0 to 1000, or "default"');
      await owned.setCap(id, cap);
    }
    const set = await owned.cap(id);
    const cap = set ?? ctx.config.owners.accountCap;
    return {
      human: `owner ${id} may have up to ${cap} accounts${set === null ? ' (the default)' : ''}; accounts an operator makes are counted, never refused`,
      json: { owner: id, accountCap: cap, default: set === null },
    };
  },
};

export const OWNER_VERBS: Verb[] = [setupVerb(false), setupVerb(true), ownerDisable, ownerList, ownerAccountCap];
