import fs from 'node:fs';
import path from 'node:path';
import { ACTIONS, requiresIdempotencyKey, type Action } from '../../src/domain/actions';
import { signalFields, validateSignal } from '../../src/domain/signal';

/**
 * The integration guides of docs/integrations are part of the product: a template that the service would refuse, or
 * a workflow that n8n cannot import, is a bug. These checks hold them to the schema the ingress validates with.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

// ---------------------------------------------------------------------------------------------------------------
// TradingView
// ---------------------------------------------------------------------------------------------------------------

type Template = Record<string, unknown>;
const templates = JSON.parse(read('docs/integrations/tradingview-templates.json')) as Record<string, Template>;
const tradingviewMd = read('docs/integrations/tradingview.md');

/** The numeric fields of the ExternalSignal, from the schema itself. */
const NUMERIC_FIELDS = new Set(
  Object.entries(signalFields)
    .filter(([, schema]) => (schema as unknown as { def: { type: string } }).def.type === 'number')
    .map(([field]) => field),
);
const PLACEHOLDER = /^\{\{[^{}]+\}\}$/;

/**
 * The alert message as the trader pastes it into TradingView: one field per line, objects on one line, and a numeric
 * field whose value is one placeholder written without quotes (so TradingView's value lands as a JSON number).
 */
function render(template: Template): string {
  const value = (field: string, v: unknown): string => {
    if (NUMERIC_FIELDS.has(field) && typeof v === 'string' && PLACEHOLDER.test(v)) return v;
    if (v !== null && typeof v === 'object') {
      return `{ ${Object.entries(v)
        .map(([k, x]) => `${JSON.stringify(k)}: ${JSON.stringify(x)}`)
        .join(', ')} }`;
    }
    return JSON.stringify(v);
  };
  return `{\n${Object.entries(template)
    .map(([field, v]) => `  ${JSON.stringify(field)}: ${value(field, v)}`)
    .join(',\n')}\n}`;
}

/** What TradingView puts in for each placeholder the guides use, as text (it fills in text, not JSON values). */
const TRADINGVIEW_SAMPLES: Record<string, string> = {
  ticker: 'EURUSD',
  exchange: 'OANDA',
  interval: '15',
  time: '2026-11-20T22:00:00Z',
  timenow: '2026-11-20T22:00:05Z',
  open: '1.08500',
  high: '1.08610',
  low: '1.08480',
  close: '1.08542',
  'plot("Target")': '1.09210',
  'strategy.order.action': 'buy',
  'strategy.order.contracts': '0.1',
  'strategy.order.price': '1.08542',
  'strategy.order.id': 'Long',
};
/** The values in <CAPITALS> the trader types in. */
const TRADER_SAMPLES: Record<string, string> = {
  YOUR_WEBHOOK_SECRET: 'whsec_sample',
  POSITION_TICKET: '50412',
  ORDER_TICKET: '50413',
  EXPIRY_UTC: '2026-11-21T21:00:00Z',
};
const NOW = () => Date.parse(TRADINGVIEW_SAMPLES.timenow!);

function fillTradingView(text: string, samples = TRADINGVIEW_SAMPLES): string {
  return text.replace(/\{\{([^{}]+)\}\}/g, (_, name: string) => {
    const sample = samples[name];
    if (sample === undefined) throw new Error(`unknown TradingView placeholder {{${name}}}`);
    return sample;
  });
}

function fillTrader(text: string): string {
  return text.replace(/<([A-Z_]+)>/g, (_, name: string) => {
    const sample = TRADER_SAMPLES[name];
    if (sample === undefined) throw new Error(`unknown value to fill in <${name}>`);
    return sample;
  });
}

/** The body the service receives when the alert fires. */
const fire = (message: string, samples = TRADINGVIEW_SAMPLES) => JSON.parse(fillTrader(fillTradingView(message, samples))) as Record<string, unknown>;

/** Every fenced block of a language in a Markdown text. */
function fencedBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp('^```' + language + '\\n([\\s\\S]*?)\\n```$', 'gm'))].map((m) => m[1]!);
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

