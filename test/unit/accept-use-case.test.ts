import { waitFor } from '../../support/infra';
import { riskSettingsSchema } from '../../src/domain/risk-settings';
import { acceptSignal } from '../../src/signals/accept';
import type { AcceptDeps } from '../../src/signals/acceptance';
import { accountSchema, type Account } from '../../src/domain/account';
import type { AccountSequencer, MarkRetime } from '../../src/bridge/ordering';
import type { AcceptanceRecord, IdempotencyWindows } from '../../src/signals/idempotency';
import type { SignalWorkflowInput } from '../../src/domain/workflow-input';
import { ExecutionsUnavailable, Refusal } from '../../src/refusal';
import type { Registry } from '../../src/registry/registry';

/**
 * The submit use case's own branches, in process, with in-memory fakes of its ports (registry, throttle, sequencer,
 * pending starts, starter, queue, executions, idempotency windows, admission). These are not a stand-in for Temporal or Redis: the integration and
 * end-to-end suites run the same paths on the real ones. Here: what the use case decides from what its ports answer.
 */

const NOW = Date.parse('2026-11-24T12:00:00Z');
const account = (id: string, extra: Partial<Account> = {}): Account =>
  accountSchema.parse({ id, owner: 'alice', platform: 'mt5', bridgeVersion: '2.0.0', ...extra });

