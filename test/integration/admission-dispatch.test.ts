import { startWorker, type RunningWorker } from '../../src/worker';
import { waitFor } from '../../support/infra';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * Admission control with dispatch at acceptance (the default): the order reaches the bridge without Temporal, so a
 * burst that Temporal supervises seconds later is absorbed, every signal of it handed out at once; only a standing
 * backlog (the workflows more than ADMISSION_SUPERVISION_LAG_MS behind on more than ADMISSION_MAX_LATE targets) closes
 * the door, with 503 and Retry-After, until the workflows catch up. No worker runs here until the end: the standing
 * overload is Temporal's supervision stopped altogether.
 */
describe('admission control with dispatch at acceptance', () => {
  let stack: Stack;
  let f: Fixture;
  let worker: RunningWorker | undefined;
  const buy = () => ({ secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.01 });

  beforeAll(async () => {
    stack = await startStack({
      worker: false,
      env: { ADMISSION_SUPERVISION_LAG_MS: '3000', ADMISSION_MAX_LATE: '5', ADMISSION_REFRESH_MS: '50' },
    });
    f = await seedOwner(stack.registry, [{}, {}]);
  });
  afterAll(async () => {
    await worker?.shutdown();
    await stack.stop();
  });

  test('when a burst of 20 arrives with no workflow running, then all are accepted and handed out; once the backlog stands, 503 with Retry-After; a caught-up worker reopens the door', async () => {
    const bridges = f.accounts.map((a) => new ScriptedTerminal(stack.ingress.url, a.bridgeToken));
    await Promise.all(bridges.map((b) => b.hello()));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(`${stack.ingress.url}/webhook/custom/${f.accounts[i % 2]!.id}`, buy())));
    expect(answers.map((a) => (a.status === 202 ? 202 : `${a.status} ${JSON.stringify(a.body)}`))).toEqual(Array(20).fill(202));
    // The bridges have every order though Temporal has supervised none of them.
    const handed = await Promise.all(bridges.map((b) => b.nextCommands(10, 10_000)));
    expect(
      handed
        .flat()
        .map((c) => c.signalId)
        .sort(),
    ).toEqual(answers.map((a) => a.body.signalId as string).sort());

    const refused = await waitFor(
      'the standing backlog to close the door',
      async () => {
        const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, buy());
        return res.status === 503 ? res : undefined;
      },
      15_000,
      100,
    );
    expect(refused.body).toEqual({ error: 'System under high load, retry later', backpressure: true });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    worker = await startWorker(stack.config);
    const reopened = await waitFor(
      'the door to open once the workflows caught up',
      async () => {
        const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[1]!.id}`, buy());
        return res.status === 202 ? res : undefined;
      },
      30_000,
      200,
    );
    expect(reopened.body.success).toBe(true);
  });
});
