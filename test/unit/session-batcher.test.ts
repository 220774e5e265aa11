import { CallBatcher } from '../../src/bridge-kit/batcher';
import { HttpStatusError } from '../../src/bridge-kit/client';
import { refusedHelloRetryMs } from '../../src/bridge-kit/fleet-member';
import type { AccountAnswer } from '../../src/bridge-kit/session-client';

/**
 * The multi-account session's batching (src/bridge-kit/batcher.ts), with the call it makes answered here: how many
 * accounts' bodies go in one call, and what each account's share of an answer does to that account alone.
 */

type Items = { accountId: string; body: unknown }[];

function batcher(opts: { maxItems?: number; maxBytes?: number; answer: (items: Items, call: number) => Promise<AccountAnswer[]> }) {
  const calls: Items[] = [];
  const sleeps: number[] = [];
  const b = new CallBatcher({
    what: 'reports',
    send: (items) => {
      calls.push(items);
      return opts.answer(items, calls.length);
    },
    maxItems: () => opts.maxItems ?? 1_000,
    maxBytes: opts.maxBytes ?? 1024 * 1024,
    sleep: async (ms) => void sleeps.push(ms),
    signal: new AbortController().signal,
    backoff: { initialMs: 50, maxMs: 1000 },
    diag: () => undefined,
  });
  return { b, calls, sleeps };
}

const answered = (items: Items): Promise<AccountAnswer[]> => Promise.resolve(items.map((i) => ({ accountId: i.accountId, result: 'answered' })));

/** A first call held open until `release`, so what is submitted meanwhile waits for the next calls together. */
function heldFirstCall() {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  return { release, answer: async (items: Items, call: number) => (call === 1 ? held.then(() => answered(items)) : answered(items)) };
}

describe('the session calls batcher', () => {
  test('when more accounts wait than a call may carry, then each call carries at most the count bound and every body goes once', async () => {
    const first = heldFirstCall();
    const { b, calls } = batcher({ maxItems: 2, answer: first.answer });
    const done = ['a', 'b', 'c', 'd', 'e'].map((id) => b.submit(id, { reports: [] }));
    first.release();
    await Promise.all(done);
    expect(calls.map((c) => c.map((i) => i.accountId))).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });

  test('when the bodies outweigh the byte bound, then a call carries as many as fit, and a body larger than the bound goes alone', async () => {
    const first = heldFirstCall();
    const body = (n: number) => ({ pad: 'x'.repeat(n) });
    const size = JSON.stringify(body(100)).length;
    const { b, calls } = batcher({ maxBytes: 2 * size, answer: first.answer });
    const done = [b.submit('first', {}), b.submit('a', body(100)), b.submit('b', body(100)), b.submit('c', body(100)), b.submit('big', body(1000))];
    first.release();
    await Promise.all(done);
    expect(calls.map((c) => c.map((i) => i.accountId))).toEqual([['first'], ['a', 'b'], ['c'], ['big']]);
  });

  test('when one account has two bodies waiting, then they go in two calls, in order', async () => {
    const first = heldFirstCall();
    const { b, calls } = batcher({ answer: first.answer });
    const done = [b.submit('first', {}), b.submit('a', { n: 1 }), b.submit('b', {}), b.submit('a', { n: 2 })];
    first.release();
    await Promise.all(done);
    expect(calls.slice(1)).toEqual([
      [
        { accountId: 'a', body: { n: 1 } },
        { accountId: 'b', body: {} },
      ],
      [{ accountId: 'a', body: { n: 2 } }],
    ]);
  });

  test('when the answer refuses one account, then that account alone gets its refusal (401) or goes again (503), the others their answers', async () => {
    let busyRefused = false;
    const { b, calls } = batcher({
      answer: async (items) =>
        items.map((i) =>
          i.accountId === 'revoked'
            ? { accountId: i.accountId, result: 'refused', status: 401, error: 'Missing or invalid session' }
            : i.accountId === 'busy' && !busyRefused && (busyRefused = true)
              ? { accountId: i.accountId, result: 'refused', status: 503, error: 'try again' }
              : { accountId: i.accountId, result: 'answered', results: [{ commandId: `c-${i.accountId}`, result: 'recorded' }] },
        ),
    });
    const [ok, revoked, busy] = [b.submit('ok', {}), b.submit('revoked', {}), b.submit('busy', {})].map((p) =>
      p.then(
        (a) => a,
        (e: unknown) => e,
      ),
    );
    expect(await ok).toMatchObject({ accountId: 'ok', result: 'answered', results: [{ commandId: 'c-ok' }] });
    expect(await revoked).toBeInstanceOf(HttpStatusError);
    expect(await revoked).toMatchObject({ status: 401 });
    expect(await busy).toMatchObject({ accountId: 'busy', result: 'answered' });
    expect(calls.map((c) => c.map((i) => i.accountId))).toEqual([['ok'], ['revoked', 'busy'], ['busy']]);
  });

  test('when the whole call is refused (400), then every account of it gets the refusal and nothing goes again', async () => {
    const { b, calls } = batcher({ answer: () => Promise.reject(new HttpStatusError(400, 'session reports', { error: 'Invalid' })) });
    const outcomes = await Promise.allSettled([b.submit('a', {}), b.submit('b', {})]);
    expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as HttpStatusError).status)).toEqual([400, 400]);
    expect(calls.flat().map((i) => i.accountId)).toEqual(['a', 'b']);
  });

  test('when the whole call is throttled (429) or fails (503), then it goes again after a growing backoff and its accounts are answered', async () => {
    const { b, calls, sleeps } = batcher({
      answer: (items, call) => (call <= 2 ? Promise.reject(new HttpStatusError(call === 1 ? 429 : 503, 'session reports', {})) : answered(items)),
    });
    expect(await b.submit('a', {})).toMatchObject({ accountId: 'a', result: 'answered' });
    expect(calls).toHaveLength(3);
    expect(sleeps).toEqual([50, 100]);
  });
});

describe("a refused account's next hello", () => {
  test('when its hellos are refused in a row, then it is tried again after 250 ms, twice as long each time, at most 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 50].map(refusedHelloRetryMs)).toEqual([250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
});
