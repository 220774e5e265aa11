import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * A value the service must read back (an owner's TOTP seed), sealed with AES-256-GCM under the key of
 * OWNER_SECRETS_KEY: a copy of Redis (a backup, an RDB file) does not hand out anyone's second factor.
 * Text form: `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
export function seal(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** The sealed value, or an error when it was not sealed under this key (tampered, or another key). */
export function unseal(key: Buffer, text: string): string {
  const [version, iv, tag, data] = text.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

/** The 32-byte key from its base64 text; anything else is refused (no key, no dashboard). */
export function parseSealKey(raw: string, name: string): Buffer {
  const key = Buffer.from(raw.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${name} must be 32 random bytes, base64-encoded (openssl rand -base64 32)`);
  return key;
}
