import { idempotencyDigest, requestHash } from '../../src/signals/idempotency';
import { hashCredential } from '../../src/registry/credentials';
import { ACCOUNT_ID_PATTERN } from '../../src/domain/account';

/** Spec §5 rules 4-5: a key is scoped to the secret and the route (one account, or the broadcast URL). */

const SECRET_A = hashCredential('whsec_a');
const SECRET_B = hashCredential('whsec_b');

describe('idempotencyDigest', () => {
  test('when the secret hash, route and key are the same, then the digest is the same (a 64-hex SHA-256)', () => {
    const d = idempotencyDigest(SECRET_A, 'acc-1', 'key-1');
    expect(d).toBe(idempotencyDigest(SECRET_A, 'acc-1', 'key-1'));
    expect(d).toMatch(/^[0-9a-f]{64}$/);
  });

  test('when two secrets use the same key on the same route, then their digests differ', () => {
    expect(idempotencyDigest(SECRET_A, 'acc-1', 'key-1')).not.toBe(idempotencyDigest(SECRET_B, 'acc-1', 'key-1'));
  });

  test('when the same key is used on two account routes, then the digests differ', () => {
    expect(idempotencyDigest(SECRET_A, 'acc-1', 'key-1')).not.toBe(idempotencyDigest(SECRET_A, 'acc-2', 'key-1'));
  });

  test('when the same key is used on an account route and on the broadcast route, then the digests differ', () => {
    expect(idempotencyDigest(SECRET_A, 'acc-1', 'key-1')).not.toBe(idempotencyDigest(SECRET_A, undefined, 'key-1'));
  });

  test('when the broadcast route is used twice, then it is one scope ("*")', () => {
    expect(idempotencyDigest(SECRET_A, undefined, 'key-1')).toBe(idempotencyDigest(SECRET_A, undefined, 'key-1'));
    expect(idempotencyDigest(SECRET_A, undefined, 'key-1')).toBe(idempotencyDigest(SECRET_A, '*', 'key-1'));
  });

  test('when the keys differ (including only by case or whitespace), then the digests differ', () => {
    const base = idempotencyDigest(SECRET_A, 'acc-1', 'key-1');
    for (const key of ['key-2', 'KEY-1', 'key-1 ', ' key-1']) expect(idempotencyDigest(SECRET_A, 'acc-1', key)).not.toBe(base);
  });

  test('when a key contains the separator "|", then scoping stays unambiguous because account ids cannot hold "|" or "*"', () => {
    // The digest input is `${secretHash}|${route}|${key}`: the secret hash is hex and the route an account id, so the
    // first two "|" always end them and a "|" in the key cannot move into the route.
    expect(ACCOUNT_ID_PATTERN.test('acc-1|x')).toBe(false);
    expect(ACCOUNT_ID_PATTERN.test('*')).toBe(false);
    expect(idempotencyDigest(SECRET_A, 'acc-1', 'x|y')).not.toBe(idempotencyDigest(SECRET_A, 'acc-1', 'x'));
    expect(idempotencyDigest(SECRET_A, 'acc-1', 'x|y')).not.toBe(idempotencyDigest(SECRET_A, undefined, 'acc-1|x|y'));
  });
});

describe('requestHash', () => {
  test('when the same signal is hashed with its keys in another order, then the hash is the same', () => {
    const a = requestHash({ action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: 1.05 }, 'acc-1');
    const b = requestHash({ sl: 1.05, volume: 0.1, symbol: 'EURUSD', action: 'buy' }, 'acc-1');
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  test('when nested meta keys are in another order, then the hash is the same', () => {
    const a = requestHash({ action: 'close_all', meta: { origin: 'tv', strategy: { name: 'x', tf: '1h' } } }, undefined);
    const b = requestHash({ meta: { strategy: { tf: '1h', name: 'x' }, origin: 'tv' }, action: 'close_all' }, undefined);
    expect(a).toBe(b);
  });

  test('when a field is undefined, then the hash is the same as without the field', () => {
    const a = requestHash({ action: 'buy', symbol: 'EURUSD', volume: 0.1 }, 'acc-1');
    const b = requestHash({ action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: undefined, meta: undefined }, 'acc-1');
    expect(a).toBe(b);
    expect(requestHash({ action: 'close_all', meta: { origin: 'tv', x: undefined } }, 'acc-1')).toBe(
      requestHash({ action: 'close_all', meta: { origin: 'tv' } }, 'acc-1'),
    );
  });

  test('when a field is null instead of absent, then the hash differs', () => {
    expect(requestHash({ action: 'close_all', meta: { origin: null } }, 'acc-1')).not.toBe(requestHash({ action: 'close_all', meta: {} }, 'acc-1'));
  });

  test('when any value differs, then the hash differs', () => {
    const base = requestHash({ action: 'buy', symbol: 'EURUSD', volume: 0.1 }, 'acc-1');
    expect(requestHash({ action: 'buy', symbol: 'EURUSD', volume: 0.2 }, 'acc-1')).not.toBe(base);
    expect(requestHash({ action: 'sell', symbol: 'EURUSD', volume: 0.1 }, 'acc-1')).not.toBe(base);
    expect(requestHash({ action: 'buy', symbol: 'eurusd', volume: 0.1 }, 'acc-1')).not.toBe(base);
    expect(requestHash({ action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: 1 }, 'acc-1')).not.toBe(base);
  });

  test('when a number is sent as a string, then the hash differs (types are part of the request)', () => {
    expect(requestHash({ action: 'buy', volume: 1 }, 'acc-1')).not.toBe(requestHash({ action: 'buy', volume: '1' }, 'acc-1'));
  });

  test('when the route differs (two accounts, or account vs broadcast), then the hash differs', () => {
    const signal = { action: 'close_all' };
    expect(requestHash(signal, 'acc-1')).not.toBe(requestHash(signal, 'acc-2'));
    expect(requestHash(signal, 'acc-1')).not.toBe(requestHash(signal, undefined));
    expect(requestHash(signal, undefined)).toBe(requestHash(signal, undefined));
  });

  test('when arrays inside meta are reordered, then the hash differs (array order is data)', () => {
    expect(requestHash({ action: 'close_all', meta: { tags: ['a', 'b'] } }, 'acc-1')).not.toBe(
      requestHash({ action: 'close_all', meta: { tags: ['b', 'a'] } }, 'acc-1'),
    );
  });

  test('when a value is a nested object vs the same text as a string, then the hash differs (no JSON injection)', () => {
    expect(requestHash({ action: 'close_all', meta: { a: { b: 1 } } }, 'acc-1')).not.toBe(
      requestHash({ action: 'close_all', meta: { a: '{"b":1}' } }, 'acc-1'),
    );
  });
});
