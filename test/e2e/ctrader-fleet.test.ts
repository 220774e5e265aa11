import { randomBytes } from 'node:crypto';
import { RedisLastSeen, isOnline } from '../../src/bridge/presence';
import { INGRESS_CONNECTIONS } from '../../src/bridge-kit/fleet';
import { ensureBuilt } from '../../support/processes';
import { waitFor } from '../../support/run';
import { connectionsTo } from '../../support/sockets';
import { connectorSetup, linkedAccounts, startConnectorProcess, type ConnectorProcess } from '../helpers/ctrader-connector';
import { CtraderDouble } from '../helpers/ctrader-double';
import { pollUntilReported, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * One cTrader connector process serving many accounts through multi-account sessions (protocol 1.7) against the real
 * stack and the Open API double serving every account over the connector's one Open API connection: every account
 * online, a buy to each filled exactly once at the broker, a handful of connections from the connector to the
 * ingress, and a SIGKILL mid-burst and a restart that lose and double nothing. CTRADER_FLEET_ACCOUNTS sets the number
 * of accounts (1,000 for the measurement in docs/performance.md); the double answers 50 requests a second, as Open API.
 */
const ACCOUNTS = Number(process.env.CTRADER_FLEET_ACCOUNTS ?? 40);
// Each account's hello costs Open API requests at 50 a second, and each burst is ACCOUNTS signals through Temporal.
jest.setTimeout(300_000 + ACCOUNTS * 600);

const application = { clientId: `app_${randomBytes(4).toString('hex')}`, clientSecret: `secret_${randomBytes(16).toString('hex')}` };
const ctids = Array.from({ length: ACCOUNTS }, (_, i) => 7_100_000 + i);
const grants = ctids.map(() => ({ accessToken: `at_${randomBytes(16).toString('hex')}`, refreshToken: `rt_${randomBytes(16).toString('hex')}` }));

describe(`one cTrader connector for ${ACCOUNTS} accounts`, () => {
  let stack: Stack;
  let f: Fixture;
  let double: CtraderDouble;
  let connector: ConnectorProcess | undefined;
  let mostConnections = 0;
  const sample = () => {
    const n = connectionsTo(connector!.pid, Number(new URL(stack.ingress.url).port));
    mostConnections = Math.max(mostConnections, n);
    return n;
  };

  beforeAll(
    async () => {
      ensureBuilt();
      // One loop per account could not stay under 64 connections from the address.
      stack = await startStack({ env: { MAX_CONNECTIONS_PER_IP: '64', BRIDGE_MAX_WAIT_MS: '5000' } });
      f = await seedOwner(
        stack.registry,
        ctids.map(() => ({ platform: 'ctrader' as const, bridgeVersion: '1.0.0' })),
      );
      double = await CtraderDouble.start({ ...application, accounts: ctids.map((ctid, i) => ({ ctid, ...grants[i]! })) });
      const startedAt = Date.now();
      connector = await startConnectorProcess({
        setup: connectorSetup('fleet', application, linkedAccounts(f.accounts, ctids, grants)),
        accountIds: f.accounts.map((a) => a.id),
        demoUrl: double.url,
        ingressUrl: stack.ingress.url,
        label: 'fleet',
        readyTimeoutMs: 60_000 + ACCOUNTS * 500,
      });
      process.stderr.write(`ctrader fleet: ${ACCOUNTS} accounts said hello in ${Date.now() - startedAt} ms\n`);
    },
    120_000 + ACCOUNTS * 500,
  );
  afterAll(async () => {
    await connector?.stop();
    await double?.close();
    await stack?.stop();
  });

  /** `run` over every account, 8 at a time; the results in the accounts' order. */
  const eachAccount = async <T>(run: (a: Fixture['accounts'][number], i: number) => Promise<T>): Promise<T[]> => {
    const out: T[] = [];
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < f.accounts.length; i = next++) out[i] = await run(f.accounts[i]!, i);
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    return out;
  };
  const buyEach = () =>
    eachAccount(async (a) => {
      const res = await post(`${stack.ingress.url}/webhook/custom/${a.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
      expect(res.status).toBe(202);
      return String(res.body.signalId);
    });
  /** The broker holds `n` positions on every account, and the poll reports each signal filled with the n-th of them. */
  const filledOnce = async (signalIds: string[], n: number) => {
    await waitFor(
      `${n} positions at the broker on each of ${ACCOUNTS} accounts`,
      async () => {
        sample();
        return ctids.every((ctid) => double.account(ctid).entries.length >= n) || undefined;
      },
      120_000 + ACCOUNTS * 200,
      200,
    );
    expect(ctids.filter((ctid) => double.account(ctid).entries.length !== n)).toEqual([]);
    const outcomes = await eachAccount(async (_a, i) => {
      sample();
      return (await pollUntilReported(stack.ingress.url, signalIds[i]!, f.token, 1, 60_000)).accounts[0];
    });
    outcomes.forEach((o, i) =>
      expect(o).toMatchObject({ accountId: f.accounts[i]!.id, outcome: 'filled', ticket: String(double.account(ctids[i]!).entries[n - 1]!.id) }),
    );
  };

  it('keeps every account online on a handful of connections', async () => {
    const seen = new RedisLastSeen(stack.redis);
    const accounts = f.accounts.map((a) => ({ id: a.id, owner: f.owner }));
    await waitFor('every account online', async () => (await seen.lastSeen(accounts)).every((t) => isOnline(t, new Date())) || undefined, 30_000, 200);
    expect(sample()).toBeGreaterThan(0);
    expect(mostConnections).toBeLessThanOrEqual(INGRESS_CONNECTIONS);
  });

  it('fills a buy on each account exactly once at the broker', async () => {
    await filledOnce(await buyEach(), 1);
    expect(mostConnections).toBeLessThanOrEqual(INGRESS_CONNECTIONS);
    process.stderr.write(`ctrader fleet: at most ${mostConnections} connections to the ingress\n`);
  });

  it('loses and doubles nothing across a SIGKILL and a restart mid-burst', async () => {
    const sending = buyEach();
    const before = connector!.commands().length;
    await waitFor('part of the burst taken', async () => connector!.commands().length - before >= Math.max(1, ACCOUNTS / 10) || undefined, 60_000, 20);
    await connector!.kill9();
    const signalIds = await sending;
    await connector!.restart();
    await filledOnce(signalIds, 2);
    expect(mostConnections).toBeLessThanOrEqual(INGRESS_CONNECTIONS);
  });
});
