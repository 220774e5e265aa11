import { render, templates } from '../helpers/integration-docs';
import { post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { bridgeKeys } from '../../src/redis-keys';

/**
 * The TradingView templates of docs/integrations against the real service (Temporal and Redis): posted the way
 * TradingView posts them (the filled-in alert message as text/plain, no headers), including TradingView's resend.
 */

/** What TradingView sends when the alert fires: placeholders filled in as text, and the trader's own values. */
function fire(action: string, secret: string, firedAt: Date): string {
  const tradingview: Record<string, string> = {
    ticker: 'EURUSD',
    interval: '15',
    timenow: firedAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    high: '1.08610',
    low: '1.08480',
    close: '1.08542',
    'plot("Target")': '1.09210',
  };
  const trader: Record<string, string> = {
    YOUR_WEBHOOK_SECRET: secret,
    POSITION_TICKET: '50412',
    ORDER_TICKET: '50413',
    EXPIRY_UTC: new Date(firedAt.getTime() + 86_400_000).toISOString(),
  };
  return render(templates[action]!)
    .replace(/\{\{([^{}]+)\}\}/g, (_, name: string) => tradingview[name] ?? `{{${name}}}`)
    .replace(/<([A-Z_]+)>/g, (_, name: string) => trader[name] ?? `<${name}>`);
}

/** TradingView's request: the message as the body, text/plain, no other header. */
const asTradingView = (url: string, message: string) => post(url, message, { 'content-type': 'text/plain; charset=utf-8' });

describe('TradingView templates on the real service', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('when the buy alert fires and TradingView resends it after a 5xx, then both get the same 202 and one signal runs', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const message = fire('buy', f.secret, new Date());
    expect(message).toMatch(/"idempotencyKey": "EURUSD-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ-buy"/);

    const first = await asTradingView(url, message);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ success: true, signalId: expect.stringMatching(/^sig_/), correlationId: expect.any(String), accountsResolved: 1 });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const counter = bridgeKeys.sequence(f.accounts[0]!.id);
    const numbered = await stack.redis.get(counter);
    expect(numbered).not.toBeNull();

    // TradingView resends the very same text (its placeholders were filled in once, when the alert fired).
    const resend = await asTradingView(url, message);
    expect(resend.status).toBe(202);
    expect(resend.headers.get('idempotent-replayed')).toBe('true');
    expect(resend.body.signalId).toBe(first.body.signalId);
    expect(resend.body).toEqual(first.body);
    // The replay numbered nothing: no second action was launched.
    expect(await stack.redis.get(counter)).toBe(numbered);
  });

  test('when the filtered close and the breakeven alerts fire (both need a key), then each is accepted with 202', async () => {
    const f = await seedOwner(stack.registry);
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const firedAt = new Date();
    for (const action of ['close', 'breakeven']) {
      const res = await asTradingView(url, fire(action, f.secret, firedAt));
      expect({ action, status: res.status, body: res.text }).toEqual({ action, status: 202, body: expect.any(String) });
      expect(res.body).toMatchObject({ success: true, signalId: expect.stringMatching(/^sig_/), accountsResolved: 1 });
    }
  });
});
