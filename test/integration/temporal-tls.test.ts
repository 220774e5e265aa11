import path from 'node:path';
import { makePki } from '../helpers/certs';
import { runDir, waitFor } from '../../support/infra';
import { signalKeys } from '../../src/redis-keys';
import { buyAndFill, get, post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { startTemporalCluster, type TemporalCluster } from '../../support/temporal-cluster';

/**
 * Temporal as a real deployment secures it (docs/cluster-profile.md, "Connections"): the real server (cluster
 * profile) with its frontend on TLS and client certificates required, signed by a private CA. The service's worker and
 * ingress connect with the region's tls in TEMPORAL_REGIONS (caFile, certFile, keyFile, serverName) and execute a signal; without a
 * client certificate, or with one from another CA, the handshake fails and the ingress refuses signals (503).
 * Runs in make test-cluster (it needs the server binary that profile builds).
 */
const describeOnCluster = process.env.TEMPORAL_PROFILE === 'cluster' ? describe : describe.skip;

describeOnCluster('the service on a Temporal server that takes only mTLS', () => {
  let temporal: TemporalCluster | undefined;
  let stack: Stack | undefined;
  let tlsEnv: Record<string, string>;
  let address: string;
  let caFile: string;
  /** The one region, with TLS as TEMPORAL_REGIONS says it; a client certificate goes with its key. */
  const regionsEnv = (client: { certFile: string; keyFile: string } | undefined): Record<string, string> => ({
    TEMPORAL_REGIONS: JSON.stringify([{ name: 'default', address, namespace: 'default', tls: { caFile, serverName: 'localhost', ...(client ?? {}) } }]),
  });
  let pkiDir: string;

  beforeAll(async () => {
    pkiDir = path.join(runDir(), `temporal-tls-pki-${process.pid}`);
    const pki = makePki(pkiDir);
    const server = pki.issue('temporal-frontend', 'server');
    const systemWorker = pki.issue('temporal-system-worker', 'client');
    const helper = pki.issue('test-helper', 'client');
    const service = pki.issue('external-signals', 'client');
    temporal = await startTemporalCluster({
      tls: {
        caFile: pki.caFile,
        certFile: server.certFile,
        keyFile: server.keyFile,
        serverName: 'localhost',
        systemWorkerCertFile: systemWorker.certFile,
        systemWorkerKeyFile: systemWorker.keyFile,
        clientCertFile: helper.certFile,
        clientKeyFile: helper.keyFile,
      },
    });
    address = temporal.address;
    caFile = pki.caFile;
    tlsEnv = regionsEnv({ certFile: service.certFile, keyFile: service.keyFile });
  }, 240_000);
  afterAll(async () => {
    await stack?.stop();
    await temporal?.dispose();
  });

  test('when the worker and the ingress connect with the CA and their client certificate, then a signal is accepted, executed and reported filled', async () => {
    stack = await startStack({ env: tlsEnv });
    const status = await buyAndFill(stack, 'MTLS-1', 30_000);
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: 'MTLS-1' });
  });

  test.each([
    ['without a client certificate', () => regionsEnv(undefined)],
    ['with a certificate from another CA', () => regionsEnv(otherCaClient())],
  ])(
    'when the ingress connects %s, then /readyz says its Temporal is down, and a signal it accepts is never started: its start stays recorded',
    async (_what, envOf) => {
      const env = envOf();
      const refused = await startStack({ env, worker: false });
      try {
        const ready = await get(`${refused.ingress.adminUrl}/readyz`);
        expect(ready.status).toBe(503);
        expect(ready.body).toMatchObject({ checks: { redis: 'ok', 'temporal:default': 'down' } });
        // The acceptance is Redis's: the 202 comes (an orchestrator routes no traffic to an ingress that is not ready).
        const f = await seedOwner(refused.registry);
        const res = await post(`${refused.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, {
          secret: f.secret,
          action: 'buy',
          symbol: 'EURUSD',
          volume: 0.1,
        });
        expect(res.status).toBe(202);
        // Its start is tried and refused by the TLS handshake, again and again; the record stays until one gets through.
        await waitFor(
          'the start to be tried and refused twice',
          async () => {
            const metrics = await get(`${refused.ingress.adminUrl}/metrics`);
            const retried = /external_signals_signal_starts_total\{result="retried"\} (\d+)/.exec(metrics.text);
            return retried !== null && Number(retried[1]) >= 2;
          },
          30_000,
          200,
        );
        const inputs = signalKeys.pendingStarts(refused.config.temporal.taskQueue).inputs;
        expect(await refused.redis.hexists(inputs, `default|${res.body.signalId as string}`)).toBe(1);
      } finally {
        await refused.stop();
      }
    },
  );

  function otherCaClient(): { certFile: string; keyFile: string } {
    const other = makePki(path.join(pkiDir, 'other'), 'someone else');
    const c = other.issue('intruder', 'client');
    return { certFile: c.certFile, keyFile: c.keyFile };
  }
});
