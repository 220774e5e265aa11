import { accountIdsValue, SEARCH_ATTRIBUTE_VALUE_MAX_BYTES } from '../../src/temporal/search-attributes';

/** The JSON text Temporal measures: a KeywordList's payload data. */
const bytes = (ids: string[]) => Buffer.byteLength(JSON.stringify(ids));

describe("accountIdsValue: the accounts a signal lists in AccountIds, within Temporal's 2 KB a value", () => {
  test('when the accounts fit, then all of them, in order', () => {
    const ids = ['acc-a1', 'acc-b2', 'acc-c3'];
    expect(accountIdsValue(ids)).toEqual(ids);
  });

  test('when 200 accounts of 9 characters do not fit (2,401 bytes), then the first ones that do, under the limit', () => {
    const ids = Array.from({ length: 200 }, (_, i) => `bench-${String(i).padStart(3, '0')}`);
    expect(bytes(ids)).toBe(2401);
    const listed = accountIdsValue(ids);
    expect(listed).toEqual(ids.slice(0, listed.length));
    expect(bytes(listed)).toBeLessThanOrEqual(SEARCH_ATTRIBUTE_VALUE_MAX_BYTES);
    // One more would be over: nothing is left out that fits. ["…"] for 12 bytes each, the brackets, the commas.
    expect(bytes(ids.slice(0, listed.length + 1))).toBeGreaterThan(SEARCH_ATTRIBUTE_VALUE_MAX_BYTES);
    expect(listed).toHaveLength(170);
  });

  test('when an id is exactly at the limit, then it is listed; one byte more, then nothing is', () => {
    const atLimit = 'a'.repeat(SEARCH_ATTRIBUTE_VALUE_MAX_BYTES - 4); // ["…"]
    expect(accountIdsValue([atLimit])).toEqual([atLimit]);
    expect(accountIdsValue([`${atLimit}a`])).toEqual([]);
  });

  test('when ids hold characters of several bytes or that JSON escapes, then their encoded size counts', () => {
    const ids = Array.from({ length: 300 }, (_, i) => `konto-ü"${i}`);
    const listed = accountIdsValue(ids);
    expect(bytes(listed)).toBeLessThanOrEqual(SEARCH_ATTRIBUTE_VALUE_MAX_BYTES);
    expect(bytes(ids.slice(0, listed.length + 1))).toBeGreaterThan(SEARCH_ATTRIBUTE_VALUE_MAX_BYTES);
  });
});
