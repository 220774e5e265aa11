import { startStack, type Stack } from '../helpers/stack';

/** A path we serve, asked with a method we do not serve on it: 405 with Allow (RFC 9110), never a 404 or a 500. */
describe('methods a route does not have', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const send = async (method: string, path: string) => {
    const res = await fetch(`${stack.ingress.url}${path}`, { method });
    const text = await res.text();
    const json = /^application\/json\b/.test(res.headers.get('content-type') ?? '');
    return { status: res.status, allow: res.headers.get('allow'), body: json && text ? (JSON.parse(text) as unknown) : undefined };
  };

  test.each([
    ['GET', '/webhook/custom', 'POST'],
    ['PUT', '/webhook/custom/acc-1', 'POST'],
    ['DELETE', '/webhook/custom/acc-1', 'POST'],
    ['POST', '/v1/signals/sig_0123456789abcdef0123456789abcdef', 'GET, HEAD'],
    ['DELETE', '/v1/signals/sig_0123456789abcdef0123456789abcdef', 'GET, HEAD'],
    ['GET', '/bridge/v1/reports', 'POST'],
    ['POST', '/bridge/v1/commands', 'GET, HEAD'],
    ['POST', '/openapi.json', 'GET, HEAD'],
    ['PATCH', '/healthz', 'GET, HEAD'],
  ])('when %s %s, then 405 with Allow: %s and a JSON error', async (method, path, allow) => {
    const res = await send(method, path);
    expect(res).toEqual({ status: 405, allow, body: { error: 'Method not allowed', allow: allow.split(', ') } });
  });

  test('when OPTIONS asks what a route takes, then it is told in Allow', async () => {
    const res = await send('OPTIONS', '/v1/signals/sig_0123456789abcdef0123456789abcdef');
    expect([200, 204]).toContain(res.status);
    expect(res.allow?.split(/,\s*/).sort()).toEqual(['GET', 'HEAD']);
  });

  test('when a path is not served at all, then it stays 404, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) expect((await send(method, '/v2/nothing-here')).status).toBe(404);
  });

  test('when the methods a route has are used, then they still reach it', async () => {
    expect((await send('GET', '/healthz')).status).toBe(200);
    expect((await send('HEAD', '/openapi.json')).status).toBe(200);
    expect((await send('POST', '/webhook/custom')).status).toBe(400);
  });
});
