import path from 'node:path';
import { makePki } from '../helpers/certs';
import { runDir, startRedis, type RedisServer } from '../../support/infra';
import { buyAndFill, post, startStack, type Stack } from '../helpers/stack';

/**
 * Redis as a real deployment secures it (docs/cluster-profile.md, "Connections"): TLS only, client certificates
 * required (mTLS), the default user off and one ACL user with a password. The whole service (ingress, worker) runs
 * on it through `rediss://user:password@…` and the REDIS_TLS_* files; without its client certificate, or with the
 * wrong password, the ingress fails closed (503), never accepts a signal it cannot keep.
 */
describe('the service on a Redis that takes only TLS with client certificates and an ACL user', () => {
  let redis: RedisServer;
  let tlsEnv: Record<string, string>;
  let stack: Stack | undefined;
  let pki: ReturnType<typeof makePki>;

  beforeAll(async () => {
    pki = makePki(path.join(runDir(), `redis-tls-pki-${process.pid}`));
    const server = pki.issue('redis-server', 'server');
    const client = pki.issue('external-signals', 'client');
    redis = await startRedis({
      tls: {
        caFile: pki.caFile,
        certFile: server.certFile,
        keyFile: server.keyFile,
        clientCertFile: client.certFile,
        clientKeyFile: client.keyFile,
        user: 'signals',
        password: 'a-test-password-of-this-run',
      },
    });
    tlsEnv = { REDIS_URL: redis.url, REDIS_TLS_CA_FILE: pki.caFile, REDIS_TLS_CERT_FILE: client.certFile, REDIS_TLS_KEY_FILE: client.keyFile };
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await redis?.stop();
  });

  test('when the ingress and the worker connect with the CA, their client certificate and the ACL user, then a signal is accepted, executed and reported filled', async () => {
    expect(redis.url).toMatch(/^rediss:\/\/signals:/);
    stack = await startStack({ env: tlsEnv });
    const status = await buyAndFill(stack, 'TLS-1');
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: 'TLS-1' });
  });

  test.each([
    ['without its client certificate', () => ({ ...tlsEnv, REDIS_TLS_CERT_FILE: undefined, REDIS_TLS_KEY_FILE: undefined })],
    ['with a wrong password', () => ({ ...tlsEnv, REDIS_URL: tlsEnv.REDIS_URL!.replace(/:[^:@]*@/, ':not-the-password@') })],
    ['with a certificate from another CA', () => ({ ...tlsEnv, ...otherCaClient() })],
  ])('when the ingress connects %s, then it fails closed: a signal gets 503, never 202', async (_what, envOf) => {
    const env = Object.fromEntries(Object.entries(envOf()).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const refused = await startStack({ env, worker: false });
    try {
      const res = await post(`${refused.ingress.url}/webhook/custom/acc-anything`, { secret: 'whsec_whatever', action: 'buy', symbol: 'EURUSD', volume: 0.1 });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).not.toBeNull();
    } finally {
      await refused.stop();
    }
  });

  function otherCaClient(): Record<string, string> {
    const other = makePki(path.join(runDir(), `redis-tls-other-${process.pid}`), 'someone else');
    const c = other.issue('intruder', 'client');
    return { REDIS_TLS_CERT_FILE: c.certFile, REDIS_TLS_KEY_FILE: c.keyFile };
  }
});
