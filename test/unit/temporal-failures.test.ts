import { AmbiguousStartError, certainlyNotStarted, isTemporalBackpressure, neverSent, NotSentError } from '../../src/temporal/failures';

/** A gRPC service error as @temporalio/client surfaces it (isGrpcServiceError checks code, details and metadata). */
function grpcError(code: number, details: string) {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: { getMap: () => ({}) } });
}

describe('classifying Temporal failures on the ingress path', () => {
  test('when Temporal refuses work (RESOURCE_EXHAUSTED), then it is backpressure and certainly nothing started', () => {
    const err = grpcError(8, 'namespace rate limit exceeded');
    expect(isTemporalBackpressure(err)).toBe(true);
    expect(certainlyNotStarted(err)).toBe(true);
  });

  test('when the call never left (no connection, no time), then it is backpressure and certainly nothing started', () => {
    const err = new NotSentError('cannot reach Temporal region default', { cause: new Error('connect ECONNREFUSED') });
    expect(isTemporalBackpressure(err)).toBe(true);
    expect(certainlyNotStarted(err)).toBe(true);
  });

  test.each([
    ['DEADLINE_EXCEEDED', 4],
    ['UNAVAILABLE', 14],
    ['CANCELLED', 1],
  ])('when the answer was lost (%s), then it is backpressure but the start may have happened', (_name, code) => {
    const err = grpcError(code, 'lost');
    expect(isTemporalBackpressure(err)).toBe(true);
    expect(certainlyNotStarted(err)).toBe(false);
  });

  test('when a start stayed unconfirmed, then it is never taken for "not started"', () => {
    expect(certainlyNotStarted(new AmbiguousStartError('may have happened', { cause: grpcError(4, 'deadline') }))).toBe(false);
  });

  test('when Temporal gives a definite other answer (bad argument), then it is no backpressure and nothing started', () => {
    const err = grpcError(3, 'search attribute SignalId is not defined');
    expect(isTemporalBackpressure(err)).toBe(false);
    expect(certainlyNotStarted(err)).toBe(true);
  });

  test.each([
    [14, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7233', true],
    [14, 'connect EHOSTUNREACH 10.0.0.9:7233', true],
    [14, 'Connection dropped', false],
    [4, 'Deadline exceeded', false],
    [8, 'namespace rate limit exceeded', false],
  ])('when a gRPC status is %i "%s", then it counts as never sent: %p (the client does not retry those; launch decides)', (code, details, expected) => {
    expect(neverSent({ code, details })).toBe(expected);
  });
});
