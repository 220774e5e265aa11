/**
 * The longest long-poll the service allows: BRIDGE_MAX_WAIT_MS's default (test/unit/config.test.ts pins it), which the
 * tests' services run with. A test that polls this long and is answered in the first half of it was woken, not timed
 * out, whatever the machine's speed: no bound on how fast the answer is.
 */
export const LONGEST_POLL_MS = 25_000;

/** The answer came from a wake-up, not from the poll's own end; the measured time is printed for the reader. */
export function expectWokenBeforeItsEnd(ms: number, what = 'answered'): void {
  console.log(`${what} after ${ms.toFixed(0)} ms of a ${LONGEST_POLL_MS} ms long-poll`);
  expect(ms).toBeLessThan(LONGEST_POLL_MS / 2);
}
