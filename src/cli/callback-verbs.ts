import { CallbackRegistrationRefused } from '../callbacks/owner-callbacks';
import { ENDPOINT_ID_PATTERN, eventTypesSchema } from '../callbacks/endpoints';
import { CALLBACK_EVENT_TYPES, type CallbackEventType } from '../domain/callback';
import { CliError, expectPositionals, owner as ownerArg, requireStr, str } from './args';
import { ONCE, plural, table, type Verb } from './verb-context';

/** The owner's callback endpoints (docs/callbacks.md), until owners manage their own through the owner API. */

const endpointId = (value: string): string => {
  if (!ENDPOINT_ID_PATTERN.test(value)) throw new CliError(`${value} is not an endpoint id (ep_ and 16 characters)`);
  return value;
};

/** `--events signal.exit_outcome,position.closed`: the types an endpoint gets; absent: the signals' outcomes (trade events only when listed). */
function eventTypes(value: string | undefined): CallbackEventType[] | undefined {
  if (value === undefined) return undefined;
  const parsed = eventTypesSchema.safeParse(
    value
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t.length > 0),
  );
  if (!parsed.success) throw new CliError(`--events: a comma-separated list of ${CALLBACK_EVENT_TYPES.join(', ')}`);
  return parsed.data;
}

const callbackAdd: Verb = {
  words: ['callback', 'add'],
  usage: 'callback add --owner U --url https://… [--events signal.outcome,signal.exit_outcome,position.closed,…]',
  summary:
    "Register a callback endpoint for the owner's events (the signals' outcomes, or the types --events lists); prints its signing secret (whsec_…) once.",
  options: { owner: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const o = ownerArg(requireStr(args.values, 'owner'));
    const url = requireStr(args.values, 'url');
    const types = eventTypes(str(args.values, 'events'));
    try {
      const { endpoint, secret } = await (await ctx.callbacks()).register(o, url, types);
      return {
        human: `added callback endpoint ${endpoint.id} of ${o}: ${endpoint.url}\n${secret}\n${ONCE}`,
        json: { ...endpoint, owner: o, secret },
      };
    } catch (err) {
      if (err instanceof CallbackRegistrationRefused) throw new CliError(err.message);
      throw err;
    }
  },
};

const callbackList: Verb = {
  words: ['callback', 'list'],
  usage: 'callback list --owner U',
  summary: "List the owner's callback endpoints (never their secrets).",
  options: { owner: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const o = ownerArg(requireStr(args.values, 'owner'));
    const rows = await (await ctx.callbacks()).list(o);
    return {
      human:
        rows.length === 0
          ? `no callback endpoints of ${o}`
          : table([
              ['ID', 'ENABLED', 'CREATED', 'EVENTS', 'URL'],
              ...rows.map((r) => [r.id, r.enabled ? 'yes' : 'no', r.createdAt, r.eventTypes?.join(',') ?? 'outcomes', r.url]),
            ]),
      json: rows,
    };
  },
};

const callbackRemove: Verb = {
  words: ['callback', 'remove'],
  usage: 'callback remove --owner U --id ep_…',
  summary: 'Delete a callback endpoint; deliveries still retrying to it stop at their next attempt.',
  options: { owner: { type: 'string' }, id: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const o = ownerArg(requireStr(args.values, 'owner'));
    const id = endpointId(requireStr(args.values, 'id'));
    if (!(await (await ctx.callbacks()).remove(o, id))) throw new CliError(`${o} has no callback endpoint ${id}`);
    return { human: `removed callback endpoint ${id} of ${o}`, json: { removed: id, owner: o } };
  },
};

/** `callback enable` / `callback disable`: a disabled endpoint keeps its secret but gets nothing until enabled. */
function toggleVerb(enabled: boolean): Verb {
  const word = enabled ? 'enable' : 'disable';
  return {
    words: ['callback', word],
    usage: `callback ${word} --owner U --id ep_…`,
    summary: enabled
      ? 'Deliver to the endpoint again (signals accepted from now on).'
      : 'Stop delivering to the endpoint (retries in flight stop at their next attempt); its secret is kept.',
    options: { owner: { type: 'string' }, id: { type: 'string' } },
    async run(args, ctx) {
      expectPositionals(args, []);
      const o = ownerArg(requireStr(args.values, 'owner'));
      const id = endpointId(requireStr(args.values, 'id'));
      if (!(await (await ctx.callbacks()).setEnabled(o, id, enabled))) throw new CliError(`${o} has no callback endpoint ${id}`);
      return { human: `callback endpoint ${id} of ${o} ${enabled ? 'enabled' : 'disabled'}`, json: { id, owner: o, enabled } };
    },
  };
}

const callbackAttempts: Verb = {
  words: ['callback', 'attempts'],
  usage: 'callback attempts --owner U [--limit N]',
  summary: "The owner's recent delivery attempts, newest first (default 20).",
  options: { owner: { type: 'string' }, limit: { type: 'string' } },
  async run(args, ctx) {
    expectPositionals(args, []);
    const o = ownerArg(requireStr(args.values, 'owner'));
    const rawLimit = str(args.values, 'limit') ?? '20';
    if (!/^\d{1,5}$/.test(rawLimit) || Number(rawLimit) < 1) throw new CliError('--limit must be a whole number from 1');
    const rows = await (await ctx.callbacks()).recentAttempts(o, Number(rawLimit));
    return {
      human:
        rows.length === 0
          ? `no delivery attempts of ${o}`
          : `${plural(rows.length, 'attempt')}\n` +
            table([
              ['AT', 'ENDPOINT', 'ATTEMPT', 'RESULT', 'MS', 'MESSAGE'],
              ...rows.map((r) => [
                r.at,
                r.endpointId,
                String(r.attempt),
                r.status !== null ? `HTTP ${r.status}` : (r.error ?? '-'),
                String(r.durationMs),
                r.messageId,
              ]),
            ]),
      json: rows,
    };
  },
};

export const CALLBACK_VERBS: Verb[] = [callbackAdd, callbackList, toggleVerb(false), toggleVerb(true), callbackRemove, callbackAttempts];
