import { createHash } from 'node:crypto';
import { hashCredential, newCredential, sameHash, type CredentialKind } from '../../src/registry/credentials';

const KINDS: CredentialKind[] = ['whsec', 'tok', 'brg'];

describe('newCredential', () => {
  test.each(KINDS)('when a %s credential is made, then it is the kind, an underscore and at least 43 base64url characters', (kind) => {
    const value = newCredential(kind);
    expect(value.startsWith(`${kind}_`)).toBe(true);
    const body = value.slice(kind.length + 1);
    expect(body).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(body.length).toBeGreaterThanOrEqual(43);
    // 43 base64url characters decode to 32 bytes: 256 bits of randomness.
    expect(Buffer.from(body, 'base64url').length).toBeGreaterThanOrEqual(32);
  });

  test('when many credentials are made, then all are different', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(newCredential('whsec'));
    expect(seen.size).toBe(2000);
  });

  test('when credentials of different kinds are made, then the prefix tells them apart', () => {
    const values = KINDS.map((k) => newCredential(k));
    expect(values.map((v) => v.split('_')[0])).toEqual(KINDS);
  });
});

describe('hashCredential', () => {
  test('when a credential is hashed, then the result is its SHA-256 as 64 lower-case hex characters', () => {
    expect(hashCredential('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const v = newCredential('tok');
    expect(hashCredential(v)).toBe(createHash('sha256').update(v).digest('hex'));
    expect(hashCredential(v)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('when the same credential is hashed twice, then the hashes are equal; different credentials hash differently', () => {
    expect(hashCredential('whsec_a')).toBe(hashCredential('whsec_a'));
    expect(hashCredential('whsec_a')).not.toBe(hashCredential('whsec_b'));
  });

  test('when a credential has non-ASCII characters, then it is hashed as UTF-8', () => {
    expect(hashCredential('é')).toBe(
      createHash('sha256')
        .update(Buffer.from([0xc3, 0xa9]))
        .digest('hex'),
    );
  });

  test('when the empty string is hashed, then the result is the SHA-256 of nothing', () => {
    expect(hashCredential('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('sameHash', () => {
  const h1 = hashCredential('whsec_one');
  const h2 = hashCredential('whsec_two');

  test('when two equal digests are compared, then they are the same', () => {
    expect(sameHash(h1, hashCredential('whsec_one'))).toBe(true);
  });

  test('when two different digests are compared, then they are not the same', () => {
    expect(sameHash(h1, h2)).toBe(false);
  });

  test('when digests differ only in the last character, then they are not the same', () => {
    const last = h1.slice(-1) === '0' ? '1' : '0';
    expect(sameHash(h1, `${h1.slice(0, -1)}${last}`)).toBe(false);
  });

  test('when a digest is compared with a shorter or longer one, then they are not the same (and nothing throws)', () => {
    expect(sameHash(h1, h1.slice(0, 32))).toBe(false);
    expect(sameHash(h1.slice(0, 32), h1)).toBe(false);
    expect(sameHash(h1, `${h1}00`)).toBe(false);
  });

  test('when either side is empty, then they are not the same (even empty with empty)', () => {
    expect(sameHash('', '')).toBe(false);
    expect(sameHash(h1, '')).toBe(false);
    expect(sameHash('', h1)).toBe(false);
  });

  test('when either side is not hex at all, then they are not the same', () => {
    expect(sameHash('zz', 'zz')).toBe(false);
    expect(sameHash('not-a-digest', h1)).toBe(false);
  });

  // Regression (src/registry/credentials.ts sameHash, fixed): Buffer.from(x, 'hex') silently stops at the first non-hex character and
  // drops a trailing odd nibble, so strings of different length (or with different trailing garbage) decode to the same
  // bytes and compare equal. Latent today: every caller passes two 64-character hashCredential digests.
  test('when strings of different length decode to the same bytes (odd nibble, trailing non-hex), then they are not the same', () => {
    expect(sameHash('abc', 'ab')).toBe(false);
    expect(sameHash(`${h1}0`, h1)).toBe(false);
    expect(sameHash(`${h1}zz`, h1)).toBe(false);
    expect(sameHash(`${h1.slice(0, 62)}zz`, `${h1.slice(0, 62)}yy`)).toBe(false);
  });
});
