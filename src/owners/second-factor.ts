import { generateSecret, generateURI, verifySync } from 'otplib';
import { hash, verify } from '@node-rs/argon2';

/** Passwords: argon2id with OWASP's minimum profile (19 MiB, 2 passes, 1 lane); the PHC string keeps the parameters. */
const ARGON2 = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

/** A hash of nothing anyone knows, verified when the owner does not exist so both answers take as long. */
let decoy: Promise<string> | undefined;

export async function passwordMatches(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

/** TOTP (RFC 6238): SHA-1, six digits, 30 s, as every authenticator app expects; 160-bit seeds. */
export function newTotpSeed(): string {
  return generateSecret({ length: 20 });
}

export function totpUri(seed: string, ownerId: string, issuer: string): string {
  return generateURI({ issuer, label: ownerId, secret: seed });
}

/**
 * The 30-second step the code belongs to (one step of clock drift either way), or null when it is no code of this
 * seed. The caller refuses a step already used: each code works once.
 */
export function totpStep(seed: string, code: string, nowMs: number): number | null {
  const epoch = Math.floor(nowMs / 1000);
  const result = verifySync({ secret: seed, token: code, epochTolerance: 30, epoch });
  return result.valid ? Math.floor(epoch / 30) + result.delta : null;
}
