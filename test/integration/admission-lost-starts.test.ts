import { randomBytes } from 'node:crypto';
import { RedisAdmissionLedger } from '../../src/signals/admission';
import { signalKeys } from '../../src/redis-keys';
import { waitFor } from '../../support/infra';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * Admission pairs that will never settle (docs/admission-control.md): an ingress that died between writing a pair and
 * starting its signal leaves it pending, and no worker will ever take it up. While such pairs shut the door, the
 * ingress asks Temporal whether their signals exist and forgets those that do not; a pair whose signal does exist
 * (its workflow merely behind, here with no worker at all) stays and counts.
 */
describe('admission pairs of signals that never started', () => {
  let stack: Stack;
  let f: Fixture;
  const buy = () => ({ secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });

  beforeAll(async () => {
    stack = await startStack({
      worker: false,
      env: {
        DISPATCH_AT_ACCEPTANCE: 'true',
        ADMISSION_SUPERVISION_LAG_MS: '200',
        ADMISSION_MAX_LATE: '2',
        ADMISSION_REFRESH_MS: '50',
        ADMISSION_LOST_START_AFTER_MS: '1000',
      },
    });
    f = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    await stack.stop();
  });

  test('when lost pairs shut the door, then they are forgotten, the pair of a started signal stays, and the door opens again', async () => {
    const key = signalKeys.admissionPending(stack.config.temporal.taskQueue);
    const accountId = f.accounts[0]!.id;
    const accepted = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, buy());
    expect(accepted.status).toBe(202);
    const started = `${accepted.body.signalId}|${accountId}`;
    // Old enough to be looked at; older than the lost ones, so it is looked at first: a sweep that could not tell a
    // started signal from a lost one would stop or forget it.
    await waitFor(
      'the started signal to be pending past the lost-start age',
      async () => {
        const score = await stack.redis.zscore(key, started);
        return score !== null && Date.now() - Number(score) > 1_500;
      },
      10_000,
    );

    // Three pairs as a killed ingress leaves them: written, never started.
    const ledger = new RedisAdmissionLedger(stack.redis, stack.config.temporal.taskQueue, stack.config.bridge.defaultCommandTtlMs);
    const lost = Array.from({ length: 3 }, () => `sig_${randomBytes(16).toString('hex')}`);
    for (const signalId of lost) await ledger.accepted(signalId, [accountId], Date.now() - 1_100);
    expect((await ledger.backlog(Date.now(), 200)).late).toBe(4);

    await waitFor('the lost pairs to be forgotten', async () => (await stack.redis.zcard(key)) === 1, 10_000);
    expect(await stack.redis.zrange(key, 0, -1)).toEqual([started]);
    const after = await post(`${stack.ingress.url}/webhook/custom/${accountId}`, buy());
    expect(after.status).toBe(202);
  });
});
