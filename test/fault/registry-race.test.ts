import { adminCli } from '../helpers/admin';
import { waitFor } from '../../support/infra';
import { post, seedOwner, startStack, type Stack } from '../helpers/stack';

/**
 * Issue 12 item 3: an operator's edit and a bridge's hello racing on one account. Each trial streams hellos (each one
 * changes the bridge version, so each one writes) over HTTP from several connections while the admin CLI's own code
 * path locks the account; once both are done the lock must still be there. Before field-level updates a hello read
 * the whole account and wrote it back, and the lock was lost in about half the trials.
 */

const TRIALS = 12;
const HELLO_STREAMS = 4;

describe('a bridge hello racing an operator edit', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function raceOnce(account: { id: string; bridgeToken: string }, lock: string[]): Promise<{ status: string; hellos: number }> {
    let stop = false;
    let hellos = 0;
    let failure: unknown;
    const streams = Array.from({ length: HELLO_STREAMS }, async (_, s) => {
      for (let i = 0; !stop || i < 2; i++) {
        const res = await post(
          `${stack.ingress.url}/bridge/v1/hello`,
          {
            platform: 'mt5',
            bridgeVersion: `2.${s}.${i}`,
            symbols: [{ name: 'EURUSD', digits: 5, pipSize: 0.0001, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 100 }],
          },
          { authorization: `Bearer ${account.bridgeToken}` },
        );
        if (res.status !== 200) {
          failure = new Error(`hello answered ${res.status}: ${res.text}`);
          throw failure;
        }
        hellos++;
      }
    });
    // Let the hellos get going, then lock while they stream.
    await waitFor(
      'hellos streaming',
      async () => {
        if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
        return hellos >= HELLO_STREAMS;
      },
      10_000,
      1,
    );
    const locked = await adminCli(lock, stack.config.redis.url);
    stop = true;
    await Promise.all(streams);
    if (locked.code !== 0) throw new Error(`admin ${lock.join(' ')} exited ${locked.code}: ${locked.stderr}`);
    const stored = await stack.registry.getAccount(account.id);
    return { status: stored!.status, hellos };
  }

  test('when an operator locks an account while its bridge streams hellos, then the lock is never lost', async () => {
    const f = await seedOwner(stack.registry);
    const account = f.accounts[0]!;
    const outcomes: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      expect((await adminCli(['account', 'unlock', account.id], stack.config.redis.url)).code).toBe(0);
      const verb = trial % 2 === 0 ? ['account', 'set', account.id, '--status', 'locked'] : ['account', 'lock', account.id];
      const { status, hellos } = await raceOnce(account, verb);
      expect(hellos).toBeGreaterThanOrEqual(HELLO_STREAMS * 2);
      outcomes.push(status);
    }
    expect(outcomes).toEqual(Array(TRIALS).fill('locked'));
    // The hellos' own writes were kept too: the last reported version is stored.
    const stored = await stack.registry.getAccount(account.id);
    expect(stored!.bridgeVersion).toMatch(/^2\.[0-3]\.\d+$/);
  });
});
