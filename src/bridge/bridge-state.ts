import type { Redis } from 'ioredis';
import { key } from '../registry/records';

/**
 * What the owner's account page says about the bridge's calls besides online/offline (docs/owners.md, "Connecting
 * the account's bridge"): which bridge token a bridge last called with (by its id, the first 12 hex digits of its
 * hash: the page compares it with the current token's to say "waiting for the bridge with the new token"), and the
 * last refusal of a call that is known to be this account's.
 *
 * A 401 names no account: the token is not one of ours. It is the account's only when the token is one the account
 * had before its newest (the registry keeps a replaced token's hash for a week): that is the bridge left behind by a
 * "New bridge token". A token never issued, or replaced more than a week ago, is refused without a trace on any page.
 */
export type BridgeRefusalReason = 'old_token' | 'wrong_platform' | 'invalid_call' | 'bridge_too_old';

export interface BridgeRefusal {
  status: number;
  reason: BridgeRefusalReason;
  message: string;
  at: string;
}

export interface BridgeCallState {
  /** The id of the bridge token the bridge last called with, or null when no bridge ever did. */
  tokenUsed: string | null;
  refusal: BridgeRefusal | null;
}

/** A bridge retrying with an old token calls every second or so: its refusal is written at most this often. */
const REFUSAL_EVERY_MS = 5_000;
const MAX_TRACKED = 100_000;

export class BridgeCallLog {
  private readonly tokenWritten = new Map<string, string>();
  private readonly refusalWritten = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly clock: () => number = Date.now,
  ) {}

  private key(accountId: string): string {
    return key.bridgeState(accountId);
  }

  /** A call authenticated with this token id: written once per token and ingress, not once per call. */
  async tokenUsed(accountId: string, tokenId: string): Promise<void> {
    if (this.tokenWritten.get(accountId) === tokenId) return;
    bounded(this.tokenWritten);
    this.tokenWritten.set(accountId, tokenId);
    // Kept as long as the account (one small hash each): an expiry would need rewriting, which the cache above skips.
    await this.redis.hset(this.key(accountId), 'tokenUsed', tokenId).catch(() => this.tokenWritten.delete(accountId));
  }

  async refused(accountId: string, refusal: Omit<BridgeRefusal, 'at'>): Promise<void> {
    const now = this.clock();
    const slot = `${accountId} ${refusal.reason}`;
    if (now - (this.refusalWritten.get(slot) ?? 0) < REFUSAL_EVERY_MS) return;
    bounded(this.refusalWritten);
    this.refusalWritten.set(slot, now);
    const entry: BridgeRefusal = { ...refusal, message: refusal.message.slice(0, 200), at: new Date(now).toISOString() };
    await this.redis.hset(this.key(accountId), 'refusal', JSON.stringify(entry)).catch(() => undefined);
  }

  async read(accountIds: readonly string[]): Promise<BridgeCallState[]> {
    if (accountIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of accountIds) pipeline.hmget(this.key(id), 'tokenUsed', 'refusal');
    return ((await pipeline.exec()) ?? []).map(([err, v]) => {
      const [tokenUsed, refusal] = err ? [null, null] : (v as (string | null)[]);
      return { tokenUsed: tokenUsed ?? null, refusal: refusal ? (JSON.parse(refusal) as BridgeRefusal) : null };
    });
  }
}

/** The maps grow with the accounts that call this ingress; past a bound they start over (a write too many, no harm). */
function bounded(map: Map<string, unknown>): void {
  if (map.size >= MAX_TRACKED) map.clear();
}
