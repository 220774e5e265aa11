import fc from 'fast-check';
import { startTemporal, waitFor, type TemporalServer } from '../../support/infra';
import { ensureBuilt, serviceEnv, startIngressProcess, type IngressProcess } from '../../support/processes';
import { signalArbitraries, type Body, type InvalidCase } from '../helpers/signal-arbitraries';
import { httpPost, importRegistry, makeRegistry, scenarioDir, tally, temporalClient, writeRegistryFile, type Sent } from './kit';
import type { HttpResult } from '../../support/processes';

/**
 * The request schema, property-based, over HTTP against a running ingress (the built program): the same fast-check
 * generators as the unit properties of validateSignal (test/helpers/signal-arbitraries.ts), with the account's real
 * secret and expiries in the future of the real clock.
 *
 * Run sizes: VALID_RUNS generated valid bodies (all 17 actions, both webhook URLs), INVALID_RUNS generated invalid
 * ones (seven kinds of mutation of valid bodies), and SECRET_RUNS + SHAPE_RUNS for the 401 and body-shape rules, with
 * fixed seeds; about a minute in all on a quiet machine. The valid ones start real workflows: the scenario has a
 * Temporal dev server of its own (and no worker: acceptance needs none), so the run's shared server is not flooded.
 * Limits are raised (serviceEnv) so that no limiter interferes; every valid body carries a unique idempotency key.
 */

const VALID_RUNS = 1000;
const INVALID_RUNS = 1000;
const SECRET_RUNS = 200;
const SHAPE_RUNS = 200;
const SEED = 20241120;

const reg = makeRegistry('schema', 1, { platform: 'mt5' });
const account = reg.accounts[0]!;

/** A detail names the field when its path is the field (or under it) or its message mentions it. */
function namesField(details: { path: string; message: string }[], field: string): boolean {
  return details.some((d) => d.path === field || d.path.startsWith(`${field}.`) || d.message.includes(field));
}

