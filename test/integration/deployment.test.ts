import { startIngress, type Ingress } from '../../src/server';
import { get, testConfig, type Tuning } from '../helpers/stack';

/**
 * Deployment settings of the ingress (docs/deployment.md): the admin listener that alone serves /metrics and /readyz,
 * and TRUST_PROXY, which decides whether X-Forwarded-For names the client (here: what the poll's per-IP cap counts).
 */

const SIGNAL = '/v1/signals/sig_0123456789abcdef0123456789abcdef';
const NO_SUCH_TOKEN = { authorization: 'Bearer tok_not_a_real_token_not_a_real_token' };

async function withIngress(env: Record<string, string>, tuning: Tuning, fn: (ingress: Ingress) => Promise<void>): Promise<void> {
  const ingress = await startIngress(testConfig(env, tuning));
  try {
    await fn(ingress);
  } finally {
    await ingress.close();
  }
}

describe('the admin listener', () => {
  test('when the ingress runs, then /metrics and /readyz answer 404 on the public port and are served on the admin port; /healthz answers on both', async () => {
    await withIngress({}, {}, async (ingress) => {
      expect(ingress.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(ingress.adminUrl).not.toBe(ingress.url);

      const publicMetrics = await get(`${ingress.url}/metrics`);
      const publicReady = await get(`${ingress.url}/readyz`);
      expect({ metrics: publicMetrics.status, ready: publicReady.status }).toEqual({ metrics: 404, ready: 404 });
      expect(publicMetrics.text).not.toContain('external_signals_');

      const metrics = await get(`${ingress.adminUrl}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(metrics.text).toContain('external_signals_http_requests_total');
      expect(await get(`${ingress.adminUrl}/readyz`)).toMatchObject({
        status: 200,
        body: { status: 'ready', checks: { redis: 'ok', 'temporal:default': 'ok' } },
      });

      for (const base of [ingress.url, ingress.adminUrl]) expect(await get(`${base}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
      // The admin listener serves nothing of the public API.
      expect((await get(`${ingress.adminUrl}${SIGNAL}`, NO_SUCH_TOKEN)).status).toBe(404);
      expect((await get(`${ingress.adminUrl}/openapi.json`)).status).toBe(404);
    });
  });

  test('when ADMIN_PORT is off, then no admin listener starts and the public port still does not serve /metrics', async () => {
    await withIngress({ ADMIN_PORT: 'off' }, {}, async (ingress) => {
      expect(ingress.adminUrl).toBeUndefined();
      expect((await get(`${ingress.url}/metrics`)).status).toBe(404);
    });
  });
});

describe('TRUST_PROXY and X-Forwarded-For', () => {
  const CAP = 3;
  const POLL_CAP: Tuning = { limits: { pollIp: { max: CAP } } };

  /** Polls from the given forwarded addresses, one after another; the statuses in order (429 = the per-IP cap). */
  async function pollsFrom(ingress: Ingress, forwardedFor: string[]): Promise<number[]> {
    const out: number[] = [];
    for (const address of forwardedFor) out.push((await get(`${ingress.url}${SIGNAL}`, { ...NO_SUCH_TOKEN, 'x-forwarded-for': address })).status);
    return out;
  }

  test("when TRUST_PROXY is not set, then X-Forwarded-For is ignored: polls claiming different addresses share the peer's per-IP budget", async () => {
    await withIngress({}, POLL_CAP, async (ingress) => {
      expect(await pollsFrom(ingress, ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4'])).toEqual([401, 401, 401, 429]);
    });
  });

  test('when TRUST_PROXY=1 (one proxy in front), then the per-IP cap keys by the forwarded address', async () => {
    await withIngress({ TRUST_PROXY: '1' }, POLL_CAP, async (ingress) => {
      expect(await pollsFrom(ingress, ['203.0.113.1', '203.0.113.1', '203.0.113.1', '203.0.113.1'])).toEqual([401, 401, 401, 429]);
      // Another client behind the same proxy has its own budget; with one hop trusted, only the last address counts.
      expect(await pollsFrom(ingress, ['203.0.113.2', '198.51.100.7, 203.0.113.3'])).toEqual([401, 401]);
      expect(await pollsFrom(ingress, ['198.51.100.7, 203.0.113.1'])).toEqual([429]);
    });
  });

  test("when TRUST_PROXY lists the proxy's address (loopback), then X-Forwarded-For is honoured; when it lists another address, then it is ignored", async () => {
    await withIngress({ TRUST_PROXY: 'loopback' }, POLL_CAP, async (ingress) => {
      expect(await pollsFrom(ingress, ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4'])).toEqual([401, 401, 401, 401]);
    });
    await withIngress({ TRUST_PROXY: '10.0.0.1,192.168.0.0/16' }, POLL_CAP, async (ingress) => {
      expect(await pollsFrom(ingress, ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4'])).toEqual([401, 401, 401, 429]);
    });
  });
});
