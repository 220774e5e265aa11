import { testEnv } from '../../support/env';
import { waitFor, type TemporalServer } from '../../support/infra';
import type { ProcessStack } from '../../support/processes';
import { httpGet, httpPost, makeRegistry, pollUntilReported, redisClient, stackOnOwnTemporal, temporalClient } from './kit';
import { signalKeys } from '../../src/redis-keys';

/**
 * The poll answers from what bridges reported (docs/poll.md), kept by the ingress once it recorded the report: the
 * outcome it keeps is the one the workflow records, and a fill stays visible while Temporal is gone. A signal nobody
 * reported is never answered "pending" on a guess when Temporal cannot be read: that stays the spec's 500/503.
 * Its own Temporal dev server (it is stopped here); the run's shared Redis.
 */

const reg = makeRegistry('pollrep', 2, { platform: 'mt5' });
/** As in temporal-outage.test.ts: a short submission deadline, so that an answer during the outage comes in about 2 s. */
const TEMPORAL_DEADLINES = { TEMPORAL_START_TIMEOUT_MS: '500' };

describe('the poll and the outcomes bridges reported', () => {
  let temporal: TemporalServer | undefined;
  let stack: ProcessStack | undefined;
  let signalId = '';

  beforeAll(async () => {
    ({ temporal, stack } = await stackOnOwnTemporal(reg, TEMPORAL_DEADLINES));
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await temporal?.stop();
  });

  test('when a broadcast buy is filled, then the outcome kept for the poll is the one in the signal workflow (same account, ticket)', async () => {
    const res = await httpPost(`${stack!.ingress.url}/webhook/custom`, { secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
    expect(res.status).toBe(202);
    signalId = res.body.signalId as string;
    const polled = (await pollUntilReported(() => stack!.ingress.url, reg.token, [signalId], { deadlineMs: 30_000, count: 2 })).get(signalId)!.accounts;
    expect(polled.map((o) => o.outcome)).toEqual(['filled', 'filled']);

    const redis = redisClient(testEnv().redisUrl);
    const kept = Object.values(await redis.hgetall(signalKeys.reportedOutcomes(signalId))).map((t) => JSON.parse(t) as Record<string, unknown>);
    expect(await redis.ttl(signalKeys.reportedOutcomes(signalId))).toBeGreaterThan(0);
    redis.disconnect();
    // The poll answers from the bridges' reports as soon as the ingress records them, which may be before the signal
    // workflow has written them to its memo: wait for both there.
    const view = await temporalClient({ address: temporal!.address, namespace: 'default' });
    const fromMemo = await waitFor(
      'both outcomes in the signal workflow memo',
      async () => {
        const memo = (await view.client.workflow.getHandle(`signal/${signalId}`).describe()).memo ?? {};
        const outcomes = Object.entries(memo)
          .filter(([k]) => k.startsWith('outcome:'))
          .map(([, v]) => v as Record<string, unknown>);
        return outcomes.length === 2 ? outcomes : undefined;
      },
      15_000,
    );
    await view.close();
    const essentials = (os: Record<string, unknown>[]) =>
      os
        .map((o) => ({ accountId: o.accountId, outcome: o.outcome, ticket: o.ticket, reason: o.reason }))
        .sort((a, b) => String(a.accountId).localeCompare(String(b.accountId)));
    expect(essentials(kept)).toHaveLength(2);
    expect(essentials(kept)).toEqual(essentials(fromMemo));
    expect(essentials(kept)).toEqual(essentials(polled as unknown as Record<string, unknown>[]));
  }, 60_000);

  test('when Temporal is gone, then a reported fill is still answered, at once; a signal nobody reported gets 500/503, never "pending"', async () => {
    // A signal this ingress has never read from Temporal (no answer of Temporal's kept in the process): what the poll
    // shows of it can only come from what the bridge reported.
    const account = reg.accounts[0]!.id;
    const res = await httpPost(`${stack!.ingress.url}/webhook/custom/${account}`, { secret: reg.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });
    expect(res.status).toBe(202);
    const id = res.body.signalId as string;
    const redis = redisClient(testEnv().redisUrl);
    let kept: Record<string, string> = {};
    await waitFor(
      'the bridge report kept for the poll',
      async () => Object.keys((kept = await redis.hgetall(signalKeys.reportedOutcomes(id)))).length === 1,
      30_000,
    );
    redis.disconnect();
    await temporal!.stop();

    // Not a speed check: Temporal cannot answer (a signal nobody reported gets its 500/503 in the same moment), and
    // each poll of the reported signal is answered from the bridge's report all the same.
    const sentAt = Date.now();
    const polls = [];
    for (let i = 0; i < 3; i++) polls.push(await httpGet(`${stack!.ingress.url}/v1/signals/${id}`, { authorization: `Bearer ${reg.token}` }));
    const unknown = await httpGet(`${stack!.ingress.url}/v1/signals/sig_${'z'.repeat(24)}`, { authorization: `Bearer ${reg.token}` });
    console.log(`three polls of the reported signal and one of an unknown signal answered in ${Date.now() - sentAt} ms`);
    for (const poll of polls) {
      expect(poll.status).toBe(200);
      expect(poll.body).toMatchObject({
        status: 'reported',
        reported: 1,
        accounts: [{ accountId: account, outcome: 'filled', ticket: (JSON.parse(kept[account]!) as { ticket: string }).ticket }],
      });
    }
    expect([500, 503]).toContain(unknown.status);
  }, 60_000);
});
