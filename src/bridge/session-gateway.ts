import type { Account } from '../domain/account';
import { BRIDGE_PROTOCOL_VERSION, type BridgeCommand, type StopOutDirective } from '../domain/bridge-protocol';
import { MULTI_ACCOUNT_CAPABILITY, SESSION_LIMITS, sessionHelloSchema, sessionReportsSchema } from '../domain/bridge-session';
import { hashCredential } from '../registry/credentials';
import { Refusal, REFUSAL_STATUS } from '../refusal';
import { bridgeAccount, bridgeHello, bridgeReports, bridgeTrades, bridgeTradesCall, MAX_COMMANDS_PER_POLL, type GatewayDeps } from './gateway';
import type { SessionStore } from './session-store';
import { takeOrWaitMany } from './session-poll';
import { stopOutDirectiveOf } from './stop-out-events';

/**
 * The multi-account session's use cases (protocol 1.7, docs/bridge-protocol.md "Multi-account sessions"): each account
 * is admitted by its own bridge token and served through the single-account use cases, so what one account's call may
 * do is exactly what its own bridge could do, and nothing of one account reaches another.
 */

export interface SessionDeps {
  gateway: GatewayDeps;
  sessions: SessionStore;
}

/** An account's refusal inside a session call: its status and error, as its own call would have been answered. */
export interface AccountRefusal {
  accountId: string;
  result: 'refused';
  status: number;
  error: string;
  details?: { path: string; message: string }[];
}

/**
 * A waiting long-poll looks this often whether its session still exists (one EXISTS per poll per look): a session
 * lost while the poll waits (Redis lost its data, the registry was re-imported) is answered 401 within this, so the
 * bridge says hello again at once rather than when its 20 s wait would have ended, and its commands are taken.
 */
const SESSION_RECHECK_MS = 1_000;

/** Accounts' hellos admitted at once, a bounded number at a time (each costs a few Redis round trips). */
const HELLOS_AT_ONCE = 50;

function refusalOf(accountId: string, err: unknown): AccountRefusal {
  if (!(err instanceof Refusal)) throw err; // a store failure fails the whole call closed (a resend is safe)
  return { accountId, result: 'refused', status: REFUSAL_STATUS[err.kind], error: err.message, ...(err.extra.details ? { details: err.extra.details } : {}) };
}

async function inBatches<T, R>(items: readonly T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return out;
}

/** `POST /bridge/v1/session/hello`: each account's hello with its own token; a refused account leaves the others served. */
export async function sessionHello(deps: SessionDeps, body: unknown) {
  const parsed = sessionHelloSchema.safeParse(body);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new Refusal('invalid', 'Invalid session hello', { details });
  }
  const admitted = new Map<string, string>();
  const seen = new Set<string>();
  const accounts = await inBatches(parsed.data.accounts, HELLOS_AT_ONCE, async ({ bridgeToken, accountId, ...hello }) => {
    if (seen.has(accountId)) return refusalOf(accountId, new Refusal('invalid', 'This account is already in this hello'));
    seen.add(accountId);
    try {
      const account = await bridgeAccount(deps.gateway, bridgeToken);
      // A token speaks for its own account only: another account's token (of this owner or another) admits nothing.
      if (account.id !== accountId) throw new Refusal('unauthorized', 'Missing or invalid bridge token');
      const answer = await bridgeHello(deps.gateway, account, hello);
      admitted.set(account.id, hashCredential(bridgeToken));
      return { result: 'admitted' as const, ...answer };
    } catch (err) {
      return refusalOf(accountId, err);
    }
  });
  const joined = admitted.size > 0 && parsed.data.session ? await deps.sessions.join(parsed.data.session, admitted) : undefined;
  const session = joined ?? (admitted.size > 0 ? await deps.sessions.create(admitted) : undefined);
  return {
    ...(session ? { session } : {}),
    protocolVersion: BRIDGE_PROTOCOL_VERSION,
    capabilities: [MULTI_ACCOUNT_CAPABILITY],
    limits: SESSION_LIMITS,
    serverTime: new Date().toISOString(),
    accounts,
  };
}

/**
 * The accounts a session serves now (of `named` only, for a call that names its accounts), with their records; an
 * unknown or expired session is a 401.
 */
async function servedAccounts(
  deps: SessionDeps,
  sessionToken: string | undefined,
  named?: readonly string[],
): Promise<{ accounts: Account[]; dropped: string[] }> {
  const found = sessionToken ? await deps.sessions.accounts(sessionToken, named) : undefined;
  if (!found) throw new Refusal('unauthorized', 'Missing or invalid session');
  const records = await deps.gateway.registry.getAccounts(found.served);
  const accounts = records.filter((a): a is Account => a !== null);
  const gone = found.served.filter((_, i) => records[i] === null);
  return { accounts, dropped: [...found.dropped, ...gone] };
}

export interface SessionCommandsAnswer {
  accounts: { accountId: string; commands: BridgeCommand[] }[];
  /** Accounts whose own newer long-poll (of this session's or another bridge) took over. */
  superseded: string[];
  /** Accounts this session no longer serves: their bridge token changed or the account is gone. Say hello for them again. */
  dropped: string[];
  /** The stop-out directive of every served account whose owner has it on (protocol 1.4). */
  stopOuts: Record<string, StopOutDirective>;
  serverTime: string;
}