describe('TradingView templates (docs/integrations/tradingview-templates.json, tradingview.md)', () => {
  test('the numeric fields come from the schema', () => {
    expect([...NUMERIC_FIELDS].sort()).toEqual([
      'breakevenOffsetPips',
      'breakevenTriggerPips',
      'maxSpreadPips',
      'partialVolume',
      'price',
      'sl',
      'slPips',
      'stopLimitPrice',
      'tp',
      'tpPips',
      'trailDistancePips',
      'trailStepPips',
      'trailTriggerPips',
      'volume',
    ]);
  });

  test('when the file is read, then it has one template for each of the 17 actions, keyed by its action', () => {
    expect(Object.keys(templates).sort()).toEqual([...ACTIONS].sort());
    for (const [action, template] of Object.entries(templates)) expect(template.action).toBe(action);
  });

  test.each([...ACTIONS])('when the %s alert fires, then the body TradingView sends is a signal the service accepts', (action) => {
    const body = fire(render(templates[action]!));
    const result = validateSignal(body, NOW);
    if (!result.ok) throw new Error(`${action}: ${result.error}`);
    expect(result.signal.action).toBe(action);
    expect(result.signal.secret).toBe(TRADER_SAMPLES.YOUR_WEBHOOK_SECRET);
  });

  test.each([...ACTIONS])('the %s template carries an idempotency key that a TradingView resend repeats', (action) => {
    const template = templates[action]!;
    expect(template.secret).toBe('<YOUR_WEBHOOK_SECRET>');
    expect(template.idempotencyKey).toBe(`{{ticker}}-{{timenow}}-${action}`);
    // Filled in once when the alert fires: the same message, hence the same key, on every resend.
    const first = fire(render(template));
    const resend = fire(render(template));
    expect(resend.idempotencyKey).toBe(first.idempotencyKey);
    // The next firing, one second later, is a new key.
    expect(fire(render(template), { ...TRADINGVIEW_SAMPLES, timenow: '2026-11-20T22:00:06Z' }).idempotencyKey).not.toBe(first.idempotencyKey);
    // At most 128 characters, even with the longest symbol the service accepts.
    const longest = fire(render(template), { ...TRADINGVIEW_SAMPLES, ticker: 'X'.repeat(32) });
    expect(String(longest.idempotencyKey).length).toBeLessThanOrEqual(128);
  });

  test('the four actions that need a key (spec §5 rule 4) have one, like every other template', () => {
    const needing = ACTIONS.filter((action) => {
      const result = validateSignal(fire(render(templates[action]!)), NOW);
      return result.ok && requiresIdempotencyKey(result.signal);
    });
    expect(needing.sort()).toEqual(['breakeven', 'close', 'modify_sl', 'modify_tp']);
  });

  test('every placeholder in the templates is a known TradingView placeholder or a <CAPITALS> value', () => {
    for (const [action, template] of Object.entries(templates)) {
      for (const s of stringsIn(template)) {
        for (const [, name] of s.matchAll(/\{\{([^{}]+)\}\}/g))
          expect({ action, placeholder: name, known: name! in TRADINGVIEW_SAMPLES }).toMatchObject({ known: true });
        for (const [, name] of s.matchAll(/<([^>]*)>/g)) expect({ action, value: name, known: name! in TRADER_SAMPLES }).toMatchObject({ known: true });
      }
    }
  });

  test('when a <CAPITALS> value is left unfilled, then the service refuses the signal instead of sending it to the broker', () => {
    const needsTicket = (Object.entries(templates) as [Action, Template][]).filter(([, t]) =>
      stringsIn(t).some((s) => /<(POSITION_TICKET|ORDER_TICKET|EXPIRY_UTC)>/.test(s)),
    );
    expect(needsTicket.map(([a]) => a).sort()).toEqual(
      ['breakeven', 'cancel_pending', 'modify_pending', 'modify_pending_expiry', 'modify_sl', 'modify_tp', 'partial_close'].sort(),
    );
    for (const [action, template] of needsTicket) {
      const body = JSON.parse(fillTradingView(render(template)).replace('<YOUR_WEBHOOK_SECRET>', 'whsec_sample'));
      expect({ action, ok: validateSignal(body, NOW).ok }).toEqual({ action, ok: false });
    }
  });

  test('when a numeric placeholder is quoted by mistake, then the service refuses it (numbers are never coerced)', () => {
    const quoted = JSON.parse(fillTrader(fillTradingView(JSON.stringify(templates.buy_limit))));
    expect(typeof quoted.price).toBe('string');
    const result = validateSignal(quoted, NOW);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/price: .*expected number/);
  });

  test.each([...ACTIONS])('tradingview.md shows the %s message exactly as in the templates file', (action) => {
    expect(fencedBlocks(tradingviewMd, 'json')).toContain(render(templates[action]!));
  });

  test('every signal shown in tradingview.md, filled in as TradingView would, is accepted', () => {
    const signals = fencedBlocks(tradingviewMd, 'json').filter((block) => block.includes('"action"'));
    expect(signals.length).toBeGreaterThan(ACTIONS.length); // the 17 templates and the strategy template
    for (const block of signals) {
      const result = validateSignal(fire(block), NOW);
      if (!result.ok) throw new Error(`${result.error}\n${block}`);
    }
  });

  test("tradingview.md covers every answer of the webhook from TradingView's side", () => {
    const section = tradingviewMd.slice(tradingviewMd.indexOf('## What happens on each answer'));
    for (const status of ['202', '200', '400', '401', '403', '409', '412', '413', '429', '500']) expect(section).toContain(`| **${status}**`);
    expect(section).toMatch(/\| \*\*503\*\* with a `signalId`/);
    expect(section).toMatch(/\| \*\*503\*\* without a `signalId`/);
  });
});

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
