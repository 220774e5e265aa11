import { LateReads } from '../../src/temporal/late-reads';

/** A read whose answer the test releases when it wants: Temporal's slowness, in process. */
function gate<T>() {
  let release!: (value: T) => void;
  let fail!: (err: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  return { promise, release, fail };
}

/** A load that counts how often it was called: one read per key at a time is the point. */
function counted<T>(load: () => Promise<T>) {
  let calls = 0;
  return {
    load: () => {
      calls++;
      return load();
    },
    loads: () => calls,
  };
}

describe('LateReads: a read that does not hold its caller up', () => {
  test('when the answer comes within the wait, then the caller gets it', async () => {
    const reads = new LateReads<string>(5_000, 10);
    await expect(reads.read('sig', () => Promise.resolve('fresh'), 1_000)).resolves.toBe('fresh');
  });

  test('when the answer is late and none was kept, then undefined; the late answer then serves the next caller at once', async () => {
    const reads = new LateReads<string>(5_000, 10);
    const slow = gate<string>();
    const { load, loads } = counted(() => slow.promise);
    await expect(reads.read('sig', load, 5)).resolves.toBeUndefined();
    slow.release('late answer');
    await slow.promise;
    // The next caller starts a new read (which never answers here), and gets the kept one when its wait is over.
    await expect(reads.read('sig', () => new Promise<string>(() => undefined), 5)).resolves.toBe('late answer');
    expect(loads()).toBe(1);
  });

  test('when callers ask while a read is under way, then they share it: one read, the same answer', async () => {
    const reads = new LateReads<string>(5_000, 10);
    const slow = gate<string>();
    const { load, loads } = counted(() => slow.promise);
    const first = reads.read('sig', load);
    const second = reads.read('sig', load);
    slow.release('one answer');
    await expect(Promise.all([first, second])).resolves.toEqual(['one answer', 'one answer']);
    expect(loads()).toBe(1);
  });

  test('when the read fails within the wait, then the caller gets its error; failing late, it harms nobody', async () => {
    const reads = new LateReads<string>(5_000, 10);
    await expect(reads.read('sig', () => Promise.reject(new Error('unreachable')), 1_000)).rejects.toThrow('unreachable');
    const slow = gate<string>();
    await expect(reads.read('other', () => slow.promise, 5)).resolves.toBeUndefined();
    slow.fail(new Error('late failure'));
    await expect(slow.promise).rejects.toThrow('late failure');
    // A read that failed keeps nothing, and the next one is a new read.
    await expect(reads.read('other', () => Promise.resolve('recovered'), 1_000)).resolves.toBe('recovered');
  });

  test('when a kept answer is older than keepMs, then it is not used', async () => {
    let now = 1_000;
    const reads = new LateReads<string>(100, 10, () => now);
    await reads.read('sig', () => Promise.resolve('old'));
    now += 100;
    await expect(reads.read('sig', () => new Promise<string>(() => undefined), 5)).resolves.toBeUndefined();
  });
});
