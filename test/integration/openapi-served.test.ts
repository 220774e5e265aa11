import { buildOpenApiDocument } from '../../src/http/openapi';
import { get, startStack, type Stack } from '../helpers/stack';

/** The published interface description (spec §9.4) is served by the ingress itself. */
describe('GET /openapi.json', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('when /openapi.json is fetched, then it is 200 JSON and the same document as buildOpenApiDocument()', async () => {
    const res = await get(`${stack.ingress.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    expect(res.body.info).toMatchObject({ title: 'External Signals API', version: '1.0.0' });
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  test('when /openapi.json is fetched twice, then both answers are identical', async () => {
    const [a, b] = await Promise.all([get(`${stack.ingress.url}/openapi.json`), get(`${stack.ingress.url}/openapi.json`)]);
    expect(a.text).toBe(b.text);
  });
});
