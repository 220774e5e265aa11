import { randomBytes } from 'node:crypto';
import { get, seedOwner, startStack, type Stack } from '../helpers/stack';

/**
 * The poll's 500 (spec §4.3: "Internal error reading outcomes; safe to retry"), forced: the ingress reads a Temporal
 * namespace the test server does not have, so Temporal answers every read with a definite error that is neither
 * backpressure (503) nor "no such signal" (pending). Nothing else breaks: the token, the throttle and the kept
 * reports are in the run's real Redis.
 */
describe('GET /v1/signals/:id when Temporal answers with an error', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { TEMPORAL_NAMESPACE: `absent-${randomBytes(4).toString('hex')}` } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('then 500 with exactly the poll error body, and no correlationId or internals', async () => {
    const f = await seedOwner(stack.registry);
    const res = await get(`${stack.ingress.url}/v1/signals/sig_${'a'.repeat(24)}`, { authorization: `Bearer ${f.token}` });
    expect({ status: res.status, body: res.body }).toEqual({ status: 500, body: { error: 'Internal error reading outcomes; safe to retry' } });
  });
});
