import { z } from 'zod';

/**
 * An owner: the person whose trading accounts, webhook secrets and API tokens these are, who signs in to the
 * dashboard. The id is the owner string accounts, secrets and tokens already carry, so an imported registry's owners
 * keep everything they had when an operator gives them a sign-in (docs/owners.md).
 */

/** Long passphrases welcome; the upper bound keeps a hash request from being a denial of service. */
export const passwordSchema = z.string().min(12, 'at least 12 characters').max(256, 'at most 256 characters');

/** A six-digit code from the owner's authenticator app (RFC 6238, 30 s steps). */
export const totpCodeSchema = z.string().regex(/^\d{6}$/, 'six digits from the authenticator app');

/** pending: created by an operator, setup link not used yet; active: signs in; disabled: an operator stopped it. */
export type OwnerStatus = 'pending' | 'active' | 'disabled';

export interface Owner {
  id: string;
  status: OwnerStatus;
  createdAt: string;
}

/** One change an owner (or an operator) made to the owner's accounts or credentials: what the owner reads back. */
export interface AuditEntry {
  at: string;
  /** bridge: what a bridge did on its own, e.g. a stop-out (docs/risk-sizing.md). */
  by: 'owner' | 'operator' | 'bridge';
  action: string;
  accountId?: string;
  /** What changed, never a secret: settings before and after, a credential's id. */
  detail?: Record<string, unknown>;
}
