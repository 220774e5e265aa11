import { z } from 'zod';
import type { Account } from '../domain/account';
import type { AuditEntry } from '../domain/owner';
import { riskSettingsSchema, symbolMapSchema } from '../domain/risk-settings';
import type { AccountFigures } from '../domain/bridge-protocol';
import type { RedisRegistry } from '../registry/registry';
import { asOwnerSees } from './credentials';
import { Refusal } from '../refusal';
import { isOnline, ONLINE_WITHIN_MS, type LastSeenStore } from '../bridge/presence';
import type { BridgeCallLog, BridgeCallState, BridgeRefusal } from '../bridge/bridge-state';
import type { FiguresStore } from '../bridge/figures';
import type { StopOutStore, StopOutSummary } from '../bridge/stop-outs';
import type { OwnerStore } from './owner-store';
import type { CtraderLinks, LinkView } from '../ctrader/links';
import { bridgeUpdateReason } from '../domain/capabilities';

/**
 * An owner's trading accounts as the owner sees them, and the settings the owner edits: the same zod schemas the
 * admin CLI and the import use, effective for the next signal (each signal snapshots the settings when accepted),
 * every change written to the owner's audit log. Another owner's account is "not found", never "forbidden".
 */
export interface OwnerAccountsDeps {
  registry: RedisRegistry;
  owners: OwnerStore;
  lastSeen: LastSeenStore;
  figures: FiguresStore;
  stopOuts: StopOutStore;
  calls: BridgeCallLog;
  /** How long a signal waits for an offline bridge: market entries (unless the account sets its own), other commands. */
  waits: { marketEntryMs: number; otherMs: number };
  now: () => Date;
  /** Accounts linked with Connect with cTrader; absent when it is not configured. */
  links?: CtraderLinks;
}

/**
 * Where the account's bridge stands, as the page walks the owner through it:
 * - no_token: the account has no bridge token (an operator revoked it); make one.
 * - waiting_for_bridge: no bridge has called with any of its tokens yet (a new account: locked until it does).
 * - waiting_for_new_token: a bridge called before, but not yet with the newest token ("New bridge token").
 * - connected: the bridge called with the current token; online or offline says whether it is there now.
 */
type BridgeConnection = 'no_token' | 'waiting_for_bridge' | 'waiting_for_new_token' | 'connected';

export interface OwnerAccountView {
  id: string;
  name: string | null;
  platform: Account['platform'];
  type: Account['type'];
  status: Account['status'];
  /** Locked only until its bridge's first hello (an account its owner added); the hello unlocks it. */
  lockedUntilBridge: boolean;
  bridge: {
    online: boolean;
    /** Online means seen within this long (docs/owners.md). */
    onlineWithinMs: number;
    lastSeenAt: string | null;
    version: string | null;
    features: string[];
    /** Why updating the bridge gains something (actions or features it lacks); null when it runs everything offered. */
    update: string | null;
    hasToken: boolean;
    connection: BridgeConnection;
    /** The last refusal of a call known to be this account's bridge's: 401 old token, 400 wrong platform, 412 too old. */
    lastRefusal: BridgeRefusal | null;
    /** How long a signal accepted now waits for the bridge before it is withdrawn (the 202 is answered regardless). */
    waits: { marketEntryMs: number; otherMs: number };
  };
  figures: (AccountFigures & { at: string }) | null;
  /** The latest stop-out the account's bridge carried out (docs/risk-sizing.md), or null. */
  stopOut: StopOutSummary | null;
  risk: Account['risk'];
  symbols: Account['symbols'];
  /** A cTrader account linked with Connect with cTrader: which one, and whether the owner must authorise again. */
  ctrader: Omit<LinkView, 'owner' | 'accountId'> | null;
}

export async function listOwnerAccounts(deps: OwnerAccountsDeps, owner: string): Promise<OwnerAccountView[]> {
  const accounts = await deps.registry.accountsOf(owner);
  const ids = accounts.map((a) => a.id);
  const [seen, calls] = await Promise.all([deps.lastSeen.lastSeen(accounts), deps.calls.read(ids)]);
  return Promise.all(accounts.map((a, i) => viewOf(deps, a, seen[i], calls[i]!)));
}

