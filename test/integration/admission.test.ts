import { type Client, type Connection } from '@temporalio/client';
import { temporalClient } from '../helpers/temporal';
import { Redis } from 'ioredis';
import { AdmissionGate, RedisAdmissionLedger } from '../../src/signals/admission';
import { startWorker, type RunningWorker } from '../../src/worker';
import { freePort, waitFor } from '../../support/infra';
import { get, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * Admission control against the real Temporal and Redis: with no worker, accepted signals stay unsupervised; once
 * more than ADMISSION_MAX_LATE of them have waited past ADMISSION_SUPERVISION_LAG_MS, new signals are refused at the
 * door, a replay of one already promised is not, and the door opens again when a worker has caught up.
 */
describe('admission control: a 202 is a promise the execution path can keep', () => {
  let stack: Stack;
  let f: Fixture;
  let worker: RunningWorker | undefined;
  let connection: Connection;
  let client: Client;
  const buy = () => ({ secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });

  beforeAll(async () => {
    stack = await startStack({
      worker: false,
      env: { ADMISSION_SUPERVISION_LAG_MS: '300', ADMISSION_MAX_LATE: '2', ADMISSION_REFRESH_MS: '50' },
    });
    f = await seedOwner(stack.registry, [{}]);
    ({ connection, client } = await temporalClient());
  });
  afterAll(async () => {
    await worker?.shutdown();
    await stack.stop();
    await connection.close();
  });

  test('when accepted signals wait unqueued past the limit, then new ones get 503 backpressure with Retry-After, replays still get their 202, and a caught-up worker reopens the door', async () => {
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const keyed = await post(url, buy(), { 'x-idempotency-key': 'admission-replay-1' });
    expect(keyed.status).toBe(202);
    const accepted = [keyed.body.signalId as string];
    for (let i = 0; i < 2; i++) {
      const res = await post(url, buy());
      expect(res.status).toBe(202);
      accepted.push(res.body.signalId as string);
    }

    // Three targets wait with no worker; once they are late, the door closes.
    const refused = await waitFor(
      'a submission refused at the door',
      async () => {
        const res = await post(url, buy());
        if (res.status === 202) accepted.push(res.body.signalId as string);
        return res.status === 503 ? res : undefined;
      },
      15_000,
      50,
    );
    expect(refused.body).toEqual({ error: 'System under high load, retry later', backpressure: true });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // The replay of a promised signal is no new work: same 202, same signalId.
    const replay = await post(url, buy(), { 'x-idempotency-key': 'admission-replay-1' });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.signalId).toBe(keyed.body.signalId);

    // Nothing refused was started: once the starts made after the answers are done, the task queue holds exactly the
    // accepted signals.
    const want = accepted.map((id) => `signal/${id}`).sort();
    const started = await waitFor(
      'the accepted signals started, and no other',
      async () => {
        const ids: string[] = [];
        for await (const wf of client.workflow.list({ query: `TaskQueue = "${stack.config.temporal.taskQueue}" AND WorkflowType = "signalWorkflow"` }))
          ids.push(wf.workflowId);
        return ids.length >= want.length ? ids.sort() : undefined;
      },
      15_000,
      100,
    );
    expect(started).toEqual(want);

    // A worker drains the backlog (the commands are queued for the bridge) and the door opens again.
    worker = await startWorker(stack.config);
    const reopened = await waitFor(
      'a submission accepted again',
      async () => {
        const res = await post(url, buy());
        return res.status === 202 ? res : undefined;
      },
      30_000,
      100,
    );
    expect(reopened.body.success).toBe(true);
    // Every promised signal still runs: each one's command is queued for the account's bridge. A poll hands a command
    // out once (again only after 15 s unreported), so the commands are gathered over the polls: the workflows queue
    // them one by one as the worker catches up.
    const handedOut = new Set<string>();
    const commands = await waitFor(
      'every accepted signal queued for the bridge',
      async () => {
        const res = await get(`${stack.ingress.url}/bridge/v1/commands?waitMs=0`, { authorization: `Bearer ${f.accounts[0]!.bridgeToken}` });
        for (const c of res.body.commands as { signalId: string }[]) handedOut.add(c.signalId);
        return accepted.every((id) => handedOut.has(id)) ? handedOut : undefined;
      },
      30_000,
      200,
    );
    expect(commands.size).toBeGreaterThanOrEqual(accepted.length);
  });

  test('when the admission reading cannot be had (Redis unreachable), then nothing is admitted', async () => {
    // A real client to a loopback port where nothing listens: every reading fails as it would with Redis down.
    const down = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    down.on('error', () => undefined);
    try {
      const gate = new AdmissionGate(new RedisAdmissionLedger(down, 'nowhere', 60_000), { lateAfterMs: 1000, maxLate: 10, refreshMs: 100 });
      expect(await gate.decide()).toEqual({ admitted: false, retryAfterSeconds: 1, reason: 'unknown' });
    } finally {
      down.disconnect();
    }
  });
});
