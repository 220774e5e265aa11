import { randomBytes } from 'node:crypto';
import { RedisAdmissionLedger } from '../../src/signals/admission';
import { LostStartSweep } from '../../src/signals/lost-starts';
import { Regions } from '../../src/temporal/regions';
import { TemporalExecutions } from '../../src/temporal/temporal-executions';
import { signalKeys } from '../../src/redis-keys';
import { waitFor } from '../../support/infra';
import { temporalClient } from '../helpers/temporal';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * Admission pairs that will never settle (docs/admission-control.md): an ingress that died between writing a pair and
 * starting its signal leaves it pending, and no worker will ever take it up; nor will one for a signal whose workflow
 * an operator terminated. While such pairs shut the door, the ingress asks Temporal whether their signals run and
 * forgets those that do not; a pair whose signal runs (its workflow merely behind, here with no worker at all) stays
 * and counts, and so does every pair while Temporal cannot say.
 */
describe('admission pairs that will never settle', () => {
  let stack: Stack;
  let f: Fixture;
  let key: string;
  let ledger: RedisAdmissionLedger;
  const buy = () => ({ secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
  const lostSignalIds = (n: number) => Array.from({ length: n }, () => `sig_${randomBytes(16).toString('hex')}`);

  beforeAll(async () => {
    stack = await startStack({
      worker: false,
      env: {
        ADMISSION_SUPERVISION_LAG_MS: '200',
        ADMISSION_MAX_LATE: '2',
        ADMISSION_REFRESH_MS: '50',
        ADMISSION_LOST_START_AFTER_MS: '1000',
      },
    });
    f = await seedOwner(stack.registry);
    key = signalKeys.admissionPending(stack.config.temporal.taskQueue);
    ledger = new RedisAdmissionLedger(stack.redis, stack.config.temporal.taskQueue, stack.config.bridge.defaultCommandTtlMs);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Every 503 on the way started nothing: the door answers from a reading up to one refresh old. */
  const acceptedOnce = async (accountId: string) =>
    waitFor(
      'a signal accepted',
      async () => {
        const res = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, buy());
        if (res.status !== 202 && res.status !== 503) throw new Error(`unexpected ${res.status} ${JSON.stringify(res.body)}`);
        return res.status === 202 ? (res.body.signalId as string) : undefined;
      },
      10_000,
      100,
    );

  test('when lost pairs shut the door, then they are forgotten, the pair of a running signal stays, and the door opens again', async () => {
    const accountId = f.accounts[0]!.id;
    const running = `${await acceptedOnce(accountId)}|${accountId}`;
    // Old enough to be looked at; older than the lost ones, so it is looked at first: a sweep that could not tell a
    // running signal from a lost one would stop there or forget it.
    await waitFor(
      'the running signal to be pending past the lost-start age',
      async () => {
        const score = await stack.redis.zscore(key, running);
        return score !== null && Date.now() - Number(score) > 1_500;
      },
      10_000,
    );

    // Three pairs as a killed ingress leaves them: written, never started.
    for (const signalId of lostSignalIds(3)) await ledger.accepted(signalId, [accountId], Date.now() - 1_100);
    expect((await ledger.backlog(Date.now(), 200)).late).toBe(4);

    await waitFor('the lost pairs to be forgotten', async () => (await stack.redis.zcard(key)) === 1, 10_000);
    expect(await stack.redis.zrange(key, 0, -1)).toEqual([running]);
    const next = await acceptedOnce(accountId);
    expect(await stack.redis.zrange(key, 0, -1)).toEqual([running, `${next}|${accountId}`]);
  });

  test('when a signal workflow was terminated before it settled its pair, then that pair is forgotten once the door shuts', async () => {
    const accountId = f.accounts[0]!.id;
    const before = await stack.redis.zrange(key, 0, -1);
    expect(before.length).toBe(2);
    const [terminated, kept] = before.map((m) => m.split('|')[0]!);
    const temporal = await temporalClient();
    try {
      await temporal.client.workflow.getHandle(`signal/${terminated}`).terminate('operator: test');
    } finally {
      await temporal.close();
    }
    for (const signalId of lostSignalIds(3)) await ledger.accepted(signalId, [accountId], Date.now() - 1_100);
    await waitFor('only the running signal to be pending', async () => (await stack.redis.zcard(key)) === 1, 15_000);
    expect(await stack.redis.zrange(key, 0, -1)).toEqual([`${kept}|${accountId}`]);
  });

  test('when Temporal cannot say whether a signal runs, then its pairs are kept', async () => {
    // A namespace this Temporal does not have: every describe fails, with an error that is not "workflow not found".
    const regions = new Regions(
      [{ name: 'default', address: stack.config.temporal.regions[0]!.address, namespace: `absent-${randomBytes(4).toString('hex')}` }],
      2_000,
    );
    const executions = new TemporalExecutions(regions, stack.config.temporal.taskQueue);
    // A ledger of its own: the ingress's sweep (which can ask Temporal) must not be the one that keeps or forgets these.
    const queue = `lost-starts-${randomBytes(4).toString('hex')}`;
    const own = new RedisAdmissionLedger(stack.redis, queue, stack.config.bridge.defaultCommandTtlMs);
    const sweep = new LostStartSweep(own, async (signalId) => (await executions.signalState('default', signalId)) === 'running', {
      afterMs: 1_000,
      limit: 50,
      everyMs: 0,
    });
    const accountId = f.accounts[0]!.id;
    const lost = lostSignalIds(2);
    try {
      for (const signalId of lost) await own.accepted(signalId, [accountId], Date.now() - 1_100);
      await expect(executions.signalState('default', lost[0]!)).rejects.toThrow();
      expect(await sweep.sweep()).toBe(0);
      expect((await own.stalest(Date.now(), 10)).map((p) => p.signalId).sort()).toEqual([...lost].sort());
    } finally {
      await stack.redis.del(signalKeys.admissionPending(queue));
      await regions.close();
    }
  });
});
