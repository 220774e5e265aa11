import { StatusError } from '../../src/client';
import { BASE, ACCEPTED, json, harness } from '../helpers/client-harness';

/** The typed client's status poll and its wait for the outcome, against a scripted fetch (spec §4.3). */

describe('SignalsClient.status', () => {
  const STATUS = {
    signalId: ACCEPTED.signalId,
    status: 'reported',
    reported: 1,
    accounts: [{ accountId: 'acc-1', outcome: 'filled', ticket: '900001', reason: null, occurredAt: '2026-01-01T00:00:00.000Z' }],
  };

  test('when the poll answers 200, then a typed SignalStatus, with the bearer token sent', async () => {
    const h = harness([json(200, STATUS)]);
    expect(await h.client.status(ACCEPTED.signalId, { token: 'tok_abc' })).toEqual(STATUS);
    expect(h.calls[0]).toMatchObject({ url: `${BASE}/v1/signals/${ACCEPTED.signalId}`, method: 'GET' });
    expect(h.calls[0]!.headers.authorization).toBe('Bearer tok_abc');
  });

  test.each([
    [401, { error: 'Missing or invalid API token' }, {}, { kind: 'unauthorized', retryable: false, info: { httpStatus: 401 } }],
    [
      403,
      { error: 'token_suspended', suspendedUntil: '2030-01-01T00:00:00.000Z' },
      {},
      { kind: 'token_suspended', retryable: false, info: { httpStatus: 403, suspendedUntil: '2030-01-01T00:00:00.000Z' } },
    ],
    [
      429,
      { error: 'rate_limit_exceeded', scope: 'account_read', message: 'slow down', limit: 300, windowMs: 60000 },
      { 'retry-after': '60' },
      {
        kind: 'rate_limited',
        retryable: true,
        message: 'slow down',
        info: { httpStatus: 429, scope: 'account_read', limit: 300, windowMs: 60000, retryAfterSeconds: 60 },
      },
    ],
    [500, { error: 'Internal error reading outcomes; safe to retry' }, {}, { kind: 'server_error', retryable: true, info: { httpStatus: 500 } }],
    [
      503,
      { error: 'service_unavailable', retryAfterSeconds: 5 },
      { 'retry-after': '5' },
      { kind: 'unavailable', retryable: true, info: { httpStatus: 503, retryAfterSeconds: 5 } },
    ],
    [404, { error: 'nope' }, {}, { kind: 'unexpected', retryable: false }],
  ])('when the poll answers %i, then a typed StatusError', async (status, body, headers, expected) => {
    const h = harness([json(status, body, headers)]);
    const err = await h.client.status('sig_x', { token: 't' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(err).toMatchObject(expected);
    expect((err as StatusError).info.correlationId).toBe('req_hdr_1');
  });

  test('when the network fails, then a retryable StatusError(network)', async () => {
    const h = harness([{ network: 'ECONNREFUSED' }]);
    await expect(h.client.status('sig_x', { token: 't' })).rejects.toMatchObject({
      kind: 'network',
      retryable: true,
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });
});

describe('SignalsClient.waitForOutcome', () => {
  const pending = { signalId: 'sig_1', status: 'pending_or_unknown', reported: 0, accounts: [] };
  const outcome = (accountId: string) => ({ accountId, outcome: 'filled', ticket: '1', reason: null, occurredAt: '2026-01-01T00:00:00.000Z' });
  const reported = (n: number) => ({ signalId: 'sig_1', status: 'reported', reported: n, accounts: Array.from({ length: n }, (_, i) => outcome(`acc-${i}`)) });

  test('when outcomes arrive, then it polls every intervalMs until reported >= expectAccounts', async () => {
    const h = harness([json(200, pending), json(200, reported(1)), json(200, reported(2))]);
    const result = await h.client.waitForOutcome('sig_1', { token: 't', expectAccounts: 2, deadlineMs: 10_000 });
    expect(result).toEqual({ complete: true, status: reported(2), polls: 3 });
    expect(h.waits).toEqual([250, 250]);
  });

  test('when the deadline passes first, then the last status with complete false (one last poll at the deadline)', async () => {
    const h = harness(Array.from({ length: 10 }, () => json(200, reported(1))));
    const result = await h.client.waitForOutcome('sig_1', { token: 't', expectAccounts: 2, deadlineMs: 1_000, intervalMs: 400 });
    expect(result).toEqual({ complete: false, status: reported(1), polls: 4 });
    expect(h.waits).toEqual([400, 400, 200]);
  });

  test('when a poll is rate limited, then the Retry-After is honoured and polling goes on', async () => {
    const h = harness([
      json(429, { error: 'rate_limit_exceeded', scope: 'account_read' }, { 'retry-after': '2' }),
      json(500, { error: 'x' }),
      json(200, reported(1)),
    ]);
    const result = await h.client.waitForOutcome('sig_1', { token: 't', expectAccounts: 1, deadlineMs: 10_000 });
    expect(result.complete).toBe(true);
    expect(h.waits).toEqual([2_000, 250]);
  });

  test('when the token is refused, then it throws at once', async () => {
    const h = harness([json(401, { error: 'Missing or invalid API token' }), json(200, reported(1))]);
    await expect(h.client.waitForOutcome('sig_1', { token: 't', expectAccounts: 1 })).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(h.calls).toHaveLength(1);
  });

  test('when no poll ever succeeds before the deadline, then the last error is thrown', async () => {
    const h = harness(Array.from({ length: 10 }, () => json(500, { error: 'down' })));
    await expect(h.client.waitForOutcome('sig_1', { token: 't', expectAccounts: 1, deadlineMs: 500 })).rejects.toMatchObject({ kind: 'server_error' });
  });
});
