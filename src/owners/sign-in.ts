import type { Redis } from 'ioredis';
import { hashCredential, newCredential } from '../registry/credentials';
import { Refusal } from '../refusal';
import { passwordSchema, totpCodeSchema } from '../domain/owner';
import { PASSWORD_RULES, passwordProblem } from '../domain/password-policy';
import { OwnerStore, type OwnerRecord } from './owner-store';
import { SessionStore, type Session } from './sessions';
import type { SecretBox } from '../secret-box';
import { hashPassword, newTotpSeed, passwordMatches, totpStep, totpUri } from './second-factor';
import { ApiKeyStore } from './api-keys';
import { toString as qrSvg } from 'qrcode';
import type { RedisRegistry } from '../registry/registry';
import { revokeOwnerMade, type RevokedCredential } from './reset';

/**
 * Signing owners in: the operator's setup link, the owner's password and second factor, sessions. Every refusal is
 * the same for a wrong owner, a wrong password and a wrong code, so nothing tells an attacker which one was wrong.
 */
export interface OwnerAuthDeps {
  owners: OwnerStore;
  sessions: SessionStore;
  apiKeys: ApiKeyStore;
  /** Seals TOTP seeds (bound to their owner); without it the dashboard refuses to run (fail closed). */
  box: SecretBox;
  setupTtlSeconds: number;
  issuer: string;
  now: () => Date;
}

export function ownerAuthDeps(redis: Redis, o: { box: SecretBox; sessionTtlSeconds: number; setupTtlSeconds: number; issuer: string }): OwnerAuthDeps {
  return {
    owners: new OwnerStore(redis),
    sessions: new SessionStore(redis, o.sessionTtlSeconds),
    apiKeys: new ApiKeyStore(redis),
    box: o.box,
    setupTtlSeconds: o.setupTtlSeconds,
    issuer: o.issuer,
    now: () => new Date(),
  };
}

/** A sealed seed opens only on its own owner's record. */
const totpBinding = (ownerId: string) => `totp\n${ownerId}`;

const SIGN_IN_REFUSED = 'Wrong owner, password or code';
const LINK_REFUSED = 'This setup link is not valid any more (used, replaced by a newer one, or expired): ask your operator for a new one';

/** The operator's side: a setup link's token for a new owner, or (reset) for one who lost their password or device. */
export type SetupDeps = Pick<OwnerAuthDeps, 'owners' | 'sessions' | 'apiKeys' | 'setupTtlSeconds' | 'now'>;

/**
 * A reset first ends what signs the owner in (sessions, API keys: nothing more can be made), then revokes every
 * credential made through them (src/owners/reset.ts); `revoked` lists those.
 */
export async function openSetup(
  deps: SetupDeps & { registry: RedisRegistry },
  ownerId: string,
  reset: boolean,
): Promise<{ token: string; expiresAt: string; revoked: RevokedCredential[] }> {
  const existing = await deps.owners.get(ownerId);
  if (existing?.status === 'active' && !reset) throw new Refusal('invalid', `owner ${ownerId} has signed in already; use --reset to start again`);
  const token = newCredential('setup');
  const now = deps.now();
  await deps.owners.openSetup(ownerId, hashCredential(token), deps.setupTtlSeconds, now, reset);
  let revoked: RevokedCredential[] = [];
  if (reset) {
    await deps.sessions.endAll(ownerId);
    await deps.apiKeys.revokeAll(ownerId);
    revoked = await revokeOwnerMade(deps, ownerId);
  }
  return { token, expiresAt: new Date(now.getTime() + deps.setupTtlSeconds * 1000).toISOString(), revoked };
}

async function ownerOfLink(deps: OwnerAuthDeps, token: string): Promise<OwnerRecord> {
  const owner = token.length <= 256 ? await deps.owners.ownerOfSetup(hashCredential(token)) : null;
  if (!owner) throw new Refusal('not_found', LINK_REFUSED);
  return owner;
}

