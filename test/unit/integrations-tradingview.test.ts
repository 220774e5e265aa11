import { ACTIONS, requiresIdempotencyKey, type Action } from '../../src/domain/actions';
import { validateSignal } from '../../src/domain/signal';
import { ALERT_LINE_ALIASES, parseAlertLine } from '../../src/domain/alert-line';
import {
  NUMERIC_FIELDS,
  type Template,
  templates,
  tradingviewMd,
  render,
  TRADINGVIEW_SAMPLES,
  TRADER_SAMPLES,
  NOW,
  fillTradingView,
  fillTrader,
  fire,
  fencedBlocks,
  stringsIn,
} from '../helpers/integration-docs';

/**
 * The integration guides of docs/integrations are part of the product: a template that the service would refuse, or
 * a workflow that n8n cannot import, is a bug. These checks hold them to the schema the ingress validates with.
 */

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

/** Every fenced block of a Markdown text, in order, with its info string (`json`, `text one-line`, `json management`). */
function allFencedBlocks(markdown: string): { info: string; body: string }[] {
  return [...markdown.matchAll(/^```([^\n`]*)\n([\s\S]*?)\n```$/gm)].map((m) => ({ info: m[1]!.trim(), body: m[2]! }));
}

/**
 * The one-line alerts of tradingview.md: each ```text one-line block is followed by its JSON twin (```json, checked
 * against the schema above with the other templates, or ```json management for the trade-management fields).
 */
describe('TradingView one-line alerts (tradingview.md)', () => {
  const blocks = allFencedBlocks(tradingviewMd);
  const pairs = blocks.flatMap((b, i) => (b.info === 'text one-line' ? [{ line: b.body, twin: blocks[i + 1] }] : []));
  const fireLine = (line: string) => fillTrader(fillTradingView(line));

  test('the page shows one-line examples, each a single line followed by its JSON twin', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(12);
    for (const { line, twin } of pairs) {
      expect({ line, singleLine: !line.includes('\n') }).toEqual({ line, singleLine: true });
      expect({ line, twin: twin?.info }).toEqual({ line, twin: expect.stringMatching(/^json( management)?$/) });
    }
  });

  test.each(pairs.map((p) => [p.line, p.twin!.body]))('the line %s, filled in as TradingView would, reads to exactly its JSON twin', (line, twin) => {
    const read = parseAlertLine(fireLine(line));
    if (!read.ok) throw new Error(read.error);
    expect(read.body).toEqual(fire(twin));
  });

  test('every management feature has a template in both forms', () => {
    const management = pairs.filter((p) => p.twin!.info === 'json management').map((p) => fire(p.twin!.body));
    const used = new Set(management.flatMap((body) => Object.keys(body)));
    for (const field of [
      'trailDistancePips',
      'trailTriggerPips',
      'trailStepPips',
      'breakevenTriggerPips',
      'breakevenOffsetPips',
      'takeProfits',
      'closeOpposite',
      'maxSpreadPips',
    ])
      expect({ field, used: used.has(field) }).toEqual({ field, used: true });
    const levels = management.flatMap((body) => (body.takeProfits as Record<string, unknown>[] | undefined) ?? []);
    expect(levels.some((l) => 'tp' in l)).toBe(true);
    expect(levels.some((l) => 'tpPips' in l)).toBe(true);
  });

  test('every one-line example, with or without management fields, is a signal the service accepts', () => {
    expect(pairs.filter((p) => p.twin!.info === 'json').length).toBeGreaterThanOrEqual(4);
    expect(pairs.filter((p) => p.twin!.info === 'json management').length).toBeGreaterThanOrEqual(6);
    for (const { line } of pairs) {
      const read = parseAlertLine(fireLine(line));
      if (!read.ok) throw new Error(read.error);
      const result = validateSignal(read.body, NOW);
      if (!result.ok) throw new Error(`${result.error}\n${line}`);
    }
  });

  test('the aliases table lists exactly the aliases the parser takes, each with its field', () => {
    const section = tradingviewMd.slice(tradingviewMd.indexOf('## One-line alerts'), tradingviewMd.indexOf('### One-line templates'));
    const rows = [...section.matchAll(/^\| (`[^|]+`) \| `([A-Za-z]+)` \| /gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z_]+)`/g)].map((a) => [a[1], m[2]]));
    expect(Object.fromEntries(rows)).toEqual(ALERT_LINE_ALIASES);
    expect(section).toMatch(/`sl=` and `tp=` are PRICES/);
  });
});
