import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SecretBox } from '../secret-box';

/**
 * The connector's secrets: the Open API application's client secret, and per cTrader account its access and refresh
 * tokens and the bridge token of our ingress. They must be readable by the connector (it sends them), so they are
 * encrypted, not hashed: sealed by the service's one SecretBox (AES-256-GCM, src/secret-box.ts) under the key of
 * CTRADER_CREDENTIALS_KEY (no default), in one file written atomically with mode 0600. A refreshed token is saved at once (Open API hands out a new refresh token each time).
 */

const accountCredentialSchema = z.strictObject({
  /** Our account id (the registry's). */
  accountId: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/),
  /** ctidTraderAccountId of the cTrader account. */
  ctidTraderAccountId: z.number().int().positive(),
  environment: z.enum(['demo', 'live']),
  bridgeToken: z.string().min(16).max(256),
  accessToken: z.string().min(1).max(4096),
  refreshToken: z.string().min(1).max(4096),
  /** Epoch ms when the access token expires (from expires_in at issue); refreshed ahead of it. */
  accessTokenExpiresAt: z.number().int().positive().optional(),
});
export type AccountCredential = z.infer<typeof accountCredentialSchema>;

const credentialsSchema = z.strictObject({
  application: z.strictObject({ clientId: z.string().min(1).max(256), clientSecret: z.string().min(1).max(256) }).optional(),
  accounts: z.array(accountCredentialSchema).max(10_000).default([]),
});
export type Credentials = z.infer<typeof credentialsSchema>;

/** Version 2 holds the SecretBox's sealed text; version 1 (connector ≤ 1.4) the same cipher's parts, without a binding. */
const fileSchema = z.discriminatedUnion('version', [
  z.strictObject({ version: z.literal(2), sealed: z.string() }),
  z.strictObject({ version: z.literal(1), iv: z.string(), tag: z.string(), data: z.string() }),
]);
/** Binds the sealed text to what it is: a ciphertext of another kind sealed under the same key does not open as this. */
const BINDING = 'ctrader-credentials';
const SETTING = 'CTRADER_CREDENTIALS_KEY';

/** The key from its base64 form; refuses anything but 32 bytes (fail closed: no key, no connector). */
export function parseKey(raw: string | undefined): SecretBox {
  if (!raw || raw.trim() === '') throw new Error(`${SETTING} is not set (32 random bytes, base64: openssl rand -base64 32)`);
  return SecretBox.fromBase64(raw, SETTING);
}

export function encrypt(plain: Credentials, box: SecretBox): string {
  return JSON.stringify({ version: 2, sealed: box.seal(JSON.stringify(plain), BINDING) });
}

export function decrypt(text: string, box: SecretBox): Credentials {
  const file = fileSchema.parse(JSON.parse(text));
  // An empty binding is GCM without additional data: what version 1 wrote.
  const plain = file.version === 2 ? box.open(file.sealed, BINDING) : box.open(['v1', file.iv, file.tag, file.data].join(':'), '');
  return credentialsSchema.parse(JSON.parse(plain));
}

export class CredentialStore {
  constructor(
    readonly file: string,
    private readonly box: SecretBox,
  ) {}

  read(): Credentials {
    if (!fs.existsSync(this.file)) return { accounts: [] };
    return decrypt(fs.readFileSync(this.file, 'utf8'), this.box);
  }

  write(creds: Credentials): void {
    const parsed = credentialsSchema.parse(creds);
    fs.mkdirSync(path.dirname(path.resolve(this.file)), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, encrypt(parsed, this.box), { mode: 0o600 });
    fs.renameSync(tmp, this.file);
  }

  /** Merges a document in: the application replaces the stored one when given; accounts replace by accountId. */
  put(doc: unknown): { application: boolean; accounts: string[] } {
    const incoming = credentialsSchema.parse(doc);
    const current = this.read();
    const byId = new Map(current.accounts.map((a) => [a.accountId, a]));
    for (const a of incoming.accounts) byId.set(a.accountId, a);
    this.write({ application: incoming.application ?? current.application, accounts: [...byId.values()] });
    return { application: incoming.application !== undefined, accounts: incoming.accounts.map((a) => a.accountId) };
  }

  remove(accountId: string): boolean {
    const current = this.read();
    const accounts = current.accounts.filter((a) => a.accountId !== accountId);
    if (accounts.length === current.accounts.length) return false;
    this.write({ ...current, accounts });
    return true;
  }

  /** Saves one account's new tokens (after ProtoOARefreshTokenRes). */
  updateTokens(accountId: string, tokens: Pick<AccountCredential, 'accessToken' | 'refreshToken' | 'accessTokenExpiresAt'>): void {
    const current = this.read();
    this.write({ ...current, accounts: current.accounts.map((a) => (a.accountId === accountId ? { ...a, ...tokens } : a)) });
  }
}

/** What `credentials list` shows: never a secret. */
export function describeCredentials(c: Credentials): Record<string, unknown> {
  return {
    application: c.application ? { clientId: c.application.clientId } : null,
    accounts: c.accounts.map((a) => ({
      accountId: a.accountId,
      ctidTraderAccountId: a.ctidTraderAccountId,
      environment: a.environment,
      accessTokenExpiresAt: a.accessTokenExpiresAt ? new Date(a.accessTokenExpiresAt).toISOString() : null,
    })),
  };
}
