import { createHash } from 'node:crypto';

/**
 * The idempotency window (spec §5 rules 4-5): a key is scoped to the secret and the route (the per-account URL's
 * account, or the broadcast URL), and holds for the window from acceptance.
 */

/** What the first request answered, kept for the window so a retry gets the same answer. */
export interface AcceptanceRecord {
  signalId: string;
  correlationId: string;
  accountsResolved: number;
  acceptedAt: string;
  /** The request the key was first used with; a different body under the same key is refused. */
  bodyHash: string;
  /** Which accounts ran in which region, so a retry can start a region that failed the first time. */
  regions: Record<string, string[]>;
}

export interface IdempotencyWindows {
  /** Claims the key for the window: true when this request is the first, else the first request's record. */
  claim(digest: string, record: AcceptanceRecord, windowMs: number, deadline?: number): Promise<{ first: true } | { first: false; record: AcceptanceRecord }>;
  /** Whether a request already holds the key (a replay, which is no new work). */
  held(digest: string, deadline?: number): Promise<boolean>;
}

export function idempotencyDigest(secretHash: string, routeAccountId: string | undefined, key: string): string {
  return createHash('sha256')
    .update(`${secretHash}|${routeAccountId ?? '*'}|${key}`)
    .digest('hex');
}

/** A stable hash of the request (the validated signal without its secret, and the route). */
export function requestHash(signal: Record<string, unknown>, routeAccountId: string | undefined): string {
  return createHash('sha256')
    .update(canonicalJson({ route: routeAccountId ?? '*', signal }))
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