export async function ownerAccount(deps: OwnerAccountsDeps, owner: string, id: string): Promise<Account> {
  const account = id.length <= 64 ? await deps.registry.getAccount(id) : null;
  if (account?.owner !== owner) throw new Refusal('not_found', 'No such account');
  return account;
}

export async function showOwnerAccount(deps: OwnerAccountsDeps, owner: string, id: string): Promise<OwnerAccountView> {
  const account = await ownerAccount(deps, owner, id);
  const [[seen], [calls]] = await Promise.all([deps.lastSeen.lastSeen([account]), deps.calls.read([account.id])]);
  return viewOf(deps, account, seen, calls!);
}

async function viewOf(deps: OwnerAccountsDeps, a: Account, seen: Date | undefined, calls: BridgeCallState): Promise<OwnerAccountView> {
  const [figures, tokenId, stopOut, link] = await Promise.all([
    deps.figures.latest(a.id),
    deps.registry.bridgeTokenId(a.id),
    deps.stopOuts.latest(a.id),
    a.platform === 'ctrader' && deps.links ? deps.links.view(a.id) : null,
  ]);
  const connection: BridgeConnection =
    tokenId === null
      ? 'no_token'
      : calls.tokenUsed === tokenId
        ? 'connected'
        : calls.tokenUsed === null && seen === undefined
          ? 'waiting_for_bridge'
          : 'waiting_for_new_token';
  return {
    id: a.id,
    name: a.name ?? null,
    platform: a.platform,
    type: a.type,
    status: a.status,
    lockedUntilBridge: a.status === 'locked' && a.unlockOnHello,
    bridge: {
      online: connection === 'connected' && isOnline(seen, deps.now()),
      onlineWithinMs: ONLINE_WITHIN_MS,
      lastSeenAt: seen?.toISOString() ?? null,
      version: a.bridgeVersion === '0.0.0' ? null : a.bridgeVersion,
      features: [...a.bridgeFeatures],
      update: bridgeUpdateReason(a) ?? null,
      hasToken: tokenId !== null,
      connection,
      lastRefusal: calls.refusal,
      waits: { marketEntryMs: a.risk.maxSignalAgeMs ?? deps.waits.marketEntryMs, otherMs: deps.waits.otherMs },
    },
    figures: figures ? { ...figures.figures, at: figures.at } : null,
    stopOut: stopOut ?? null,
    risk: a.risk,
    symbols: a.symbols,
    ctrader: link && link.owner === a.owner ? linkShown(link) : null,
  };
}

function linkShown({ owner: _owner, accountId: _id, ...shown }: LinkView): OwnerAccountView['ctrader'] {
  return shown;
}

/** Replaces the risk settings or the symbol map (or both) of one of the owner's accounts. */
export async function updateOwnerAccount(deps: OwnerAccountsDeps, owner: string, id: string, body: unknown): Promise<OwnerAccountView> {
  const before = await ownerAccount(deps, owner, id);
  const parsed = settingsChangeSchema.safeParse(body);
  if (!parsed.success) {
    throw new Refusal('invalid', 'Invalid account settings', {
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  const changes = parsed.data;
  await asOwnerSees(() => deps.registry.updateAccount(id, changes, { expectOwner: owner }));
  const entry: AuditEntry = {
    at: deps.now().toISOString(),
    by: 'owner',
    action: 'account.settings',
    accountId: id,
    detail: Object.fromEntries(Object.keys(changes).map((k) => [k, { before: before[k as keyof typeof changes], after: changes[k as keyof typeof changes] }])),
  };
  await deps.owners.audit(owner, entry);
  return showOwnerAccount(deps, owner, id);
}

const settingsChangeSchema = z
  .strictObject({ risk: riskSettingsSchema.optional(), symbols: symbolMapSchema.optional() })
  .refine((c) => c.risk !== undefined || c.symbols !== undefined, 'give risk, symbols or both');
