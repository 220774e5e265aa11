import { randomBytes } from 'node:crypto';
import { waitFor } from '../../support/infra';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { temporalClient, type TemporalView } from './kit';

/**
 * Hostile `meta` (issue 12 item 8): meta is the caller's free-form field. It is bounded in depth and size (400, never
 * a 500), and only its `origin` reaches Temporal history; the rest (a caller's API key, notes) is never stored there.
 */

const buy = (secret: string, meta: unknown) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.01, meta });

/**
 * A body whose meta is `levels` levels deep (meta itself is level 1), written as text (JSON.stringify would recurse
 * that deep): nested objects, or one object holding nested arrays (1 byte a level, so 30,000 levels fit in 64 KB).
 */
function deepMetaBody(secret: string, levels: number, kind: 'objects' | 'arrays' = 'objects'): string {
  const meta = kind === 'objects' ? `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}` : `{"a":${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}}`;
  return `{"secret":${JSON.stringify(secret)},"action":"buy","symbol":"EURUSD","volume":0.01,"meta":${meta}}`;
}

/** A workflow's whole history as text, every payload decoded (payload data are bytes of JSON). */
async function historyText(view: TemporalView, workflowId: string): Promise<string> {
  const history = await view.client.workflow.getHandle(workflowId).fetchHistory();
  return JSON.stringify(history, (key, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    return key === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
  });
}

describe('meta: bounded, and only its origin is kept in Temporal', () => {
  let stack: Stack;
  let f: Fixture;
  let view: TemporalView;
  beforeAll(async () => {
    stack = await startStack();
    f = await seedOwner(stack.registry);
    view = await temporalClient();
  });
  afterAll(async () => {
    await view?.close();
    await stack?.stop();
  });
  const url = () => `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;

  test.each([
    [6_000, 'objects'],
    [30_000, 'arrays'],
  ] as const)('when meta nests %i levels deep (%s), then 400 with a clear message (not a 500)', async (levels, kind) => {
    const res = await post(url(), deepMetaBody(f.secret, levels, kind));
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'meta', message: 'must nest at most 5 levels deep' }]);
  });

  test('when meta nests 5 levels, then it is accepted; 6 levels, then 400', async () => {
    expect((await post(url(), deepMetaBody(f.secret, 5))).status).toBe(202);
    expect((await post(url(), deepMetaBody(f.secret, 5, 'arrays'))).status).toBe(202);
    expect((await post(url(), deepMetaBody(f.secret, 6))).status).toBe(400);
    expect((await post(url(), deepMetaBody(f.secret, 6, 'arrays'))).status).toBe(400);
  });

  test('when meta is 50 KB, then 400 with a clear message', async () => {
    const res = await post(url(), buy(f.secret, { origin: 'tv', note: 'x'.repeat(50_000) }));
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'meta', message: 'must be at most 4096 bytes as JSON' }]);
    // Just under the bound is fine.
    expect((await post(url(), buy(f.secret, { note: 'x'.repeat(4000) }))).status).toBe(202);
  });

  test("when a signal carries meta with origin and other fields, then its workflows' histories hold the origin and nothing else of meta", async () => {
    const marker = `apikey-${randomBytes(8).toString('hex')}`;
    const origin = `tv-${randomBytes(4).toString('hex')}`;
    const res = await post(url(), buy(f.secret, { origin, apiKey: marker, nested: { note: marker } }));
    expect(res.status).toBe(202);
    const signalWorkflowId = `signal/${res.body.signalId}`;
    const accountWorkflowId = `${signalWorkflowId}/account/${f.accounts[0]!.id}`;
    // The account workflow runs once the worker has started it (its bridge is offline, so it waits for it).
    await waitFor(
      'the account workflow to start',
      () =>
        view.client.workflow
          .getHandle(accountWorkflowId)
          .describe()
          .then(
            () => true,
            () => undefined,
          ),
      20_000,
    );
    for (const id of [signalWorkflowId, accountWorkflowId]) {
      const text = await historyText(view, id);
      expect(text).toContain(origin);
      expect(text).not.toContain(marker);
      expect(text).not.toContain('apiKey');
    }
  });
});
