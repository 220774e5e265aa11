import { ACCOUNT_ID_PATTERN, type SecretGrant } from '../domain/account';
import type { Registry } from '../registry/registry';
import { Refusal } from '../refusal';

/**
 * Who is sending (design pipeline, before the route limiter): the secret must exist and, on the per-account URL,
 * link that account. Until this has passed, nothing a caller sent names a Redis key or spends a budget: an account id
 * or secret of the wrong shape is refused without a lookup, and a lookup only reads the secret's hash.
 * Spec §5 rule 1: a missing or invalid secret is a 401 whatever else is wrong with the body (only a body that is not
 * a JSON object at all is a 400).
 */

/** The shape every secret has: the admin CLI makes `whsec_` and 43 characters; an import brings 16 to 256. */
const SECRET_LENGTH = { min: 16, max: 256 };

export function requireJsonObject(body: unknown): asserts body is Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Refusal('invalid', 'Invalid signal: the body must be a JSON object', { details: [{ path: '', message: 'expected a JSON object' }] });
  }
}

export async function authenticateSender(registry: Registry, body: unknown, routeAccountId?: string): Promise<SecretGrant> {
  requireJsonObject(body);
  const secret = body.secret;
  if (typeof secret !== 'string' || secret.length < SECRET_LENGTH.min || secret.length > SECRET_LENGTH.max) {
    throw new Refusal('unauthorized', 'Missing or invalid webhook secret');
  }
  // The same 401 as a bad secret, whichever part was wrong: a caller cannot probe which accounts exist.
  const refused = new Refusal('unauthorized', 'Invalid webhook secret or account');
  if (routeAccountId !== undefined && !ACCOUNT_ID_PATTERN.test(routeAccountId)) throw refused;
  const grant = await registry.authenticateSecret(secret);
  if (!grant) throw refused;
  if (routeAccountId !== undefined && !grant.accounts.includes(routeAccountId)) throw refused;
  return grant;
}
