import { ExpiringCache } from '../../src/temporal/expiring-cache';

describe('the cache of closed signals', () => {
  test('when an entry is older than its time to live, then it is gone', () => {
    let now = 1_000;
    const cache = new ExpiringCache<string, number>(100, 10, () => now);
    cache.set('a', 1);
    now += 99;
    expect(cache.get('a')).toBe(1);
    now += 1;
    expect(cache.get('a')).toBeUndefined();
  });

  test('when more entries than the bound are set, then the oldest go first and a re-set entry counts as new', () => {
    const cache = new ExpiringCache<string, number>(60_000, 2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3);
    cache.set('c', 4);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(3);
    expect(cache.get('c')).toBe(4);
  });
});
