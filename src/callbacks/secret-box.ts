import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * An endpoint's signing secret at rest. Unlike our other credentials it cannot be kept as a hash: every delivery
 * signs with it (HMAC-SHA256). So Redis holds it encrypted with AES-256-GCM under a key that lives in a file outside
 * Redis (CALLBACK_SECRET_KEY_FILE), bound by the GCM additional data to its owner and endpoint id: a copy of the
 * Redis data alone reveals no secret, and a ciphertext moved to another owner's endpoint does not decrypt.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** The key file holds 32 random bytes, base64 (`openssl rand -base64 32`). Anything else is refused. */
  static fromFile(path: string): SecretBox {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      throw new Error('CALLBACK_SECRET_KEY_FILE cannot be read');
    }
    return SecretBox.fromBase64(text);
  }

  static fromBase64(text: string): SecretBox {
    const key = Buffer.from(text.trim(), 'base64');
    if (key.length !== 32) throw new Error('CALLBACK_SECRET_KEY_FILE must hold 32 bytes, base64-encoded (openssl rand -base64 32)');
    return new SecretBox(key);
  }

  seal(secret: string, binding: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64'))).join(':');
  }

  /** Throws when the box was sealed under another key or binding, or was altered. */
  open(sealed: string, binding: string): string {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed callback secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('callback secret cannot be decrypted with this key (wrong CALLBACK_SECRET_KEY_FILE or altered data)');
    }
  }
}

/** A new endpoint secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