/** The first step of setup: the TOTP seed to enrol in an authenticator app (the same one until setup completes). */
export async function beginSetup(deps: OwnerAuthDeps, token: string): Promise<{ owner: string; totpSeed: string; totpUri: string; totpQr: string }> {
  const owner = await ownerOfLink(deps, token);
  let seed = owner.pendingTotpSealed ? deps.box.open(owner.pendingTotpSealed, totpBinding(owner.id)) : undefined;
  if (seed === undefined) {
    seed = newTotpSeed();
    await deps.owners.offerTotp(owner.id, deps.box.seal(seed, totpBinding(owner.id)));
  }
  const uri = totpUri(seed, owner.id, deps.issuer);
  // The QR code as an image the page shows from a data: URI: made here, so the page needs no QR library.
  const svg = await qrSvg(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { owner: owner.id, totpSeed: seed, totpUri: uri, totpQr: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

/** The second step: a password and a code proving the app holds the seed; the owner is signed in. */
export async function completeSetup(deps: OwnerAuthDeps, token: string, password: unknown, code: unknown): Promise<{ token: string; session: Session }> {
  const owner = await ownerOfLink(deps, token);
  const pw = passwordSchema.safeParse(password);
  if (!pw.success) throw new Refusal('invalid', `password: ${pw.error.issues[0]?.message ?? 'invalid'}`);
  const weak = passwordProblem(pw.data, owner.id);
  if (weak) throw new Refusal('invalid', `password: ${PASSWORD_RULES[weak]}`);
  const c = totpCodeSchema.safeParse(code);
  const seed = owner.pendingTotpSealed ? deps.box.open(owner.pendingTotpSealed, totpBinding(owner.id)) : undefined;
  const step = c.success && seed ? totpStep(seed, c.data, deps.now().getTime()) : null;
  if (step === null || seed === undefined) throw new Refusal('invalid', 'code: not a current code of the authenticator app enrolled on this page');
  const done = await deps.owners.completeSetup(owner.id, hashCredential(token), await hashPassword(pw.data), deps.box.seal(seed, totpBinding(owner.id)), step);
  if (!done) throw new Refusal('not_found', LINK_REFUSED);
  return deps.sessions.open(owner.id, deps.now());
}

export async function signIn(deps: OwnerAuthDeps, ownerId: string, password: string, code: string): Promise<{ token: string; session: Session }> {
  const owner = await deps.owners.get(ownerId);
  const usable = owner?.status === 'active' ? owner : undefined;
  const passwordOk = await passwordMatches(usable?.passwordHash, password);
  if (!usable?.totpSealed || !passwordOk) throw new Refusal('unauthorized', SIGN_IN_REFUSED);
  const step = totpStep(deps.box.open(usable.totpSealed, totpBinding(usable.id)), code, deps.now().getTime());
  if (step === null || !(await deps.owners.useTotpStep(usable.id, step))) throw new Refusal('unauthorized', SIGN_IN_REFUSED);
  return deps.sessions.open(usable.id, deps.now());
}

/** The owner a session token signs in, if the session is open and the owner still active. */
export async function sessionOwner(deps: OwnerAuthDeps, token: string): Promise<Session | null> {
  const session = await deps.sessions.find(token);
  if (!session) return null;
  const owner = await deps.owners.get(session.owner);
  return owner?.status === 'active' ? session : null;
}

export async function apiKeyOwner(deps: OwnerAuthDeps, key: string): Promise<string | null> {
  const owner = await deps.apiKeys.ownerOf(key);
  if (owner === null) return null;
  return (await deps.owners.get(owner))?.status === 'active' ? owner : null;
}

export async function disableOwner(deps: SetupDeps, ownerId: string): Promise<boolean> {
  if (!(await deps.owners.setStatus(ownerId, 'disabled'))) return false;
  await deps.sessions.endAll(ownerId);
  return true;
}
