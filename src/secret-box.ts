import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * A secret the service must read back (a callback endpoint's signing secret, an owner's TOTP seed), so it cannot be
 * kept as a hash: Redis holds it encrypted with AES-256-GCM under a key in a file outside Redis (named by `setting`:
 * CALLBACK_SECRET_KEY_FILE, OWNER_SECRETS_KEY_FILE), bound by the GCM additional data to what it belongs to (an
 * owner and endpoint id, an owner): a copy of the Redis data alone reveals no secret, and a ciphertext moved to
 * another record does not decrypt.
 */
export class SecretBox {
  private constructor(
    private readonly key: Buffer,
    private readonly setting: string,
  ) {}

  /** The key file holds 32 random bytes, base64 (`openssl rand -base64 32`). Anything else is refused. */
  static fromFile(path: string, setting: string): SecretBox {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      throw new Error(`${setting} cannot be read`);
    }
    return SecretBox.fromBase64(text, setting);
  }

  static fromBase64(text: string, setting: string): SecretBox {
    const key = Buffer.from(text.trim(), 'base64');
    if (key.length !== 32) throw new Error(`${setting} must hold 32 bytes, base64-encoded (openssl rand -base64 32)`);
    return new SecretBox(key, setting);
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
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`a sealed secret cannot be decrypted with this key (wrong ${this.setting} or altered data)`);
    }
  }
}