/** `GET /bridge/v1/session/commands`: one long-poll over every account the session serves. */
export async function sessionCommands(
  deps: SessionDeps,
  sessionToken: string | undefined,
  waitMs: number,
  signal: AbortSignal,
): Promise<SessionCommandsAnswer> {
  const { accounts, dropped } = await servedAccounts(deps, sessionToken);
  const gw = deps.gateway;
  const lost = watchSession(deps.sessions, sessionToken!, signal);
  // Each account waits in the poll as its own bridge's poll would: online on its page while the poll is open.
  const pollsEnded = accounts.map((a) => gw.presence?.pollOpened(a));
  const wait = Math.max(0, Math.min(Number.isFinite(waitMs) ? waitMs : 0, gw.maxWaitMs));
  let taken;
  try {
    taken = await takeOrWaitMany(
      gw.queue,
      accounts.map((a) => a.id),
      MAX_COMMANDS_PER_POLL,
      wait,
      AbortSignal.any([signal, lost.signal]),
    );
  } finally {
    lost.stop();
    for (const ended of pollsEnded) ended?.();
  }
  // Commands taken on the way out are answered still; with none, the bridge learns now that its session is gone.
  if (lost.signal.aborted && taken.commands.size === 0 && !signal.aborted) throw new Refusal('unauthorized', 'Missing or invalid session');
  // An armed account handed commands gets its stop-out of now (the reason bridgeCommands reads it again).
  const armedIds = accounts.filter((a) => taken.commands.has(a.id) && a.risk.lossGuards?.stopOut === true).map((a) => a.id);
  const fresh = new Map((await gw.registry.getAccounts(armedIds)).filter((a): a is Account => a !== null).map((a) => [a.id, a]));
  const stopOuts: Record<string, StopOutDirective> = {};
  for (const a of accounts) {
    const { stopOut } = stopOutDirectiveOf(fresh.get(a.id) ?? a, gw.figuresMaxAgeMs);
    if (stopOut) stopOuts[a.id] = stopOut;
  }
  return {
    accounts: [...taken.commands].map(([accountId, commands]) => ({ accountId, commands })),
    superseded: taken.superseded,
    dropped,
    stopOuts,
    serverTime: new Date().toISOString(),
  };
}

/** Aborts its signal once the session is found gone, looking every SESSION_RECHECK_MS until stopped. */
function watchSession(sessions: SessionStore, sessionToken: string, poll: AbortSignal): { signal: AbortSignal; stop: () => void } {
  const gone = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    timer = setTimeout(() => {
      sessions
        .exists(sessionToken)
        .then((exists) => (exists ? undefined : gone.abort()))
        // A store that fails the look is not a lost session: the next look (or the poll's own end) decides.
        .catch(() => undefined)
        .finally(() => {
          if (!stopped && !gone.signal.aborted && !poll.aborted) look();
        });
    }, SESSION_RECHECK_MS);
  };
  look();
  return {
    signal: gone.signal,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * `POST /bridge/v1/session/reports`: each account's reports body, applied to that account only, through the same use
 * case as its own bridge's call (a commandId of another account is `unknown` there, as always).
 */
export function sessionReports(deps: SessionDeps, sessionToken: string | undefined, body: unknown) {
  return perAccount(deps, sessionToken, body, 'Invalid session reports', bridgeReports);
}

/** `POST /bridge/v1/session/trades`: each account's trade events and book (protocol 1.5), as its own trades call. */
export function sessionTrades(deps: SessionDeps, sessionToken: string | undefined, body: unknown) {
  return perAccount(deps, sessionToken, body, 'Invalid session trades', oneTradesCall);
}

/** An account's trades in a session call hold the account as its own call does: one at a time, the minute's door first. */
async function oneTradesCall(gateway: GatewayDeps, account: Account, body: unknown) {
  const end = await bridgeTradesCall(gateway, account);
  try {
    return await bridgeTrades(gateway, account, body);
  } finally {
    await end().catch(() => undefined);
  }
}

async function perAccount<A extends object>(
  deps: SessionDeps,
  sessionToken: string | undefined,
  body: unknown,
  invalid: string,
  useCase: (gateway: GatewayDeps, account: Account, body: unknown) => Promise<A>,
) {
  const parsed = sessionReportsSchema.safeParse(body);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new Refusal('invalid', invalid, { details });
  }
  const { accounts } = await servedAccounts(
    deps,
    sessionToken,
    parsed.data.accounts.map((a) => a.accountId),
  );
  const served = new Map(accounts.map((a) => [a.id, a]));
  const answers = await Promise.all(
    parsed.data.accounts.map(async ({ accountId, body: own }) => {
      const account = served.get(accountId);
      if (!account) return refusalOf(accountId, new Refusal('unauthorized', 'This session does not serve this account'));
      try {
        return { accountId, result: 'answered' as const, ...(await useCase(deps.gateway, account, own)) };
      } catch (err) {
        return refusalOf(accountId, err);
      }
    }),
  );
  return { accounts: answers };
}
