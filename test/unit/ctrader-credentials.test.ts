import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCipheriv, randomBytes } from 'node:crypto';
import { CredentialStore, decrypt, describeCredentials, encrypt, parseKey, type Credentials } from '../../src/ctrader/credentials';
import { SecretBox } from '../../src/secret-box';

/** The connector's secrets at rest: AES-256-GCM under CTRADER_CREDENTIALS_KEY, never in the clear on disk or in a listing. */

const rawKey = randomBytes(32);
const key = SecretBox.fromBase64(rawKey.toString('base64'), 'CTRADER_CREDENTIALS_KEY');
const otherKey = () => SecretBox.fromBase64(randomBytes(32).toString('base64'), 'CTRADER_CREDENTIALS_KEY');
const doc = (): Credentials => ({
  application: { clientId: 'client-id-1', clientSecret: `cs_${randomBytes(12).toString('hex')}` },
  accounts: [
    {
      accountId: 'acc-1',
      ctidTraderAccountId: 123,
      environment: 'demo',
      bridgeToken: `brg_${randomBytes(16).toString('hex')}`,
      accessToken: `at_${randomBytes(12).toString('hex')}`,
      refreshToken: `rt_${randomBytes(12).toString('hex')}`,
      accessTokenExpiresAt: 1_900_000_000_000,
    },
  ],
});

describe('the encrypted credentials of the cTrader connector', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-cred-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('when credentials are written, then the file (mode 0600) holds none of the secrets and reads back equal', () => {
    const store = new CredentialStore(path.join(dir, 'c.enc'), key);
    const d = doc();
    store.write(d);
    const text = fs.readFileSync(store.file, 'utf8');
    for (const secret of [d.application!.clientSecret, d.accounts[0]!.accessToken, d.accounts[0]!.refreshToken, d.accounts[0]!.bridgeToken])
      expect(text).not.toContain(secret);
    expect(fs.statSync(store.file).mode & 0o777).toBe(0o600);
    expect(store.read()).toEqual(d);
  });

  test('when the key is another one or the file was altered, then reading fails without revealing anything', () => {
    const text = encrypt(doc(), key);
    expect(() => decrypt(text, otherKey())).toThrow(/cannot be decrypted/);
    const file = JSON.parse(text) as { sealed: string };
    const parts = file.sealed.split(':');
    const bytes = Buffer.from(parts[3]!, 'base64');
    bytes[0]! ^= 1;
    parts[3] = bytes.toString('base64');
    expect(() => decrypt(JSON.stringify({ ...file, sealed: parts.join(':') }), key)).toThrow(/cannot be decrypted/);
    // Sealed under the same key for something else (another binding): refused too.
    expect(() => decrypt(JSON.stringify({ version: 2, sealed: key.seal(JSON.stringify(doc()), 'owner-1') }), key)).toThrow(/cannot be decrypted/);
  });

  test('when the key is missing, empty or not 32 bytes, then it is refused (no default key)', () => {
    expect(() => parseKey(undefined)).toThrow(/CTRADER_CREDENTIALS_KEY is not set/);
    expect(() => parseKey('  ')).toThrow(/not set/);
    expect(() => parseKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    const parsed = parseKey(rawKey.toString('base64'));
    expect(decrypt(encrypt(doc(), parsed), key).accounts).toHaveLength(1);
  });

  test('when the file was written by a connector before the one sealer (version 1), then it still reads', () => {
    const d = doc();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', rawKey, iv);
    const data = Buffer.concat([cipher.update(JSON.stringify(d), 'utf8'), cipher.final()]);
    const v1 = JSON.stringify({ version: 1, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') });
    expect(decrypt(v1, key)).toEqual(d);
    expect(() => decrypt(v1, otherKey())).toThrow(/cannot be decrypted/);
  });

  test('when accounts are put, removed and refreshed, then each replaces by accountId and the listing shows no secret', () => {
    const store = new CredentialStore(path.join(dir, 'c.enc'), key);
    const d = doc();
    store.put(d);
    store.put({ accounts: [{ ...d.accounts[0]!, accountId: 'acc-2', ctidTraderAccountId: 456 }] });
    store.updateTokens('acc-1', { accessToken: 'at_new', refreshToken: 'rt_new', accessTokenExpiresAt: 1_950_000_000_000 });
    const read = store.read();
    expect(read.application).toEqual(d.application);
    expect(read.accounts.map((a) => [a.accountId, a.accessToken])).toEqual([
      ['acc-1', 'at_new'],
      ['acc-2', d.accounts[0]!.accessToken],
    ]);
    const listing = JSON.stringify(describeCredentials(read));
    for (const secret of [d.application!.clientSecret, 'at_new', 'rt_new', d.accounts[0]!.bridgeToken, d.accounts[0]!.accessToken])
      expect(listing).not.toContain(secret);
    expect(store.remove('acc-2')).toBe(true);
    expect(store.remove('acc-2')).toBe(false);
    expect(store.read().accounts.map((a) => a.accountId)).toEqual(['acc-1']);
  });

  test('when a document has an unknown field or a bad environment, then it is refused', () => {
    const store = new CredentialStore(path.join(dir, 'c.enc'), key);
    expect(() => store.put({ accounts: [{ ...doc().accounts[0]!, environment: 'staging' }] })).toThrow();
    expect(() => store.put({ ...doc(), extra: 1 })).toThrow();
    expect(fs.existsSync(store.file)).toBe(false);
  });
});
