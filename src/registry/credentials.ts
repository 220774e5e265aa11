import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook secrets, API tokens and bridge tokens: random, long, stored only as their SHA-256.
 * They carry 256 bits of randomness, so an unsalted hash cannot be reversed by guessing.
 */

export type CredentialKind = 'whsec' | 'tok' | 'brg' | 'bss' | 'oak' | 'setup';

export function newCredential(kind: CredentialKind): string {
  return `${kind}_${randomBytes(32).toString('base64url')}`;
}

/** The id a secret, token or API key is shown by (CLI, owner API): the first 12 hex characters of its SHA-256. */
const CREDENTIAL_ID_LENGTH = 12;
export const credentialId = (hash: string): string => hash.slice(0, CREDENTIAL_ID_LENGTH);

export function hashCredential(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

const HEX_DIGEST = /^(?:[0-9a-f]{2})+$/;

/** Constant-time equality of two hex digests; anything that is not a whole hex digest equals nothing. */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length || !HEX_DIGEST.test(a) || !HEX_DIGEST.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