describe('the request schema over HTTP (fast-check against the running ingress)', () => {
  let temporal: TemporalServer | undefined;
  let ingress: IngressProcess | undefined;
  let env: Record<string, string>;
  /** Every answer of every property, to check that none was a 5xx. */
  const answers: Pick<Sent, 'status' | 'ms'>[] = [];
  const accepted: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    const dir = scenarioDir(reg.tag);
    temporal = await startTemporal();
    // No worker runs here: every accepted signal's account workflow waits, which the door does not refuse.
    env = serviceEnv({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default', LOG_LEVEL: 'warn' });
    await importRegistry(writeRegistryFile(dir, 'registry.json', reg), env);
    ingress = await startIngressProcess(env);
  }, 120_000);

  afterAll(async () => {
    await ingress?.stop();
    await temporal?.stop();
    if (answers.length > 0) {
      const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
      console.log(
        `[fault] schema over HTTP: ${answers.length} requests ${JSON.stringify(tally(answers, (a) => a.status))}; ` +
          `latency p50 ${ms[Math.floor(ms.length / 2)]} ms, p99 ${ms[Math.floor(ms.length * 0.99)]} ms, max ${ms.at(-1)} ms`,
      );
    }
  });

  let keySeq = 0;
  async function send(body: unknown, route: 'account' | 'broadcast', headers: Record<string, string> = {}): Promise<HttpResult> {
    const url = route === 'account' ? `${ingress!.url}/webhook/custom/${account.id}` : `${ingress!.url}/webhook/custom`;
    const started = Date.now();
    const res = await httpPost(url, body, headers);
    answers.push({ status: res.status, ms: Date.now() - started });
    // No answer may be a 5xx: each property fails on its own first one (a test of all of them at the end passed only
    // after the others had run, and alone checked nothing).
    if (res.status >= 500) throw new Error(`${res.status} for ${typeof body === 'string' ? body : JSON.stringify(body)}: ${res.text}`);
    return res;
  }

  // Expiries are generated from 10 minutes ahead of now, so they are still in the future when the ingress checks them.
  const arbs = signalArbitraries({ nowMs: Date.now() + 10 * 60_000, secret: fc.constant(reg.secret) });
  const routeArb = fc.constantFrom<'account' | 'broadcast'>('account', 'broadcast');

  test(`when ${VALID_RUNS} generated valid bodies (every action, both URLs) are POSTed, then each gets a 202 with a new signalId`, async () => {
    await fc.assert(
      fc.asyncProperty(arbs.validBodyArb, routeArb, async (generated, route) => {
        // Unique keys: in the body field when the generator put one there, else in the header.
        const key = `${reg.tag}-${++keySeq}`;
        const body: Body = { ...generated };
        const headers: Record<string, string> = {};
        if ('idempotencyKey' in body) body.idempotencyKey = key;
        else headers['x-idempotency-key'] = key;
        const res = await send(body, route, headers);
        if (res.status !== 202) throw new Error(`expected 202, got ${res.status} ${res.text}`);
        expect(res.body).toEqual({
          success: true,
          signalId: expect.stringMatching(/^sig_[0-9a-f]{32}$/),
          correlationId: expect.any(String),
          accountsResolved: 1,
        });
        expect(res.headers.get('idempotent-replayed')).toBeNull();
        accepted.push(res.body.signalId as string);
      }),
      { numRuns: VALID_RUNS, seed: SEED },
    );
    expect(new Set(accepted).size).toBe(VALID_RUNS);
    // Each 202 is a signal workflow in Temporal, and nothing else was started.
    const view = await temporalClient({ address: temporal!.address, namespace: 'default' });
    try {
      // Visibility is eventually consistent: wait for the count to catch up, then it must be exactly one per 202.
      const query = `TaskQueue = "${env.TEMPORAL_TASK_QUEUE}" AND WorkflowType = "signalWorkflow"`;
      const count = await waitFor(
        'visibility to count every signal workflow',
        async () => {
          const c = (await view.client.workflow.count(query)).count;
          return c >= VALID_RUNS ? c : undefined;
        },
        15_000,
        200,
      ).catch(async () => (await view.client.workflow.count(query)).count);
      expect(count).toBe(VALID_RUNS);
      const sample = accepted.filter((_, i) => i % 100 === 0);
      for (const signalId of sample) expect((await view.client.workflow.getHandle(`signal/${signalId}`).describe()).type).toBe('signalWorkflow');
    } finally {
      await view.close();
    }
  }, 180_000);

  const invalidArb: fc.Arbitrary<InvalidCase> = fc.oneof(
    arbs.invalid.droppedRequired(true),
    arbs.invalid.droppedOneOf,
    arbs.invalid.unknownKey,
    arbs.invalid.numericAsString,
    arbs.invalid.notANumber,
    arbs.invalid.volumeOutOfRange,
    arbs.invalid.unusedField,
  );

  test(`when ${INVALID_RUNS} generated invalid bodies are POSTed, then each gets a 400 whose error and details name the problem`, async () => {
    const kinds: string[] = [];
    await fc.assert(
      fc.asyncProperty(invalidArb, routeArb, async (c, route) => {
        const res = await send(c.body, route, { 'x-idempotency-key': `${reg.tag}-invalid-${++keySeq}` });
        if (res.status !== 400) throw new Error(`expected 400 (${c.kind}), got ${res.status} ${res.text}`);
        expect(res.body).toEqual({ error: expect.stringMatching(/^Invalid signal: /), details: expect.any(Array) });
        for (const name of c.names) {
          if (!namesField(res.body.details, name)) throw new Error(`no detail names ${name} (${c.kind}): ${JSON.stringify(res.body.details)}`);
          expect(res.body.error).toContain(name);
        }
        kinds.push(c.kind);
      }),
      { numRuns: INVALID_RUNS, seed: SEED },
    );
    // Every kind of mutation was exercised.
    expect(Object.keys(tally(kinds, (k) => k)).sort()).toEqual(
      ['dropped_one_of', 'dropped_required', 'not_a_number', 'numeric_as_string', 'unknown_key', 'unused_field', 'volume_out_of_range'].sort(),
    );
  }, 180_000);

  test(`when ${SECRET_RUNS} generated bodies (valid or not) carry a missing, empty or non-string secret, then each gets a 401 whatever else is wrong`, async () => {
    const badSecret = fc.oneof(
      fc.constant(undefined),
      fc.constant(''),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.object({ maxDepth: 1 }),
    );
    const anyBody = fc.oneof(
      arbs.validBodyArb,
      invalidArb.map((c) => c.body),
    );
    await fc.assert(
      fc.asyncProperty(anyBody, badSecret, routeArb, async (b, secret, route) => {
        const body: Body = { ...b };
        if (secret === undefined) delete body.secret;
        else body.secret = secret;
        const res = await send(body, route);
        if (res.status !== 401) throw new Error(`expected 401, got ${res.status} ${res.text}`);
        expect(res.body).toEqual({ error: 'Missing or invalid webhook secret', correlationId: expect.any(String) });
      }),
      { numRuns: SECRET_RUNS, seed: SEED },
    );
  }, 120_000);

  test(`when ${SHAPE_RUNS} generated bodies are not a JSON object (arrays, scalars, malformed text), then each gets a 400 with details`, async () => {
    const notObject = fc.oneof(
      fc
        .jsonValue()
        .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
        .map((v) => ({ text: JSON.stringify(v), malformed: false })),
      fc
        .string({ minLength: 1, maxLength: 200 })
        .filter((t) => {
          try {
            JSON.parse(t);
            return false;
          } catch {
            return true;
          }
        })
        .map((text) => ({ text, malformed: true })),
    );
    await fc.assert(
      fc.asyncProperty(notObject, routeArb, async ({ text, malformed }, route) => {
        const res = await send(text, route);
        if (res.status !== 400) throw new Error(`expected 400 for ${JSON.stringify(text)}, got ${res.status} ${res.text}`);
        expect(res.body).toEqual(
          malformed
            ? { error: 'Malformed JSON body', details: [{ path: '', message: 'the body is not valid JSON' }] }
            : { error: 'Invalid signal: the body must be a JSON object', details: [{ path: '', message: 'expected a JSON object' }] },
        );
      }),
      { numRuns: SHAPE_RUNS, seed: SEED },
    );
  }, 120_000);
});