function fakes(
  opts: {
    /** The record of the start in Redis (default: written, first). */
    record?: (region: string, input: SignalWorkflowInput) => Promise<'created' | 'existed'>;
    /** Whether taking back a record whose write failed fails too. */
    takeBackFails?: boolean;
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
  const calls = {
    recorded: [] as SignalWorkflowInput[],
    queued: [] as string[],
    started: [] as string[],
    takenBack: [] as string[],
    released: [] as string[],
    retimed: [] as MarkRetime[],
  };
  const pending = new Set<string>();
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
  const starts: AcceptDeps['starts'] = {
    async record(region, input) {
      calls.recorded.push(input);
      const result = opts.record ? await opts.record(region, input) : 'created';
      pending.add(input.signalId);
      return result;
    },
    async started(_region, signalId) {
      if (opts.takeBackFails) throw new Error('Connection is closed.');
      calls.takenBack.push(signalId);
      pending.delete(signalId);
    },
    async claim(_region, signalId) {
      return pending.has(signalId) ? calls.recorded.find((r) => r.signalId === signalId) : undefined;
    },
  };
  // The starter's start made at once: the record goes, and Temporal then says it started.
  const starter: AcceptDeps['starter'] = {
    start(_region, input) {
      calls.started.push(input.signalId);
      pending.delete(input.signalId);
    },
  };
  const executions: AcceptDeps['executions'] = {
    async started(_region, signalId) {
      if (opts.startedUnavailable) throw new ExecutionsUnavailable('region unreachable');
      return calls.started.includes(signalId);
    },
  };
  const dispatch: AcceptDeps['dispatch'] = {
    queue: {
      async enqueue(command) {
        calls.queued.push(`${command.accountId}#${command.seq}`);
        return 'queued';
      },
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
    starts,
    starter,
    dispatch,
    windows,
    door: {
      decide: async () => (opts.admitted === false ? { admitted: false, retryAfterSeconds: 3, reason: 'start_backlog' } : { admitted: true }),
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
    expect(calls.recorded.map((l) => l.targets.map((t) => t.figuresMaxAgeMs))).toEqual([
      [60_000, 60_000],
      [undefined, undefined],
    ]);
  });

  test('when a broadcast is accepted in its region, then 202 accepted, one record for both accounts, and each start lease is moved to its command deadline', async () => {
    const { deps, calls } = fakes();
    const result = await acceptSignal(deps, { grant, body: buy, correlationId: 'c1' });
    expect(result.kind).toBe('accepted');
    expect(calls.recorded).toHaveLength(1);
    expect(calls.recorded[0]!.targets.map((t) => t.account.id)).toEqual(['acc-1', 'acc-2']);
    // Lease: the start claim (5 s) and one sweep (1 s), plus 5 s; deadline: the market entry's 30 s max age.
    expect(calls.retimed).toEqual([
      { accountId: 'acc-1', seq: 1, fromMs: NOW + 11_000, toMs: NOW + 30_000 },
      { accountId: 'acc-2', seq: 2, fromMs: NOW + 11_000, toMs: NOW + 30_000 },
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
      { accountId: 'acc-1', seq: 1, fromMs: NOW + 11_000, toMs: NOW + 30_000 },
      { accountId: 'acc-2', seq: 2, fromMs: NOW + 11_000, toMs: NOW + 30_000 },
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
    expect(calls.recorded[0]!.callbackEndpoints).toEqual({ alice: ['ep_aaaaaaaaaaaaaaaa'] });
    // An exit's outcome goes out as signal.exit_outcome, to the endpoints that want that type.
    await acceptSignal(deps, { grant, body: { secret: 'whsec_x', action: 'close_all' }, idempotencyKey: 'k-exit', correlationId: 'cb2' });
    expect(calls.recorded[1]!.callbackEndpoints).toEqual({ alice: ['ep_aaaaaaaaaaaaaaaa', 'ep_bbbbbbbbbbbbbbbb'] });
    expect(asked).toEqual([
      [['alice'], 'signal.outcome'],
      [['alice'], 'signal.exit_outcome'],
    ]);
    deps.callbacks = { enabledIds: async (owners) => owners.map(() => []) };
    await acceptSignal(deps, { grant, body: buy, correlationId: 'cb3' });
    expect(calls.recorded[2]).not.toHaveProperty('callbackEndpoints');
  });

  test('when Redis takes the record of the start, then the commands are queued and the start handed to the starter before the answer, which never waits for it', async () => {
    const { deps, calls } = fakes();
    const result = await acceptSignal(deps, { grant, body: buy, correlationId: 'c1' });
    expect(result.kind).toBe('accepted');
    expect(calls.queued).toEqual(['acc-1#1', 'acc-2#2']);
    expect(calls.started).toEqual([(result.body as { signalId: string }).signalId]);
    // Every target says its command may be queued already: the workflow adopts it rather than queue its own.
    expect(calls.recorded[0]!.targets.every((t) => t.dispatchedAtAcceptance === true)).toBe(true);
  });

  test('when a risk rule refuses the command, then nothing is queued for it; the signal is still accepted and started (its workflow records the refusal)', async () => {
    const { deps, calls } = fakes({ accounts: [account('acc-1', { risk: riskSettingsSchema.parse({ requireStopLoss: true }) }), account('acc-2')] });
    const result = await acceptSignal(deps, { grant, body: buy, correlationId: 'c1' });
    expect(result.kind).toBe('accepted');
    expect(calls.queued).toEqual(['acc-2#2']);
    expect(calls.started).toHaveLength(1);
  });

  test('when Redis does not take the record and it is taken back, then 503 backpressure: nothing queued, nothing started, the numbers released', async () => {
    const { deps, calls } = fakes({ record: async () => Promise.reject(new Error('NOREPLICAS Not enough good replicas to write.')) });
    await expect(acceptSignal(deps, { grant, body: buy, correlationId: 'c3' })).rejects.toMatchObject({ kind: 'backpressure' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.takenBack).toHaveLength(1);
    expect(calls.queued).toEqual([]);
    expect(calls.started).toEqual([]);
    expect(calls.released.sort()).toEqual(['acc-1#1', 'acc-2#2']);
    expect(calls.retimed).toEqual([]);
  });

  test('when the record may have landed (its write failed and so did the take-back), then never "not accepted": partially accepted with the signalId, and the marks held only briefly', async () => {
    const { deps, calls } = fakes({ record: async () => Promise.reject(new Error('Command timed out')), takeBackFails: true });
    const result = await acceptSignal(deps, { grant, body: buy, correlationId: 'c4' });
    expect(result.kind).toBe('partially_accepted');
    expect(result.body).toMatchObject({ success: false, signalId: expect.stringMatching(/^sig_/) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.released).toEqual([]);
    expect(calls.queued).toEqual([]);
    // Held until now + 10 s (a sweep may start it from the record), never to the command's deadline (now + 30 s). The
    // use case's clock is the fake's: a test that read the wall clock here passed before NOW and failed after it.
    expect(calls.retimed.map((m) => m.toMs)).toEqual([NOW + 10_000, NOW + 10_000]);
  });

  test('when the same key comes again, then the first answer (same signalId) and no second record', async () => {
    const { deps, calls } = fakes();
    const first = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k1', correlationId: 'c6' });
    const again = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k1', correlationId: 'c7' });
    expect(again).toMatchObject({ kind: 'accepted', replayed: true, body: { signalId: (first.body as { signalId: string }).signalId } });
    expect(calls.recorded).toHaveLength(1);
  });

  test('when a replay cannot learn whether a region started (unreachable), then it accepts it again under the first signalId, whose record answers "existed": same answer, the new numbers released', async () => {
    let records = 0;
    const { deps, calls } = fakes({ startedUnavailable: true, record: async () => (++records === 1 ? 'created' : 'existed') });
    const first = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k9', correlationId: 'c20' });
    const again = await acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k9', correlationId: 'c21' });
    const signalId = (first.body as { signalId: string }).signalId;
    expect(again).toMatchObject({ kind: 'accepted', replayed: true, body: { signalId, accountsResolved: 2 } });
    expect(calls.recorded.map((l) => l.signalId)).toEqual([signalId, signalId]);
    await new Promise((resolve) => setImmediate(resolve));
    // The second launch's numbers (3 and 4) will never be queued: released at once.
    expect(calls.released.sort()).toEqual(['acc-1#3', 'acc-2#4']);
  });

  test('when a replay cannot learn whether a region started and accepting it again fails, then the first signalId again (it may run), never "not accepted"', async () => {
    let records = 0;
    const { deps } = fakes({
      startedUnavailable: true,
      record: async () => {
        if (++records === 1) return 'created';
        throw new Error('OOM command not allowed when used memory > maxmemory');
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

  test('when the door is shut (the start backlog past its bound), then a new signal is refused, but a replay of a held key is answered', async () => {
    const open = fakes();
    const first = await acceptSignal(open.deps, { grant, body: buy, idempotencyKey: 'k2', correlationId: 'c8' });
    const shut = {
      ...open.deps,
      door: { decide: async () => ({ admitted: false as const, retryAfterSeconds: 3, reason: 'start_backlog' as const }) },
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

  test('when the idempotency store (Redis) is unavailable, then 503 fail-closed with Retry-After, not a 500, and nothing numbered or recorded', async () => {
    const { deps, calls } = fakes();
    deps.windows.claim = async () => Promise.reject(new Error('Connection is closed.'));
    const refused = acceptSignal(deps, { grant, body: buy, idempotencyKey: 'k3', correlationId: 'c11' });
    await expect(refused).rejects.toBeInstanceOf(Refusal);
    await expect(refused).rejects.toMatchObject({ kind: 'store_unavailable', extra: { retryAfterSeconds: 5 } });
    expect(calls.recorded).toEqual([]);
  });

  test('when the route account is locked, then 403 and nothing numbered or recorded', async () => {
    const { deps, calls } = fakes({ accounts: [account('acc-1', { status: 'locked' }), account('acc-2')] });
    await expect(acceptSignal(deps, { grant, body: buy, routeAccountId: 'acc-1', correlationId: 'c12' })).rejects.toMatchObject({ kind: 'forbidden' });
    expect(calls.recorded).toEqual([]);
  });
});
