import { signalKeys } from '../../src/redis-keys';
import { startTemporal, waitFor, type TemporalServer } from '../../support/infra';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { timed } from '../../support/http';

/**
 * Spec edges (issue 12 item 10): the order of the 401 against the 400, and the answer when a single region's Temporal
 * is down.
 */

const buy = (secret: string) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });

describe('spec §5 rule 1: the secret is checked before the rest of the body', () => {
  let stack: Stack;
  let f: Fixture;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => stack?.stop());

  test.each([
    ['an unknown action', { action: 'teleport' }],
    ['a negative volume', { volume: -1 }],
    ['an unknown field', { colour: 'red' }],
  ])('when an invalid secret comes with %s, then 401 (not 400)', async (_what, change) => {
    for (const url of [`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, `${stack.ingress.url}/webhook/custom`]) {
      const res = await post(url, { ...buy('whsec_not-a-real-secret-at-all-000000000000'), ...change });
      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: { error: expect.any(String), correlationId: expect.any(String) } });
    }
  });

  test('when the valid secret comes with a bad body, then 400 with details', async () => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { ...buy(f.secret), volume: -1 });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'volume' })]));
  });

  test("when a valid secret comes with a bad body for another owner's account and for an account that does not exist, then both get the same answer", async () => {
    const other = await seedOwner(stack.registry);
    const answers = [];
    for (const id of [other.accounts[0]!.id, 'acc-does-not-exist']) {
      const res = await post(`${stack.ingress.url}/webhook/custom/${id}`, { ...buy(f.secret), volume: -1 });
      // The correlationId is each request's own; everything else must be the same.
      const { correlationId: _id, ...body } = res.body as Record<string, unknown>;
      answers.push({ status: res.status, body });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(401);
  });
});

/** The service's default deadline for a submission's Temporal calls (TEMPORAL_START_TIMEOUT_MS). */
const START_TIMEOUT_MS = 1_500;

describe("the only region's Temporal goes down after the ingress has talked to it", () => {
  let temporal: TemporalServer;
  let stack: Stack;
  let f: Fixture;
  beforeAll(async () => {
    temporal = await startTemporal();
    // The service's default Temporal deadlines (1.5 s for a submission, the fixed 1 s to connect), not the tests' longer ones.
    stack = await startStack({
      worker: false,
      env: { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_START_TIMEOUT_MS: String(START_TIMEOUT_MS) },
    });
    f = await seedOwner(stack.registry);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await temporal?.stop();
  });

  test('when signals arrive while it is down, then each is accepted (202) while it is still down, from its record, and started from its record once Temporal is back', async () => {
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    // The ingress's connection to Temporal is established and in use.
    const first = await post(url, buy(f.secret));
    expect(first.status).toBe(202);
    await temporal.stop();

    const answers: { status: number; body: Record<string, unknown>; ms: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await timed(() => post(url, buy(f.secret)));
      answers.push({ status: r.value.status, body: r.value.body as Record<string, unknown>, ms: Math.round(r.ms) });
    }

    console.log(`time to the 202 with Temporal down: ${answers.map((a) => a.ms).join(', ')} ms`);
    for (const a of answers) {
      expect({ status: a.status, body: a.body }).toEqual({
        status: 202,
        body: { success: true, signalId: expect.stringMatching(/^sig_/), correlationId: expect.any(String), accountsResolved: 1 },
      });
    }
    // Answered while Temporal is down (each awaited before its restart below: an answer that waited for Temporal
    // would never come, and the test fails on its timeout), and from the record: each signal's start is still
    // pending in Redis.
    const inputs = signalKeys.pendingStarts(stack.config.temporal.taskQueue).inputs;
    const members = answers.map((a) => `default|${a.body.signalId as string}`);
    expect(await Promise.all(members.map((m) => stack.redis.hexists(inputs, m)))).toEqual([1, 1, 1]);

    await temporal.start();
    await waitFor(
      'the starts made once Temporal is back',
      async () => (await Promise.all(members.map((m) => stack.redis.hexists(inputs, m)))).every((n) => n === 0),
      30_000,
      250,
    );
  }, 90_000);
});
