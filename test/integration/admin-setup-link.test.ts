import { adminCliJson } from '../helpers/admin';
import { ownerKeyFile } from '../helpers/owner';
import { startStack, type Stack } from '../helpers/stack';
import { startRedis, type RedisServer } from '../../support/infra';

/**
 * The admin CLI's setup link names the address the running ingress answers at, not the default port 8080, when the
 * CLI runs from another shell without PUBLIC_URL or PORT (`make start` sets them for its own processes only); its
 * own PUBLIC_URL or PORT, when given, win. A Redis of this file's own: the ingress records its address there.
 */
describe('the setup link of owner create', () => {
  let redis: RedisServer;
  let stack: Stack;

  beforeAll(async () => {
    redis = await startRedis();
    stack = await startStack({ worker: false, env: { REDIS_URL: redis.url, OWNER_SECRETS_KEY_FILE: ownerKeyFile() } });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  const link = async (owner: string, env: Record<string, string> = {}) =>
    (await adminCliJson<{ setupLink: string }>(['owner', 'create', owner], redis.url, env)).setupLink.split('#')[0];

  test('when the CLI has no PUBLIC_URL or PORT, then the link names the running ingress (PORT=0 here: the port it got)', async () => {
    expect(stack.ingress.port).not.toBe(8080);
    await expect(link('link-a')).resolves.toBe(`${stack.ingress.url}/dashboard/setup`);
  });

  test('when the CLI has PUBLIC_URL or PORT of its own, then those make the link', async () => {
    await expect(link('link-b', { PUBLIC_URL: 'https://signals.example.com/' })).resolves.toBe('https://signals.example.com/dashboard/setup');
    await expect(link('link-c', { PORT: '9123' })).resolves.toBe('http://127.0.0.1:9123/dashboard/setup');
  });
});
