import { readSignalStatus, type StatusDeps } from '../../src/signals/status';
import { accountSchema, type Account } from '../../src/domain/account';
import type { AccountOutcome } from '../../src/domain/outcome';
import type { SignalExecutions } from '../../src/signals/executions';
import type { Registry } from '../../src/registry/registry';
import { LateReads } from '../../src/temporal/late-reads';

/**
 * The poll use case's own branches, in process, with fakes of its ports: which outcomes it shows when Temporal is
 * quick, slow or unreachable, and what bridges reported meanwhile. The real Temporal and Redis paths are in
 * test/integration/poll-reported.test.ts.
 */

const SIGNAL = 'sig_0123456789abcdefghij';
const account = (id: string, owner = 'alice'): Account => accountSchema.parse({ id, owner, platform: 'mt5', bridgeVersion: '2.0.0' });
const filled = (accountId: string, ticket: string): AccountOutcome => ({
  accountId,
  outcome: 'filled',
  ticket,
  reason: null,
  occurredAt: '2026-11-24T12:00:01.000Z',
});
const rejected = (accountId: string, reason: string): AccountOutcome => ({
  accountId,
  outcome: 'rejected',
  ticket: null,
  reason,
  occurredAt: '2026-11-24T12:00:02.000Z',
});

/** Temporal as the port presents it: `answer` is what a describe returns, when it returns (or fails). */
function fakes(opts: { temporal: () => Promise<AccountOutcome[]>; bridges?: AccountOutcome[]; accounts?: Account[]; grantAccounts?: string[] }) {
  const accounts = new Map((opts.accounts ?? [account('acc-1'), account('acc-2')]).map((a) => [a.id, a]));
  // The adapter's own waiting logic (LateReads), over the fake describe: what the use case sees is what it would see.
  const late = new LateReads<AccountOutcome[]>(5_000, 100);
  let temporalReads = 0;
  const executions = {
    async outcomes(signalId: string, waitMs?: number) {
      return late.read(
        signalId,
        () => {
          temporalReads++;
          return opts.temporal();
        },
        waitMs,
      );
    },
  } as unknown as SignalExecutions;
  const registry = {
    async authenticateToken(token: string) {
      return token === 'tok' ? { hash: 'h', owner: 'alice', accounts: opts.grantAccounts ?? ['acc-1', 'acc-2'], suspendedUntil: null } : null;
    },
    async getAccounts(ids: string[]) {
      return ids.map((id) => accounts.get(id) ?? null);
    },
  } as unknown as Registry;
  const deps: StatusDeps = {
    registry,
    throttle: {
      hit: async () => ({ allowed: true, limit: 10, windowMs: 60_000 }),
      hitEach: async (_s, keys) => keys.map(() => ({ allowed: true, limit: 10, windowMs: 60_000 })),
    },
    executions,
    reported: { record: async () => undefined, read: async () => opts.bridges ?? [] },
    temporalWaitMs: 20,
    failClosedRetryAfterSeconds: 5,
  };
  return { deps, reads: () => temporalReads };
}

const never = () => new Promise<AccountOutcome[]>(() => undefined);
const poll = (deps: StatusDeps) => readSignalStatus(deps, { token: 'tok', signalId: SIGNAL });

describe('readSignalStatus: the poll never waits behind the execution path when it has something to show', () => {
  test('when Temporal answers in time, then its outcomes are the answer, and an account it has wins over the bridge copy', async () => {
    const { deps } = fakes({ temporal: async () => [filled('acc-1', 'T-temporal')], bridges: [filled('acc-1', 'T-bridge'), filled('acc-2', 'T-2')] });
    const status = await poll(deps);
    expect(status).toMatchObject({ status: 'reported', reported: 2 });
    expect(status.accounts.map((a) => [a.accountId, a.ticket])).toEqual([
      ['acc-1', 'T-temporal'],
      ['acc-2', 'T-2'],
    ]);
  });

  test('when Temporal does not answer within the wait but a bridge reported, then the bridge outcome is answered at once', async () => {
    const { deps } = fakes({ temporal: never, bridges: [filled('acc-2', 'T-2')] });
    const status = await poll(deps);
    expect(status).toEqual({ signalId: SIGNAL, status: 'reported', reported: 1, accounts: [expect.objectContaining({ accountId: 'acc-2', ticket: 'T-2' })] });
  });

  test('when Temporal is slow and nothing was reported, then the poll waits for Temporal rather than say "pending" on a guess', async () => {
    let answer!: (o: AccountOutcome[]) => void;
    const { deps } = fakes({ temporal: () => new Promise((resolve) => (answer = resolve)) });
    const pending = poll(deps);
    let done = false;
    void pending.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(done).toBe(false);
    answer([rejected('acc-1', 'risk_symbol_not_allowed')]);
    await expect(pending).resolves.toMatchObject({ status: 'reported', accounts: [{ accountId: 'acc-1', reason: 'risk_symbol_not_allowed' }] });
  });

  test('when Temporal is unreachable, then bridge outcomes are still answered; with none, the error is (the spec 500/503)', async () => {
    const down = () => Promise.reject(new Error('Temporal unreachable'));
    await expect(poll(fakes({ temporal: down, bridges: [filled('acc-1', 'T-1')] }).deps)).resolves.toMatchObject({ reported: 1 });
    await expect(poll(fakes({ temporal: down }).deps)).rejects.toThrow('Temporal unreachable');
  });

  test('when a late Temporal answer arrives, then the next poll shows it (workflow-side rejections are never starved)', async () => {
    let answer!: (o: AccountOutcome[]) => void;
    let calls = 0;
    const { deps, reads } = fakes({
      temporal: () => (++calls === 1 ? new Promise((resolve) => (answer = resolve)) : never()),
      bridges: [filled('acc-2', 'T-2')],
    });
    expect((await poll(deps)).reported).toBe(1);
    answer([rejected('acc-1', 'risk_max_lot')]);
    await new Promise((resolve) => setImmediate(resolve));
    const second = await poll(deps);
    expect(second.accounts.map((a) => a.accountId).sort()).toEqual(['acc-1', 'acc-2']);
    expect(reads()).toBe(2);
  });

  test("when a bridge copy names an account the token does not read, or another owner's, then it is not shown", async () => {
    const { deps } = fakes({
      temporal: never,
      bridges: [filled('acc-1', 'T-1'), filled('acc-3', 'T-3'), filled('acc-4', 'T-4')],
      accounts: [account('acc-1'), account('acc-3'), account('acc-4', 'bob')],
      grantAccounts: ['acc-1', 'acc-4'],
    });
    const status = await poll(deps);
    expect(status.accounts.map((a) => a.accountId)).toEqual(['acc-1']);
  });
});
