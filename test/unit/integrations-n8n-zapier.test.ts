import fs from 'node:fs';
import path from 'node:path';
import { validateSignal } from '../../src/domain/signal';
import { ROOT, read, NOW, fencedBlocks, stringsIn } from '../helpers/integration-docs';

/**
 * The integration guides of docs/integrations are part of the product: a template that the service would refuse, or
 * a workflow that n8n cannot import, is a bug. These checks hold them to the schema the ingress validates with.
 */

// ---------------------------------------------------------------------------------------------------------------
// n8n
// ---------------------------------------------------------------------------------------------------------------

interface N8nNode {
  id: string;
  name: string;
  type: string;
  typeVersion: number;
  position: [number, number];
  parameters: Record<string, any>;
  credentials?: Record<string, { id: string | null; name: string }>;
  [key: string]: unknown;
}
interface N8nConnection {
  node: string;
  type: string;
  index: number;
}
interface N8nWorkflow {
  name: string;
  nodes: N8nNode[];
  connections: Record<string, Record<string, N8nConnection[][]>>;
  settings?: Record<string, unknown>;
}

const WORKFLOW_FILE = 'docs/integrations/n8n/external-signals.workflow.json';

describe('n8n workflow (docs/integrations/n8n/external-signals.workflow.json)', () => {
  const raw = read(WORKFLOW_FILE);
  const workflow = JSON.parse(raw) as N8nWorkflow;
  const byName = new Map(workflow.nodes.map((n) => [n.name, n]));
  const ofType = (type: string) => workflow.nodes.filter((n) => n.type === type);
  /** The nodes directly after `name`, per output (an If has two: true, false). */
  const outputs = (name: string) => (workflow.connections[name]?.main ?? []).map((out) => out.map((c) => c.node));
  const next = (name: string) => outputs(name).flat();
  function reachable(from: string): Set<string> {
    const seen = new Set<string>();
    const queue = [...next(from)];
    while (queue.length > 0) {
      const n = queue.shift()!;
      if (seen.has(n)) continue;
      seen.add(n);
      queue.push(...next(n));
    }
    return seen;
  }
  const conditionText = (n: N8nNode) => JSON.stringify(n.parameters.conditions ?? {});

  test('when it is parsed, then it is an n8n workflow: a nodes array and a connections object', () => {
    expect(typeof workflow.name).toBe('string');
    expect(Array.isArray(workflow.nodes)).toBe(true);
    expect(workflow.connections).toEqual(expect.any(Object));
    expect(Array.isArray(workflow.connections)).toBe(false);
  });

  test('every node has id, name, type, typeVersion, position and parameters, with unique ids and names', () => {
    for (const n of workflow.nodes) {
      expect({
        node: n.name,
        id: typeof n.id,
        name: typeof n.name,
        type: n.type,
        typeVersion: typeof n.typeVersion,
        position: n.position,
        parameters: typeof n.parameters,
      }).toEqual({
        node: n.name,
        id: 'string',
        name: 'string',
        type: expect.stringMatching(/^n8n-nodes-base\.[A-Za-z]+$/),
        typeVersion: 'number',
        position: [expect.any(Number), expect.any(Number)],
        parameters: 'object',
      });
    }
    expect(new Set(workflow.nodes.map((n) => n.id)).size).toBe(workflow.nodes.length);
    expect(new Set(workflow.nodes.map((n) => n.name)).size).toBe(workflow.nodes.length);
  });

  test("every connection, and every $('…') reference in an expression, names an existing node", () => {
    for (const [source, byType] of Object.entries(workflow.connections)) {
      expect({ source, exists: byName.has(source) }).toEqual({ source, exists: true });
      for (const [type, outs] of Object.entries(byType)) {
        expect(type).toBe('main');
        for (const c of outs.flat())
          expect({ source, target: c.node, exists: byName.has(c.node), type: c.type, index: c.index }).toEqual({
            source,
            target: c.node,
            exists: true,
            type: 'main',
            index: 0,
          });
      }
    }
    for (const [, name] of raw.matchAll(/\$\('([^']+)'\)/g))
      expect({ referenced: name, exists: byName.has(name!) }).toEqual({ referenced: name, exists: true });
  });

  test('every Code node and every {{ expression }} is valid JavaScript', () => {
    for (const n of ofType('n8n-nodes-base.code')) {
      expect(() => new Function(n.parameters.jsCode as string)).not.toThrow();
    }
    const expressions = stringsIn(workflow.nodes.map((n) => n.parameters)).filter((s) => s.startsWith('='));
    expect(expressions.length).toBeGreaterThan(5);
    for (const e of expressions) {
      for (const [, js] of e.matchAll(/\{\{([\s\S]*?)\}\}/g)) expect(() => new Function(`return (${js});`)).not.toThrow();
    }
  });

  test("when Build signal runs, then its signal plus the credential's secret is accepted, with a key of at most 128 characters", () => {
    const build = byName.get('Build signal')!;
    const run = new Function('$input', '$execution', '$workflow', build.parameters.jsCode as string);
    const [item] = run({ first: () => ({ json: {} }) }, { id: '1234' }, { name: 'External Signals' }) as { json: Record<string, any> }[];
    const out = item!.json;
    expect(out.baseUrl).toMatch(/^https:\/\//);
    expect(out.isEntry).toBe(true);
    expect(out.idempotencyKey.length).toBeGreaterThan(0);
    expect(out.idempotencyKey.length).toBeLessThanOrEqual(128);
    const result = validateSignal({ ...out.signal, secret: 'whsec_sample', idempotencyKey: out.idempotencyKey }, NOW);
    if (!result.ok) throw new Error(result.error);
    // With an event id from the trigger, the key is built from it.
    const [fromEvent] = run({ first: () => ({ json: { eventId: 'row-42' } }) }, { id: '1234' }, { name: 'x' }) as { json: Record<string, any> }[];
    expect(fromEvent!.json.idempotencyKey).toBe('n8n-row-42');
  });

  test('it starts with a trigger and builds the signal in a Code or Set node', () => {
    const triggers = workflow.nodes.filter((n) => /Trigger$|\.webhook$/.test(n.type));
    expect(triggers).toHaveLength(1);
    const [builder] = next(triggers[0]!.name).map((name) => byName.get(name)!);
    expect(['n8n-nodes-base.code', 'n8n-nodes-base.set']).toContain(builder!.type);
  });

  const submit = () => ofType('n8n-nodes-base.httpRequest').find((n) => n.parameters.method === 'POST')!;
  const poll = () => ofType('n8n-nodes-base.httpRequest').find((n) => n.parameters.method === 'GET')!;

  test('it POSTs the signal to /webhook/custom with a JSON body and an X-Idempotency-Key from an expression, keeping every answer', () => {
    const n = submit();
    expect(n).toBeDefined();
    expect(n.typeVersion).toBe(4.2);
    expect(n.parameters.url).toMatch(/^=.*\/webhook\/custom/);
    expect(n.parameters).toMatchObject({ sendBody: true, specifyBody: 'json', sendHeaders: true });
    expect(n.parameters.jsonBody).toMatch(/^=\{\{/);
    const header = (n.parameters.headerParameters.parameters as { name: string; value: string }[]).find((h) => h.name.toLowerCase() === 'x-idempotency-key');
    expect(header?.value).toMatch(/^=\{\{.*\}\}$/);
    expect(n.parameters.options.response.response).toMatchObject({ neverError: true, fullResponse: true });
    // The webhook secret comes from an n8n credential, merged into the body; referenced by name only.
    expect(n.parameters).toMatchObject({ authentication: 'genericCredentialType', genericAuthType: 'httpCustomAuth' });
    expect(n.credentials).toEqual({ httpCustomAuth: { id: null, name: expect.stringMatching(/\S/) } });
  });

  test('on 202 it waits, then GETs /v1/signals/{signalId} with a bearer token from an httpHeaderAuth credential', () => {
    const accepted = ofType('n8n-nodes-base.if').find((n) => next(submit().name).includes(n.name))!;
    expect(accepted).toBeDefined();
    expect(conditionText(accepted)).toMatch(/statusCode/);
    expect(conditionText(accepted)).toMatch(/202/);
    const afterAccepted = reachable(outputs(accepted.name)[0]![0]!);
    const wait = ofType('n8n-nodes-base.wait').find((w) => afterAccepted.has(w.name))!;
    expect(wait).toBeDefined();
    const n = poll();
    expect(reachable(wait.name).has(n.name)).toBe(true);
    expect(n.typeVersion).toBe(4.2);
    expect(n.parameters.url).toMatch(/^=.*\/v1\/signals\/\{\{.*signalId.*\}\}$/);
    expect(n.parameters).toMatchObject({ authentication: 'genericCredentialType', genericAuthType: 'httpHeaderAuth' });
    expect(n.credentials).toEqual({ httpHeaderAuth: { id: null, name: expect.stringMatching(/\S/) } });
  });

  test('it polls until reported >= the outcomes it expects (accountsResolved, or fewer the token covers), looping back at most maxPolls (20) times', () => {
    const reported = ofType('n8n-nodes-base.if').find((n) => next(poll().name).includes(n.name))!;
    expect(conditionText(reported)).toMatch(/reported.*>=.*\.expect\b/);
    expect(byName.get('Count poll')!.parameters.jsCode).toMatch(
      /expectAccounts > 0 \? Math\.min\(build\.expectAccounts, accepted\.accountsResolved\) : accepted\.accountsResolved/,
    );
    const [whenReported, whenNot] = outputs(reported.name);
    expect(whenReported!.length).toBe(1);
    // Not reported yet: a bounded loop back to the Wait.
    const bound = byName.get(whenNot![0]!)!;
    expect(bound.type).toBe('n8n-nodes-base.if');
    expect(conditionText(bound)).toMatch(/maxPolls/);
    const [again, stop] = outputs(bound.name);
    expect(byName.get(again![0]!)!.type).toBe('n8n-nodes-base.wait');
    expect(reachable(again![0]!).has(poll().name)).toBe(true);
    expect(stop).toHaveLength(1);
    expect(raw).toMatch(/maxPolls: 20\b/);
  });

  test('when the polls run out, then it outputs the outcomes it has, marked incomplete, instead of failing', () => {
    const last = byName.get('Outcomes so far')!;
    expect(last.type).toBe('n8n-nodes-base.code');
    const run = (pollAnswer: unknown) =>
      new Function('$', last.parameters.jsCode as string)((name: string) => ({
        last: () => ({ json: name === 'Count poll' ? { signalId: 'sig_x', expect: 3, poll: 20 } : pollAnswer }),
      })) as { json: Record<string, unknown> }[];
    const two = run({
      statusCode: 200,
      body: {
        accounts: [
          { accountId: 'a', outcome: 'filled', ticket: '1', occurredAt: 't' },
          { accountId: 'b', outcome: 'rejected', reason: 'risk_x', occurredAt: 't' },
        ],
      },
    });
    expect(two.map((i) => i.json)).toEqual([
      expect.objectContaining({
        accountId: 'a',
        outcome: 'filled',
        ticket: '1',
        complete: false,
        note: expect.stringMatching(/^2 of 3 outcome\(s\) after 20 polls/),
      }),
      expect.objectContaining({ accountId: 'b', outcome: 'rejected', reason: 'risk_x', complete: false }),
    ]);
    expect(run({ statusCode: 503, body: {} }).map((i) => i.json)).toEqual([
      { signalId: 'sig_x', complete: false, outcome: null, note: expect.stringMatching(/^0 of 3/) },
    ]);
  });

  test('it retries only a 5xx without signalId, a bounded number of times, with the same submit node (same key)', () => {
    const accepted = ofType('n8n-nodes-base.if').find((n) => next(submit().name).includes(n.name))!;
    const retry = byName.get(outputs(accepted.name)[1]![0]!)!;
    expect(retry.type).toBe('n8n-nodes-base.if');
    expect(conditionText(retry)).toMatch(/statusCode >= 500/);
    expect(conditionText(retry)).toMatch(/signalId/);
    expect(conditionText(retry)).toMatch(/\$runIndex < \d/);
    expect(reachable(outputs(retry.name)[0]![0]!).has(submit().name)).toBe(true);
    // Node-level "Retry On Fail" only sees failures without an HTTP answer, since Never Error is on.
    expect(submit()).toMatchObject({ retryOnFail: true, maxTries: expect.any(Number) });
  });

  test('it holds no webhook secret, API token or bearer value', () => {
    expect(raw).not.toMatch(/whsec_|tok_/);
    expect(raw).not.toMatch(/Bearer\s+[A-Za-z0-9_]/);
    expect(raw).not.toMatch(/"secret"\s*:\s*"[^"<]/);
    for (const n of workflow.nodes) {
      for (const cred of Object.values(n.credentials ?? {})) expect(Object.keys(cred).sort()).toEqual(['id', 'name']);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Zapier and the README
// ---------------------------------------------------------------------------------------------------------------

describe('Zapier guide and README links', () => {
  test('every signal shown in zapier.md, with the secret filled in, is accepted', () => {
    const signals = fencedBlocks(read('docs/integrations/zapier.md'), 'json');
    expect(signals.length).toBeGreaterThan(0);
    for (const block of signals) {
      const result = validateSignal(JSON.parse(block.replace('<your webhook secret>', 'whsec_sample')), NOW);
      if (!result.ok) throw new Error(`${result.error}\n${block}`);
    }
  });

  test('README.md links the three integration guides, and each link resolves', () => {
    const readme = read('README.md');
    for (const link of ['docs/integrations/tradingview.md', 'docs/integrations/n8n/', 'docs/integrations/zapier.md']) {
      expect(readme).toContain(`](${link})`);
      expect(fs.existsSync(path.join(ROOT, link))).toBe(true);
    }
    expect(read('docs/integrations/n8n/README.md')).toContain('external-signals.workflow.json');
  });
});
