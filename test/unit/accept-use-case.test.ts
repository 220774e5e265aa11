import { waitFor } from '../../support/infra';
import { acceptSignal } from '../../src/signals/accept';
import type { AcceptDeps } from '../../src/signals/acceptance';
import { accountSchema, type Account } from '../../src/domain/account';
import type { AccountSequencer, MarkRetime } from '../../src/bridge/ordering';
import type { SignalExecutions } from '../../src/signals/executions';
import type { AcceptanceRecord, IdempotencyWindows } from '../../src/signals/idempotency';
import type { SignalWorkflowInput } from '../../src/domain/workflow-input';
import { ExecutionsUnavailable, LaunchFailure, Refusal } from '../../src/refusal';
import type { Registry } from '../../src/registry/registry';

/**
 * The submit use case's own branches, in process, with in-memory fakes of its ports (registry, throttle, sequencer,
 * executions, idempotency windows, admission). These are not a stand-in for Temporal or Redis: the integration and
 * end-to-end suites run the same paths on the real ones. Here: what the use case decides from what its ports answer.
 */

const NOW = Date.parse('2026-11-24T12:00:00Z');
const account = (id: string, extra: Partial<Account> = {}): Account =>
  accountSchema.parse({ id, owner: 'alice', platform: 'mt5', bridgeVersion: '2.0.0', ...extra });

function fakes(
  opts: {
    launch?: (region: string, input: SignalWorkflowInput) => Promise<'created' | 'existed'>;
    admitted?: boolean;
    accounts?: Account[];
    /** Whether a region answers "was it started?" (default: it does, truthfully). */
    startedUnavailable?: boolean;
    /** How many confirmations of the start leases fail first (Redis away). */
    retimeFailures?: number;
  } = {},
) {
  const accounts = new Map((opts.accounts ?? [account('acc-1'), account('acc-2')]).map((a) => [a.id, a]));
  const marks = new Map<string, { seq: number; until: number }[]>();
  const calls = { launched: [] as SignalWorkflowInput[], released: [] as string[], retimed: [] as MarkRetime[], settled: [] as string[] };
  let counter = 0;
  let retimeFailures = opts.retimeFailures ?? 0;
  const sequencer: AccountSequencer = {
    async next(targets) {
      return targets.map((t) => {
        const seq = ++counter;
        marks.set(t.accountId, [...(marks.get(t.accountId) ?? []), { seq, until: t.deadlineMs }]);
        return { seq, generation: '1' };
      });
    },
    async release(accountId, seq) {
      calls.released.push(`${accountId}#${seq}`);
    },
    async retime(moves) {
      if (retimeFailures-- > 0) throw new Error('Connection is closed.');
      calls.retimed.push(...moves);
    },
  };
  const executions: SignalExecutions = {
    async launch(region, input) {
      calls.launched.push(input);
      return opts.launch ? opts.launch(region, input) : 'created';
    },
    async started() {
      if (opts.startedUnavailable) throw new ExecutionsUnavailable('region unreachable');
      return calls.launched.length > 0;
    },
    async outcomes() {
      return [];
    },
    async deliverReport() {
      return 'unknown';
    },
  };
  const claims = new Map<string, AcceptanceRecord>();
  const windows: IdempotencyWindows = {
    async claim(digest, record) {
      const first = claims.get(digest);
      if (first) return { first: false, record: first };
      claims.set(digest, record);
      return { first: true };
    },
    async held(digest) {
      return claims.has(digest);
    },
  };
  const registry = {
    async getAccount(id: string) {
      return accounts.get(id) ?? null;
    },
    async getAccounts(ids: string[]) {
      return ids.map((id) => accounts.get(id) ?? null);
    },
    async volumeRules(targets: { accountId: string }[]) {
      return targets.map(() => undefined);
    },
  } as unknown as Registry;
  const deps: AcceptDeps = {
    registry,
    throttle: {
      hit: async () => ({ allowed: true, limit: 10, windowMs: 60_000 }),
      hitEach: async (_s, keys) => keys.map(() => ({ allowed: true, limit: 10, windowMs: 60_000 })),
    },
    sequencer,
    executions,
    windows,
    admission: {
      decide: async () => (opts.admitted === false ? { admitted: false, retryAfterSeconds: 3, reason: 'behind' } : { admitted: true }),
      ledger: {
        accepted: async () => undefined,
        settled: async (signalId, accountId) => void calls.settled.push(`${signalId}/${accountId}`),
      },
    },
    settings: {
      idempotencyKeyMaxLength: 128,
      idempotencyWindowMs: 45_000,
      temporalBudgetMs: 1_500,
      defaultMaxSignalAgeMs: 30_000,
      defaultCommandTtlMs: 300_000,
      figuresMaxAgeMs: 60_000,
      failClosedRetryAfterSeconds: 5,
    },
    now: () => NOW,
  };
  return { deps, calls };
}

const grant = { hash: 'h', owner: 'alice', accounts: ['acc-1', 'acc-2'] };
const buy = { secret: 'whsec_x', action: 'buy', symbol: 'EURUSD', volume: 0.1 };

