import { MAX_RETRY_SPAN_MS, SignalsClient, UnexpectedResponseError, type ExternalSignal, type SubmitResult } from '../../src/client';
import { backoffMs, BASE_BACKOFF_MS, MAX_BACKOFF_MS, retryAfterMs, retryWaitMs } from '../../src/client/retry';
import { validateSignal } from '../../src/domain/signal';
import { BASE, BUY, ACCEPTED, json, harness, keyOf } from '../helpers/client-harness';

/**
 * The typed client's submit against a scripted fetch: which answers are retried (spec §4.1, §5 rule 5, §7), with which
 * key, after which waits, within which deadline; and the retry policy itself.
 */

describe('SignalsClient.submit', () => {
  test('when the service accepts, then one POST with JSON, a generated UUID key, and an accepted result', async () => {
    const h = harness([json(202, ACCEPTED)]);
    const result = await h.client.submit(BUY);
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]).toMatchObject({ url: `${BASE}/webhook/custom`, method: 'POST', body: BUY });
    expect(h.calls[0]!.headers['content-type']).toBe('application/json');
    expect(keyOf(h.calls[0]!)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(result).toEqual({
      kind: 'accepted',
      signalId: ACCEPTED.signalId,
      correlationId: 'req_1',
      accountsResolved: 2,
      replayed: false,
      idempotencyKey: keyOf(h.calls[0]!),
      attempts: 1,
    });
    expect(h.waits).toEqual([]);
  });

  test('when an accountId is given, then the per-account URL (encoded); each submit gets its own key', async () => {
    const h = harness([json(202, ACCEPTED), json(202, ACCEPTED)]);
    await h.client.submit(BUY, { accountId: 'acc/1' });
    await h.client.submit(BUY, { accountId: 'acc/1' });
    expect(h.calls[0]!.url).toBe(`${BASE}/webhook/custom/acc%2F1`);
    expect(keyOf(h.calls[0]!)).not.toBe(keyOf(h.calls[1]!));
  });

  test('when a key is given (option or body field), then it is the header on every attempt', async () => {
    const h = harness([json(202, ACCEPTED), json(500, { error: 'x' }), json(202, ACCEPTED)]);
    await h.client.submit(BUY, { idempotencyKey: 'my-key-1' });
    expect(keyOf(h.calls[0]!)).toBe('my-key-1');
    const fromBody = await h.client.submit({ ...BUY, idempotencyKey: 'body-key' });
    expect(h.calls.slice(1).map(keyOf)).toEqual(['body-key', 'body-key']);
    expect(fromBody).toMatchObject({ kind: 'accepted', idempotencyKey: 'body-key', attempts: 2 });
  });

  test('when the answer says Idempotent-Replayed, then replayed is true', async () => {
    const h = harness([json(202, ACCEPTED, { 'idempotent-replayed': 'true' })]);
    expect(await h.client.submit(BUY)).toMatchObject({ kind: 'accepted', replayed: true });
  });

  test.each([
    ['500', json(500, { error: 'Unexpected internal error; safe to retry', correlationId: 'req_500' })],
    ['503 backpressure', json(503, { error: 'System under high load, retry later', backpressure: true })],
    ['503 service_unavailable', json(503, { error: 'service_unavailable', retryAfterSeconds: 1 }, { 'retry-after': '1' })],
    ['429', json(429, { error: 'Rate limit exceeded', limit: 120, windowMs: 60000 })],
    ['network error', { network: 'ECONNRESET' }],
  ])('when the first answer is %s, then it is retried with the same key and the second answer counts', async (_name, first) => {
    const h = harness([first, json(202, ACCEPTED)]);
    const result = await h.client.submit(BUY);
    expect(h.calls).toHaveLength(2);
    expect(keyOf(h.calls[1]!)).toBe(keyOf(h.calls[0]!));
    expect(h.calls[1]!.body).toEqual(h.calls[0]!.body);
    expect(result).toMatchObject({ kind: 'accepted', attempts: 2, idempotencyKey: keyOf(h.calls[0]!) });
    expect(h.waits).toHaveLength(1);
  });

  test.each([400, 401, 403, 409, 412, 413])('when the service answers %i, then it is refused and never retried', async (status) => {
    const body =
      status === 400
        ? { error: 'Invalid signal: symbol: unknown', details: [{ path: 'symbol', message: 'unknown' }] }
        : { error: `refused ${status}`, correlationId: 'req_body' };
    const h = harness([json(status, body), json(202, ACCEPTED)]);
    const result = await h.client.submit(BUY);
    expect(h.calls).toHaveLength(1);
    expect(h.waits).toEqual([]);
    expect(result).toMatchObject({ kind: 'refused', status, error: body.error, local: false, attempts: 1 });
    if (status === 400) {
      // No correlationId in a 400 body (spec §2.5): the X-Request-ID header carries it.
      expect(result).toMatchObject({ details: [{ path: 'symbol', message: 'unknown' }], correlationId: 'req_hdr_1' });
    } else {
      expect(result).toMatchObject({ correlationId: 'req_body' });
    }
  });

  test('when a status the spec does not call retryable comes back (404), then it is refused, not retried', async () => {
    const h = harness([{ status: 404, body: undefined }, json(202, ACCEPTED)]);
    expect(await h.client.submit(BUY)).toMatchObject({ kind: 'refused', status: 404, error: 'HTTP 404' });
    expect(h.calls).toHaveLength(1);
  });

  test('when the answer is a 503 with a signalId (partial acceptance), then it is returned, not resent', async () => {
    const h = harness([json(503, { ...ACCEPTED, success: false }), json(202, ACCEPTED)]);
    const result = await h.client.submit(BUY);
    expect(h.calls).toHaveLength(1);
    expect(result).toEqual({
      kind: 'partially_accepted',
      signalId: ACCEPTED.signalId,
      correlationId: 'req_1',
      accountsResolved: 2,
      replayed: false,
      idempotencyKey: keyOf(h.calls[0]!),
      attempts: 1,
    });
  });

  test('when the answer is 200 SignalNoTargets, then no_targets (terminal)', async () => {
    const h = harness([json(200, { success: false, accountsResolved: 0, correlationId: 'req_nt' })]);
    expect(await h.client.submit(BUY)).toMatchObject({ kind: 'no_targets', correlationId: 'req_nt', attempts: 1 });
  });

  test('when Retry-After is given (header seconds, HTTP date, or retryAfterSeconds), then the wait is at least that', async () => {
    const h = harness([
      json(429, { error: 'rate_limit_exceeded', scope: 'account_write' }, { 'retry-after': '7' }),
      json(503, { error: 'service_unavailable', retryAfterSeconds: 3 }),
      json(429, { error: 'Rate limit exceeded' }, { 'retry-after': new Date(1_700_000_000_000 + 7_000 + 3_000 + 12_000).toUTCString() }),
      json(202, ACCEPTED),
    ]);
    const result = await h.client.submit(BUY);
    expect(result).toMatchObject({ kind: 'accepted', attempts: 4 });
    expect(h.waits[0]).toBe(7_000);
    expect(h.waits[1]).toBe(3_000);
    // An HTTP date counts from the fake clock: 12 s after the third answer.
    expect(h.waits[2]).toBe(12_000);
    expect(new Set(h.calls.map(keyOf)).size).toBe(1);
  });

  test('when every attempt fails with 500, then maxAttempts attempts with growing, bounded, jittered waits, then gave_up', async () => {
    const h = harness(
      Array.from({ length: 6 }, () => json(500, { error: 'boom', correlationId: 'req_x' })),
      { random: () => 0 },
    );
    const result = await h.client.submit(BUY);
    expect(h.calls).toHaveLength(4);
    expect(h.waits).toEqual([BASE_BACKOFF_MS / 2, BASE_BACKOFF_MS, BASE_BACKOFF_MS * 2]);
    expect(result).toEqual({
      kind: 'gave_up',
      reason: 'max_attempts',
      lastStatus: 500,
      error: 'boom',
      correlationId: 'req_x',
      mayHaveRun: true,
      idempotencyKey: keyOf(h.calls[0]!),
      attempts: 4,
    });
  });

  test('when only 429/503-without-signalId come back, then gave_up says nothing may have run', async () => {
    const h = harness([json(429, { error: 'Rate limit exceeded' }), json(503, { error: 'System under high load, retry later', backpressure: true })]);
    const result = await h.client.submit(BUY, { maxAttempts: 2 });
    expect(result).toMatchObject({ kind: 'gave_up', reason: 'max_attempts', lastStatus: 503, mayHaveRun: false, attempts: 2 });
  });

  test('when a network error was among the attempts, then gave_up says it may have run', async () => {
    const h = harness([{ network: 'ECONNRESET' }, json(429, { error: 'Rate limit exceeded' })]);
    expect(await h.client.submit(BUY, { maxAttempts: 2 })).toMatchObject({ kind: 'gave_up', lastStatus: 429, mayHaveRun: true });
  });

  test('when the connection is refused every time, then gave_up says nothing ran (the request never left)', async () => {
    const h = harness([{ network: 'ECONNREFUSED' }, { network: 'ECONNREFUSED' }]);
    expect(await h.client.submit(BUY, { maxAttempts: 2 })).toMatchObject({
      kind: 'gave_up',
      lastStatus: null,
      error: expect.stringContaining('ECONNREFUSED'),
      mayHaveRun: false,
      attempts: 2,
    });
  });

  test('when the next wait would cross the deadline, then gave_up(deadline) without sleeping it', async () => {
    const h = harness([
      json(429, { error: 'rate_limit_exceeded' }, { 'retry-after': '20' }),
      json(429, { error: 'rate_limit_exceeded' }, { 'retry-after': '20' }),
    ]);
    const result = await h.client.submit(BUY, { maxAttempts: 10 });
    // Default deadline 30 s: the first 20 s wait fits, the second would end at 40 s.
    expect(h.waits).toEqual([20_000]);
    expect(result).toMatchObject({ kind: 'gave_up', reason: 'deadline', lastStatus: 429, retryAfterSeconds: 20, attempts: 2, mayHaveRun: false });
  });

  test('when a deadline beyond the replay window is asked for, then retries still stop inside it', async () => {
    const h = harness(Array.from({ length: 10 }, () => json(500, { error: 'boom' }, { 'retry-after': '15' })));
    const result = await h.client.submit(BUY, { maxAttempts: 10, deadlineMs: 120_000 });
    const starts = h.waits.reduce<number[]>((acc, w) => [...acc, acc[acc.length - 1]! + w], [0]);
    expect(starts.every((t) => t < MAX_RETRY_SPAN_MS)).toBe(true);
    expect(MAX_RETRY_SPAN_MS).toBeLessThan(45_000);
    expect(result).toMatchObject({ kind: 'gave_up', reason: 'deadline', attempts: 3, mayHaveRun: true });
  });

  test('when an attempt hangs past the deadline, then it is cut off and gave_up(deadline) may have run', async () => {
    const client = new SignalsClient({
      baseUrl: BASE,
      fetch: ((_url: string, init?: RequestInit) =>
        new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))))) as typeof fetch,
    });
    // The fetch never settles by itself: a result at all, gave_up(deadline), proves the deadline cut it off.
    const result = await client.submit(BUY, { deadlineMs: 100 });
    expect(result).toMatchObject({ kind: 'gave_up', reason: 'deadline', lastStatus: null, mayHaveRun: true, attempts: 1 });
  });

  test("when the signal is invalid locally, then refused with the service's own message and nothing is sent", async () => {
    const h = harness([]);
    const tooBig = { ...BUY, volume: 1000 };
    const result = await h.client.submit(tooBig);
    const server = validateSignal(tooBig);
    expect(server.ok).toBe(false);
    expect(result).toMatchObject({ kind: 'refused', status: 400, local: true, attempts: 0 });
    if (result.kind !== 'refused' || server.ok) throw new Error('unreachable');
    expect(result.error).toBe(server.error);
    expect(result.error).toMatch(/volume/);
    expect(result.details).toEqual(server.details);
    expect(h.calls).toHaveLength(0);

    expect(await h.client.submit({ ...BUY, positionId: 'p1' })).toMatchObject({
      kind: 'refused',
      status: 400,
      error: expect.stringContaining('positionId is not used by buy'),
    });
    expect(await h.client.submit({ action: 'buy', symbol: 'EURUSD', volume: 1 } as unknown as ExternalSignal)).toMatchObject({
      kind: 'refused',
      status: 401,
      local: true,
    });
    expect(await h.client.submit({ ...BUY, idempotencyKey: 'a' }, { idempotencyKey: 'b' })).toMatchObject({
      kind: 'refused',
      status: 400,
      details: [{ path: 'idempotencyKey', message: 'differs from the X-Idempotency-Key header' }],
    });
    expect(await h.client.submit(BUY, { idempotencyKey: 'k'.repeat(129) })).toMatchObject({
      kind: 'refused',
      status: 400,
      error: expect.stringMatching(/X-Idempotency-Key/),
    });
    expect(h.calls).toHaveLength(0);
  });

  test('when a 202 has no usable body, then an UnexpectedResponseError carries the key', async () => {
    const h = harness([json(202, { success: true })]);
    await expect(h.client.submit(BUY, { idempotencyKey: 'k-1' })).rejects.toMatchObject({
      name: 'UnexpectedResponseError',
      info: { httpStatus: 202, idempotencyKey: 'k-1', correlationId: 'req_hdr_1' },
    });
    const again = harness([json(202, { success: true })]);
    await expect(again.client.submit(BUY)).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  test('the result type is a discriminated union (compile-time)', async () => {
    const h = harness([json(202, ACCEPTED)]);
    const result: SubmitResult = await h.client.submit(BUY);
    if (result.kind === 'accepted') expect(result.signalId).toBe(ACCEPTED.signalId);
    else throw new Error(`unexpected ${result.kind}`);
  });
});

describe('retry policy', () => {
  test('backoff doubles from BASE_BACKOFF_MS, is capped at MAX_BACKOFF_MS, and jitters within the upper half', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(n, () => 0))).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000]);
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(n, () => 1))).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(MAX_BACKOFF_MS).toBe(8000);
  });

  test('Retry-After: delta seconds, HTTP date, body retryAfterSeconds; garbage is ignored', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('5', undefined, now)).toBe(5000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:09 GMT', undefined, now)).toBe(9000);
    expect(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', undefined, now)).toBe(0);
    expect(retryAfterMs(null, { retryAfterSeconds: 4 }, now)).toBe(4000);
    expect(retryAfterMs('soon', { retryAfterSeconds: 'x' }, now)).toBeUndefined();
    expect(retryWaitMs(1, 5000, () => 1)).toBe(5000);
    expect(retryWaitMs(5, 1000, () => 1)).toBe(8000);
  });
});
