import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook secrets, API tokens and bridge tokens: random, long, stored only as their SHA-256.
 * They carry 256 bits of randomness, so an unsalted hash cannot be reversed by guessing.
 */

export type CredentialKind = 'whsec' | 'tok' | 'brg';

export function newCredential(kind: CredentialKind): string {
  return `${kind}_${randomBytes(32).toString('base64url')}`;
}

export function hashCredential(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time equality of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