describe('acceptSignal with fakes of its ports', () => {
  test("when an entry is accepted, then each target carries the bound on its figures' age; a close carries none", async () => {
    const { deps, calls } = fakes();
    await acceptSignal(deps, { grant, body: buy, correlationId: 'c1' });
    await acceptSignal(deps, { grant, body: { secret: 'whsec_x', action: 'close_all' }, correlationId: 'c2' });
    expect(calls.launched.map((l) => l.targets.map((t) => t.figuresMaxAgeMs))).toEqual([
      [60_000, 60_000],
      [undefined, undefined],
    ]);
  });

  test('when a broadcast starts in its region, then 202 accepted, one launch for both accounts, and each start lease is moved to its command deadline', async () => {
    const { deps, calls } = fakes();
    const result = await acceptSignal(deps, { grant, body: buy, correlationId: 'c1' });
    expect(result.kind).toBe('accepted');
    expect(calls.launched).toHaveLength(1);
    expect(calls.launched[0]!.targets.map((t) => t.account.id)).toEqual(['acc-1', 'acc-2']);
    // Lease: the Temporal budget (1.5 s) plus 5 s; deadline: the market entry's 30 s max age.
    expect(calls.retimed).toEqual([
      { accountId: 'acc-1', seq: 1, fromMs: NOW + 6_500, toMs: NOW + 30_000 },
      { accountId: 'acc-2', seq: 2, fromMs: NOW + 6_500, toMs: NOW + 30_000 },
    ]);
  });

  test('when Redis does not take the confirmation of the start leases, then the 202 goes out and the confirmation is tried again until it lands', async () => {
    const { deps, calls } = fakes({ retimeFailures: 3 });
    const result = await acceptSignal(deps, { grant, body: buy, correlationId: 'c1' });
    expect(result.kind).toBe('accepted');
    expect(calls.retimed).toEqual([]);
    // Three failures: the first before the answer, two retries (100 and 200 ms), then the third retry lands.
    await waitFor('the confirmation to land', async () => calls.retimed.length > 0 || undefined, 5_000, 20);
    expect(calls.retimed).toEqual([
      { accountId: 'acc-1', seq: 1, fromMs: NOW + 6_500, toMs: NOW + 30_000 },
      { accountId: 'acc-2', seq: 2, fromMs: NOW + 6_500, toMs: NOW + 30_000 },
    ]);
  });

  test('when the owner has callback endpoints, then each signal carries those that want its outcome once per owner; owners without any carry nothing', async () => {
    const { deps, calls } = fakes();
    const asked: [string[], string | undefined][] = [];
    deps.callbacks = {
      enabledIds: async (owners, type) => {
        asked.push([[...owners], type]);
        // alice's first endpoint wants every type, her second exits only.
        return owners.map((o) =>
          o === 'alice' ? (type === 'signal.exit_outcome' ? ['ep_aaaaaaaaaaaaaaaa', 'ep_bbbbbbbbbbbbbbbb'] : ['ep_aaaaaaaaaaaaaaaa']) : [],
        );
      },
    };
    await acceptSignal(deps, { grant, body: buy, correlationId: 'cb1' });
    // Once per owner, not once per target: a broadcast to hundreds of accounts carries them once.
    expect(calls.launched[0]!.callbackEndpoints).toEqual({ alice: ['ep_aaaaaaaaaaaaaaaa'] });
    // An exit's outcome goes out as signal.exit_outcome, to the endpoints that want that type.
    await acceptSignal(deps, { grant, body: { secret: 'whsec_x', action: 'close_all' }, idempotencyKey: 'k-exit', correlationId: 'cb2' });
    expect(calls.launched[1]!.callbackEndpoints).toEqual({ alice: ['ep_aaaaaaaaaaaaaaaa', 'ep_bbbbbbbbbbbbbbbb'] });
    expect(asked).toEqual([
      [['alice'], 'signal.outcome'],
      [['alice'], 'signal.exit_outcome'],
    ]);
    deps.callbacks = { enabledIds: async (owners) => owners.map(() => []) };
    await acceptSignal(deps, { grant, body: buy, correlationId: 'cb3' });
    expect(calls.launched[2]).not.toHaveProperty('callbackEndpoints');
  });

  test('when the start certainly did not happen (not overload), then the numbers are released and the refusal is not a 202', async () => {
    const { deps, calls } = fakes({ launch: async () => Promise.reject(new LaunchFailure(false, false, { cause: new Error('namespace not found') })) });
    await expect(acceptSignal(deps, { grant, body: buy, correlationId: 'c2' })).rejects.toThrow('namespace not found');
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.released.sort()).toEqual(['acc-1#1', 'acc-2#2']);
    expect(calls.retimed).toEqual([]);
  });

  test('when every start failed for overload, then 503 backpressure (retry later), and nothing is held', async () => {
    const { deps, calls } = fakes({ launch: async () => Promise.reject(new LaunchFailure(false, true)) });
    await expect(acceptSignal(deps, { grant, body: buy, correlationId: 'c3' })).rejects.toMatchObject({ kind: 'backpressure' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.released).toHaveLength(2);
  });

  test('when the start may have happened (its answer lost), then never "not accepted": partially accepted with the signalId, and the marks held only briefly', async () => {
    const { deps, calls } = fakes({ launch: async () => Promise.reject(new LaunchFailure(true, true)) });
    const result = await acceptSignal(deps, { grant, body: buy, correlationId: 'c4' });
    expect(result.kind).toBe('partially_accepted');
    expect(result.body).toMatchObject({ success: false, signalId: expect.stringMatching(/^sig_/) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.released).toEqual([]);
    // Held until now + 10 s (the answer may come), never to the command's deadline (now + 30 s). The use case's clock
    // is the fake's: a test that read the wall clock here passed before NOW and failed after it.
    expect(calls.retimed.map((m) => m.toMs)).toEqual([NOW + 10_000, NOW + 10_000]);
  });

  test('when an error nobody classified comes out of the start, then the use case treats it as "may have started"', async () => {
    const { deps } = fakes({ launch: async () => Promise.reject(new Error('something odd')) });
    expect((await acceptSignal(deps, { grant, body: buy, correlationId: 'c5' })).kind).toBe('partially_accepted');
  });

  test('when the same key comes again, then the first answer (same signalId) and no second launch', async () => {
    const { deps, calls } = fakes();
    const first = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k1', correlationId: 'c6' });
    const again = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k1', correlationId: 'c7' });
    expect(again).toMatchObject({ kind: 'accepted', replayed: true, body: { signalId: (first.body as { signalId: string }).signalId } });
    expect(calls.launched).toHaveLength(1);
  });

  test('when a replay cannot learn whether a region started (unreachable), then it starts it again under the first signalId, which Temporal answers "existed": same answer, the new numbers released', async () => {
    let launches = 0;
    const { deps, calls } = fakes({ startedUnavailable: true, launch: async () => (++launches === 1 ? 'created' : 'existed') });
    const first = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k9', correlationId: 'c20' });
    const again = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k9', correlationId: 'c21' });
    const signalId = (first.body as { signalId: string }).signalId;
    expect(again).toMatchObject({ kind: 'accepted', replayed: true, body: { signalId, accountsResolved: 2 } });
    expect(calls.launched.map((l) => l.signalId)).toEqual([signalId, signalId]);
    await new Promise((resolve) => setImmediate(resolve));
    // The second launch's numbers (3 and 4) will never be queued: released at once.
    expect(calls.released.sort()).toEqual(['acc-1#3', 'acc-2#4']);
  });

  test('when a replay cannot learn whether a region started and starting it again fails for overload, then the first signalId again (it may run), never "not accepted"', async () => {
    let launches = 0;
    const { deps } = fakes({
      startedUnavailable: true,
      launch: async () => {
        if (++launches === 1) return 'created';
        throw new LaunchFailure(false, true);
      },
    });
    const first = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k10', correlationId: 'c22' });
    const again = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k10', correlationId: 'c23' });
    expect(again).toMatchObject({
      kind: 'partially_accepted',
      replayed: true,
      body: { success: false, signalId: (first.body as { signalId: string }).signalId },
    });
  });

  test('when admission says the execution path is behind, then a new signal is refused at the door, but a replay of a held key is answered', async () => {
    const open = fakes();
    const first = await acceptSignal(open.deps, { grant, body: buy, idempotencyKey: 'k2', correlationId: 'c8' });
    const shut = {
      ...open.deps,
      admission: { ...open.deps.admission, decide: async () => ({ admitted: false as const, retryAfterSeconds: 3, reason: 'behind' as const }) },
    };
    await expect(acceptSignal(shut, { grant, body: buy, correlationId: 'c9' })).rejects.toMatchObject({
      kind: 'backpressure',
      extra: { retryAfterSeconds: 3 },
    });
    expect(await acceptSignal(shut, { grant, body: buy, idempotencyKey: 'k2', correlationId: 'c10' })).toMatchObject({
      replayed: true,
      body: { signalId: (first.body as { signalId: string }).signalId },
    });
  });

  test('when the idempotency store is unavailable, then 503 backpressure, not a 500', async () => {
    const { deps } = fakes();
    deps.windows.claim = async () => Promise.reject(new ExecutionsUnavailable('down'));
    const refused = acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k3', correlationId: 'c11' });
    await expect(refused).rejects.toBeInstanceOf(Refusal);
    await expect(refused).rejects.toMatchObject({ kind: 'backpressure' });
  });

  test('when the route account is locked, then 403 and nothing numbered or launched', async () => {
    const { deps, calls } = fakes({ accounts: [account('acc-1', { status: 'locked' }), account('acc-2')] });
    await expect(acceptSignal(deps, { grant, body: buy, routeAccountId: 'acc-1', correlationId: 'c12' })).rejects.toMatchObject({ kind: 'forbidden' });
    expect(calls.launched).toEqual([]);
  });
});
