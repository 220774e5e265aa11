import fc from 'fast-check';
import { parseAlertLine } from '../../src/domain/alert-line';
import { validateSignal } from '../../src/domain/signal';
import { alertLineArbitraries } from '../helpers/alert-line-arbitraries';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * One-line alerts posted to the real service (ingress on the run's Temporal and Redis) the way TradingView posts a
 * message that is not JSON: text/plain. Random, assembled and mutated lines (the generators of the unit properties)
 * must each get a 400 whose body is the parser's refusal, or the answer the same body would get as JSON (401 for a
 * wrong secret, 400 from the schema), and never a 5xx. Lines that would be accepted are not sent: they would start
 * real signals (test/e2e/alert-line.test.ts runs those through to a fill).
 */

const RUNS = 400;
const SEED = 2720;

describe('one-line alerts over HTTP', () => {
  let stack: Stack;
  let f: Fixture;
  const statuses: number[] = [];

  beforeAll(async () => {
    stack = await startStack({ worker: false });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const asTradingView = async (url: string, text: string) => {
    const res = await post(url, text, { 'content-type': 'text/plain; charset=utf-8' });
    statuses.push(res.status);
    return res;
  };

  /** What the service must answer for a line; undefined when it would be accepted (not sent). */
  function expected(text: string): { status: number; body?: unknown; error?: RegExp } | undefined {
    try {
      const json = JSON.parse(text) as unknown;
      // JSON stays JSON: an object without this owner's secret is a 401, anything else is not a signal.
      if (typeof json === 'object' && json !== null && !Array.isArray(json)) return { status: 401 };
      return { status: 400, error: /^Invalid signal: the body must be a JSON object$/ };
    } catch {
      // Not JSON: a line, unless it looks like JSON or is empty.
    }
    if (text.trim() === '' || /^\s*[[{"]/.test(text)) return { status: 400, error: /^Malformed JSON body$/ };
    const line = parseAlertLine(text);
    if (!line.ok) return { status: 400, body: { error: line.error, details: line.details } };
    const secret = line.body.secret as string;
    if (secret !== f.secret) return { status: 401 };
    if (!validateSignal(line.body).ok) return { status: 400, error: /^Invalid signal: / };
    return undefined;
  }

  test(`when ${RUNS} random, assembled and mutated lines are posted as text/plain (both URLs), then each gets its 400 (or 401), never a 5xx`, async () => {
    const lines = alertLineArbitraries({ secret: f.secret, nowMs: Date.now() + 10 * 60_000 });
    const samples = fc.sample(fc.tuple(fc.oneof({ arbitrary: lines.mutatedLineArb, weight: 3 }, lines.assembledLineArb, lines.randomLineArb), fc.boolean()), {
      numRuns: RUNS,
      seed: SEED,
    });
    let sent = 0;
    const kinds = new Map<string, number>();
    for (const [generated, perAccount] of samples) {
      // What the server reads: the UTF-8 of the text (a lone surrogate becomes U+FFFD on the way).
      const text = Buffer.from(generated, 'utf8').toString('utf8');
      const want = expected(text);
      if (!want) continue;
      const url = `${stack.ingress.url}/webhook/custom${perAccount ? `/${f.accounts[0]!.id}` : ''}`;
      const res = await asTradingView(url, text);
      sent++;
      const seen = { text, status: res.status, body: res.body as unknown };
      if (want.body !== undefined) expect(seen).toEqual({ text, status: want.status, body: want.body });
      else expect(seen).toEqual({ text, status: want.status, body: expect.objectContaining(want.error ? { error: expect.stringMatching(want.error) } : {}) });
      const kind = want.body ? 'line refused' : `${want.status}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    expect(sent).toBeGreaterThan(RUNS * 0.8);
    // The parser's refusals are most of them, and the secret check and the schema were reached too.
    expect(kinds.get('line refused')).toBeGreaterThan(RUNS / 2);
    expect(kinds.get('401')).toBeGreaterThan(0);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  }, 120_000);

  test('when a line is refused, then the body is the same error shape as any validation error, and no correlationId', async () => {
    const res = await asTradingView(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, `${f.secret},buy,EURUSD,vol=abc`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Invalid one-line alert: token 4 "vol=abc": unknown key vol',
      details: [{ path: '', message: 'token 4 "vol=abc": unknown key vol' }],
    });
  });

  test('when a well-read line fails the schema, then it is the 400 its JSON body gets, naming the field', async () => {
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const line = await asTradingView(url, `${f.secret},buy,EURUSD,slpips=20`);
    const json = await post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', slPips: 20 });
    expect(line.status).toBe(400);
    expect(line.body).toEqual(json.body);
    expect(line.body.error).toMatch(/volume is required for buy/);
  });

  test('when a line carries a wrong secret, then it is the 401 of a JSON body with that secret', async () => {
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const line = await asTradingView(url, 'whsec_not-a-real-secret-at-all-0000000000,buy,EURUSD,volume=0.1');
    expect(line.status).toBe(401);
    expect(line.body).toEqual({ error: 'Invalid webhook secret or account', correlationId: expect.any(String) });
  });

  test('when a body looks like JSON but is broken, then it stays "Malformed JSON body" as text/plain and as application/json', async () => {
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const broken = `{"secret":"${f.secret}","action":"buy","symbol":"EURUSD","volume":NaN}`;
    const malformed = { error: 'Malformed JSON body', details: [{ path: '', message: 'the body is not valid JSON' }] };
    expect((await asTradingView(url, broken)).body).toEqual(malformed);
    expect((await post(url, broken)).body).toEqual(malformed);
    // A line sent as application/json is not read as a line either: JSON was announced.
    const asJson = await post(url, `${f.secret},buy,EURUSD,volume=0.1`);
    expect({ status: asJson.status, body: asJson.body }).toEqual({ status: 400, body: malformed });
  });
});
