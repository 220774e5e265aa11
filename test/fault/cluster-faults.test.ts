import { startRedis, type RedisServer } from '../../support/infra';
import { startSentinel, type Sentinel } from '../helpers/redis-sentinel';
import { ensureBuilt, restart, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import { startTemporalCluster, type TemporalCluster } from '../../support/temporal-cluster';
import {
  buysAcrossAFault,
  commandIdOf,
  httpPost,
  importRegistry,
  makeRegistry,
  ordersByCommand,
  pollUntilReported,
  retryUntilAccepted,
  scenarioFiles,
  tally,
  type BuyMeta,
} from './kit';

/**
 * Fault injection on the cluster profile (make test-cluster; skipped on the dev server, which has no PostgreSQL):
 * a Temporal server on a PostgreSQL of this scenario's own, Redis as a master, a replica and a Sentinel, the built
 * worker, ingress and paper bridge. Mid-load the worker and the ingress are killed with SIGKILL and started again,
 * PostgreSQL is stopped and started under the running Temporal server, and the Sentinel fails Redis over to the
 * replica. Every signal that got a 202 (callers retry every refusal and every broken connection with the same
 * idempotency key) must be reported, and nothing ordered twice.
 */
const BEFORE_FAULTS = 12;
const AFTER_FAULTS = 12;
const MAX_REQUESTS = 400;
const LOAD_DEADLINE_MS = 180_000;
const SETTLE_DEADLINE_MS = 180_000;

const reg = makeRegistry('clfault', 2);
const ids = reg.accounts.map((a) => a.id);
// Runs in make test-cluster (the dev-server profile has no PostgreSQL to restart). Its findings of 2026-11-24 05:49
// (45 of 120 accepted market orders expired behind a number a killed ingress had taken for a signal it never started)
// are fixed by the start lease of src/bridge/ordering.ts; docs/cluster-profile.md has the history.
const describeOnCluster = process.env.TEMPORAL_PROFILE === 'cluster' ? describe : describe.skip;

type Meta = BuyMeta;

describeOnCluster('the cluster profile: worker and ingress killed -9, PostgreSQL restarted, Redis failed over, mid-load', () => {
  let temporal: TemporalCluster | undefined;
  let redis: RedisServer | undefined;
  let replica: RedisServer | undefined;
  let sentinel: Sentinel | undefined;
  let stack: ProcessStack | undefined;
  let ledgerFile: string;

  beforeAll(async () => {
    ensureBuilt();
    const files = scenarioFiles(reg);
    ledgerFile = files.ledgerFile;
    // Redis as the deployment doc says to run it past one box: a master, a replica and a Sentinel, every number and
    // queued command acknowledged by the replica (REDIS_MIN_REPLICAS_ACK).
    [temporal, redis] = await Promise.all([startTemporalCluster(), startRedis({ durable: true })]);
    replica = await startRedis({ durable: true, args: ['--replicaof', '127.0.0.1', String(redis.port)] });
    sentinel = await startSentinel(redis.port);
    const env = { REDIS_URL: sentinel.url, REDIS_MIN_REPLICAS_ACK: '1', TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: 'default' };
    await importRegistry(files.registryFile, serviceEnv(env));
    stack = await startProcessStack({ registryFile: files.registryFile, ledgerFile, env, bridgeArgs: ['--wait-ms', '2000'] });
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await sentinel?.stop();
    await replica?.stop();
    await redis?.stop();
    await temporal?.dispose();
  });

  test(
    'when the worker and the ingress are killed with SIGKILL and restarted, PostgreSQL restarts under Temporal and Redis fails over, while signals flow, ' +
      'then every accepted signal is reported, filled by its one order (or refused overtaken, never ordered), and nothing is ordered twice',
    async () => {
      const describeAll = () =>
        stack!
          .all()
          .map((p) => p.describe())
          .join('\n');
      const buy = (m: Meta) => ({ secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01, idempotencyKey: m.key });
      const send = (m: Meta) => httpPost(`${stack!.ingress.url}/webhook/custom/${m.accountId}`, buy(m));
      const faults: { at?: number; done?: number; postgresDownMs?: number; newRedisMaster?: string } = {};
      const inject = async () => {
        faults.at = Date.now();
        await Promise.all([stack!.worker.kill9(), stack!.ingress.kill9()]);
        await Promise.all([restart(stack!.worker), restart(stack!.ingress)]);
        if (process.env.CLUSTER_FAULTS !== 'processes') {
          const down = Date.now();
          await temporal!.postgres.stop();
          await temporal!.postgres.start();
          faults.postgresDownMs = Date.now() - down;
        }
        if (process.env.CLUSTER_FAULTS !== 'processes') faults.newRedisMaster = await sentinel!.failover();
        faults.done = Date.now();
      };

      const { answers } = await buysAcrossAFault({
        accountIds: ids,
        tag: reg.tag,
        ledgerFile,
        send,
        before: BEFORE_FAULTS,
        after: AFTER_FAULTS,
        maxRequests: MAX_REQUESTS,
        deadlineMs: LOAD_DEADLINE_MS,
        fault: inject,
      });
      expect(faults.done).toBeDefined();

      const retried = await retryUntilAccepted(answers, (r) => send(r.meta), { attempts: 30, deadlineMs: 120_000 });
      const final = answers.map((a) => retried.get(a.index) ?? a);
      expect(final.filter((a) => a.status !== 202).map((a) => ({ index: a.index, status: a.status, body: a.body, error: a.error }))).toEqual([]);
      // Every accepted signal gets an outcome, and none is ordered twice. A signal numbered behind one whose ingress
      // died between numbering and starting it waits only for that number's start lease (seconds), so it still fills.
      // One whose ingress died between starting it and confirming the start may be overtaken by a later one: it is
      // then refused signal_overtaken and never ordered. A fill is always the one order the bridge placed.
      const signals = final.map((a) => ({ signalId: a.body.signalId as string, accountId: a.meta.accountId }));
      expect(new Set(signals.map((x) => x.signalId)).size).toBe(signals.length);
      const outcomes = await pollUntilReported(
        () => stack!.ingress.url,
        reg.token,
        signals.map((x) => x.signalId),
        { deadlineMs: SETTLE_DEADLINE_MS, describe: describeAll },
      );
      const orders = ordersByCommand(ledgerFile);
      expect([...orders.entries()].filter(([, lines]) => lines.length !== 1).map(([id]) => id)).toEqual([]);
      const verdicts = signals.map((x) => {
        const [outcome] = outcomes.get(x.signalId)!.accounts;
        const order = orders.get(commandIdOf(x.signalId, x.accountId))?.[0];
        if (outcome!.outcome === 'filled')
          return order && order.ticket === outcome!.ticket ? 'filled, its one order' : `filled ${outcome!.ticket} without that order`;
        return order ? `rejected ${outcome!.reason} but ordered` : `rejected ${outcome!.reason}`;
      });
      const counted = tally(verdicts, (v) => v);
      expect(Object.keys(counted).filter((v) => v !== 'filled, its one order' && v !== 'rejected signal_overtaken')).toEqual([]);
      // No order placed for anything the service did not accept.
      expect([...orders.keys()].filter((id) => !signals.some((x) => commandIdOf(x.signalId, x.accountId) === id))).toEqual([]);
      console.log(
        `[fault] cluster profile: ${answers.length} requests ${JSON.stringify(tally(answers, (a) => (a.error ? 'no answer' : a.status)))}, ` +
          `${retried.size} retried; worker and ingress killed -9 and restarted` +
          (faults.postgresDownMs !== undefined ? `, PostgreSQL down ${faults.postgresDownMs} ms` : '') +
          `${faults.newRedisMaster ? `, Redis failed over to ${faults.newRedisMaster}` : ''}; ${signals.length} accepted signals: ` +
          `${JSON.stringify(counted)}; ${orders.size} orders, 0 doubled`,
      );
    },
    600_000,
  );
});
