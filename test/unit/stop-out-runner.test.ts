import { EquityMarks } from '../../src/risk/equity-marks';
import { stopOutEventOf, type StopOutMark } from '../../src/risk/stop-out';
import { STOP_OUT_ATTEMPTS, STOP_OUT_BACKOFF_MS, StopOutRunner, type Attempt, type OrderFate, type StopOutAccount } from '../../src/risk/stop-out-runner';
import { isTransientRefusal } from '../../src/risk/transient-refusals';
import { arming, fresh, markOf, T0 } from '../helpers/stop-out-marks';

/** The copy-trading stop-out's runner (docs/risk-sizing.md, "Stop-out"): what it closes, saves and sends once tripped. */

describe('the runner', () => {
  /** A broker of two positions and an order, whose closes and cancels are counted. */
  function broker(equity: { value: number }) {
    const open = { positions: ['p1', 'p2'], orders: ['o1'] };
    const calls: string[] = [];
    const account: StopOutAccount = {
      read: () => Promise.resolve({ equity: equity.value, currency: 'USD', quotes: fresh, positions: [...open.positions], orders: [...open.orders] }),
      open: () => Promise.resolve({ positions: [...open.positions], orders: [...open.orders] }),
      close: (ticket) => {
        calls.push(`close ${ticket}`);
        open.positions = open.positions.filter((t) => t !== ticket);
        return Promise.resolve({ ticket, result: 'closed' });
      },
      cancel: (ticket) => {
        calls.push(`cancel ${ticket}`);
        open.orders = open.orders.filter((t) => t !== ticket);
        return Promise.resolve({ ticket, result: 'cancelled' });
      },
    };
    return { account, calls, open };
  }

  test('when it trips, then the mark is saved closing before any close, every ticket is closed once, and the event waits for its acknowledgement', async () => {
    const equity = { value: 10_000 };
    const { account, calls } = broker(equity);
    const saved: string[] = [];
    const runner = new StopOutRunner(
      account,
      { save: (m) => saved.push(`${m.state} after ${calls.length}`), saveMarks: () => undefined },
      new EquityMarks(),
      undefined,
      () => undefined,
    );
    expect(await runner.check(arming(), T0)).toBe('watching');
    equity.value = 8_900;
    expect(await runner.check(arming(), T0)).toBe('tripped');
    expect(saved[0]).toBe('closing after 0');
    // The pending order first: one filling while the positions close would open a position nobody listed.
    expect(calls).toEqual(['cancel o1', 'close p1', 'close p2']);
    expect(runner.pendingEvents()).toMatchObject([{ closed: [{ ticket: 'p1' }, { ticket: 'p2' }], cancelled: [{ ticket: 'o1', result: 'cancelled' }] }]);
    // Recovered and fallen again: nothing more.
    equity.value = 10_000;
    await runner.check(arming(), T0);
    equity.value = 5_000;
    expect(await runner.check(arming(), T0)).toBe('stopped_out');
    expect(calls).toHaveLength(3);
    runner.acknowledge('stop-out/initial');
    expect(runner.pendingEvents()).toEqual([]);
  });

  test('when it trips again after a reset before the first event was acknowledged, then both events are sent until each is acknowledged', async () => {
    const equity = { value: 10_000 };
    const { account } = broker(equity);
    const saved: StopOutMark[] = [];
    const runner = new StopOutRunner(
      account,
      { save: (m) => saved.push(structuredClone(m)), saveMarks: () => undefined },
      new EquityMarks(),
      undefined,
      () => undefined,
    );
    await runner.check(arming(), T0);
    equity.value = 8_900;
    expect(await runner.check(arming(), T0)).toBe('tripped');
    // The service did not acknowledge; the owner resets, and the account falls again.
    const reset = '2026-11-25T11:00:00.000Z';
    equity.value = 8_900;
    expect(await runner.check(arming({ drawdownResetAt: reset }), T0)).toBe('watching');
    equity.value = 8_000;
    expect(await runner.check(arming({ drawdownResetAt: reset }), T0)).toBe('tripped');
    expect(runner.pendingEvents().map((e) => e.eventId)).toEqual(['stop-out/initial', `stop-out/${reset}`]);
    // On disk too, from the first write of the new mark (a crash keeps the old event).
    expect(saved.find((m) => m.resetAt === reset)?.unsent?.map((e) => e.eventId)).toEqual(['stop-out/initial']);
    runner.acknowledge('stop-out/initial');
    expect(runner.pendingEvents().map((e) => e.eventId)).toEqual([`stop-out/${reset}`]);
    runner.acknowledge(`stop-out/${reset}`);
    expect(runner.pendingEvents()).toEqual([]);
    expect(runner.mark).not.toHaveProperty('unsent');
  });

  test('when a restart finds the mark closing, then it closes the listed tickets still open and nothing else', async () => {
    const { account, calls, open } = broker({ value: 10_000 });
    open.positions.push('p3'); // opened after the trip (by hand): not listed, left alone
    const closing = markOf({ state: 'closing', positions: ['p1', 'p2', 'gone'], orders: ['o1'], closed: [{ ticket: 'p1', result: 'closed' }] });
    open.positions = open.positions.filter((t) => t !== 'p1');
    const runner = new StopOutRunner(account, { save: () => undefined, saveMarks: () => undefined }, new EquityMarks(), closing, () => undefined);
    await runner.resume();
    expect(calls).toEqual(['cancel o1', 'close p2']);
    expect(open.positions).toEqual(['p3']);
    expect(runner.mark).toMatchObject({ state: 'done', closed: [{ ticket: 'p1' }, { ticket: 'p2' }, { ticket: 'gone', message: 'no longer open' }] });
  });

  test('when a restart finds listed orders gone, then each is cancelled only if the history says cancelled or expired; one that filled is failed and its position left alone', async () => {
    const { account, calls, open } = broker({ value: 10_000 });
    const fates: Record<string, OrderFate> = { o1: { state: 'filled', position: 'p9' }, o2: { state: 'expired' }, o3: { state: 'cancelled' } };
    const asked: string[] = [];
    account.orderFate = (ticket) => {
      asked.push(ticket);
      return Promise.resolve(fates[ticket] ?? { state: 'unknown', detail: 'not found' });
    };
    open.orders = [];
    open.positions = ['p9']; // o1's fill: never listed
    const closing = markOf({ state: 'closing', positions: [], orders: ['o1', 'o2', 'o3', 'o4'] });
    const runner = new StopOutRunner(account, { save: () => undefined, saveMarks: () => undefined }, new EquityMarks(), closing, () => undefined);
    await runner.resume();
    expect(calls).toEqual([]);
    expect(asked).toEqual(['o1', 'o2', 'o3', 'o4']);
    expect(open.positions).toEqual(['p9']);
    expect(runner.mark?.cancelled).toEqual([
      { ticket: 'o1', result: 'failed', message: 'not pending any more and not cancelled (filled, position p9)' },
      { ticket: 'o2', result: 'cancelled', message: 'not pending any more when the stop-out reached it (expired)' },
      { ticket: 'o3', result: 'cancelled', message: 'not pending any more when the stop-out reached it (cancelled)' },
      { ticket: 'o4', result: 'failed', message: 'not pending any more and not cancelled (not found)' },
    ]);
    expect(stopOutEventOf(runner.mark!)).toMatchObject({ cancelled: runner.mark?.cancelled });
  });

  test('when a bridge cannot tell what became of a listed order gone, then it is reported failed, never cancelled', async () => {
    const { account, open } = broker({ value: 10_000 });
    open.orders = [];
    const closing = markOf({ state: 'closing', positions: [], orders: ['o1'] });
    const runner = new StopOutRunner(account, { save: () => undefined, saveMarks: () => undefined }, new EquityMarks(), closing, () => undefined);
    await runner.resume();
    expect(runner.mark?.cancelled).toEqual([
      { ticket: 'o1', result: 'failed', message: 'not pending any more and not cancelled (this bridge cannot read its order history)' },
    ]);
  });

  describe('a close or cancel the broker refuses for a transient reason', () => {
    /** Each ticket's answers in turn (the last one repeats); every send and every pause is written down. */
    function refusing(answers: Record<string, Attempt<'closed' | 'cancelled'>[]>, fates: Record<string, OrderFate> = {}) {
      const open = { positions: ['p1', 'p2'], orders: ['o1'] };
      const calls: string[] = [];
      const answer = (ticket: string, ok: 'closed' | 'cancelled') => {
        calls.push(`${ok === 'closed' ? 'close' : 'cancel'} ${ticket}`);
        const queue = answers[ticket] ?? [];
        const got = (queue.length > 1 ? queue.shift() : queue[0]) ?? { ticket, result: ok };
        if (got.result !== 'failed') {
          open.positions = open.positions.filter((t) => t !== ticket);
          open.orders = open.orders.filter((t) => t !== ticket);
        }
        return Promise.resolve(got);
      };
      const account: StopOutAccount = {
        read: () => Promise.resolve({ equity: 8_000, currency: 'USD', quotes: fresh, positions: [...open.positions], orders: [...open.orders] }),
        open: () => Promise.resolve({ positions: [...open.positions], orders: [...open.orders] }),
        close: (ticket) => answer(ticket, 'closed') as Promise<Attempt<'closed'>>,
        cancel: (ticket) => answer(ticket, 'cancelled') as Promise<Attempt<'cancelled'>>,
        orderFate: (ticket) => Promise.resolve(fates[ticket] ?? { state: 'unknown', detail: 'not found' }),
      };
      const pauses: number[] = [];
      const runner = new StopOutRunner(
        account,
        { save: () => undefined, saveMarks: () => undefined },
        new EquityMarks({ dayOpen: 10_000, peak: 10_000, resetApplied: '' }),
        undefined,
        () => undefined,
        undefined,
        (ms) => {
          pauses.push(ms);
          return Promise.resolve();
        },
      );
      return { runner, calls, pauses, open };
    }
    const requote = { ticket: 'p1', result: 'failed' as const, message: '10004 Requote', transient: true };

    test('when a requote refuses a close once, then it is sent again after a pause and reported closed', async () => {
      const { runner, calls, pauses, open } = refusing({ p1: [requote, { ticket: 'p1', result: 'closed' }] });
      expect(await runner.check(arming(), T0)).toBe('tripped');
      expect(calls).toEqual(['cancel o1', 'close p1', 'close p1', 'close p2']);
      expect(pauses).toEqual([STOP_OUT_BACKOFF_MS]);
      expect(open.positions).toEqual([]);
      expect(runner.mark?.closed).toEqual([
        { ticket: 'p1', result: 'closed' },
        { ticket: 'p2', result: 'closed' },
      ]);
    });

    test('when the refusal is transient every time, then it is tried STOP_OUT_ATTEMPTS times in all and reported failed, saying so', async () => {
      const { runner, calls, pauses } = refusing({ p1: [requote] });
      await runner.check(arming(), T0);
      expect(calls.filter((c) => c === 'close p1')).toHaveLength(STOP_OUT_ATTEMPTS);
      expect(pauses).toEqual([STOP_OUT_BACKOFF_MS, 2 * STOP_OUT_BACKOFF_MS]);
      expect(runner.mark?.closed[0]).toEqual({ ticket: 'p1', result: 'failed', message: `10004 Requote (after ${STOP_OUT_ATTEMPTS} attempts)` });
      expect(runner.mark?.state).toBe('done');
    });

    test('when the refusal is not transient (no money, market closed), then it is sent once and reported failed', async () => {
      const { runner, calls, pauses } = refusing({ p1: [{ ticket: 'p1', result: 'failed', message: '10018 Market is closed' }] });
      await runner.check(arming(), T0);
      expect(calls.filter((c) => c === 'close p1')).toHaveLength(1);
      expect(pauses).toEqual([]);
      expect(runner.mark?.closed[0]).toEqual({ ticket: 'p1', result: 'failed', message: '10018 Market is closed' });
    });

    test('when the ticket is gone by the time it would be sent again, then it is not sent again, and what the history says decides', async () => {
      const noPrices = { ticket: 'o1', result: 'failed' as const, message: '10021 No prices', transient: true };
      const cancelled = refusing({ o1: [noPrices] }, { o1: { state: 'cancelled' } });
      const cancelling = cancelled.runner.check(arming(), T0);
      cancelled.open.orders = []; // cancelled meanwhile (by hand), before the look that precedes the second attempt
      await cancelling;
      expect(cancelled.calls.filter((c) => c === 'cancel o1')).toHaveLength(1);
      expect(cancelled.runner.mark?.cancelled).toEqual([
        { ticket: 'o1', result: 'cancelled', message: 'not pending any more when the stop-out reached it (cancelled)' },
      ]);

      const filled = refusing({ o1: [noPrices] }, { o1: { state: 'filled', position: 'p7' } });
      const filling = filled.runner.check(arming(), T0);
      filled.open.orders = []; // filled meanwhile: a position the stop-out never listed
      filled.open.positions.push('p7');
      await filling;
      expect(filled.calls).toEqual(['cancel o1', 'close p1', 'close p2']);
      expect(filled.runner.mark?.cancelled).toEqual([
        { ticket: 'o1', result: 'failed', message: 'not pending any more and not cancelled (filled, position p7)' },
      ]);
      expect(filled.open.positions).toEqual(['p7']);
    });

    test('when a cancel is refused because the order filled after the stop-out listed it, then it is reported failed with its position, which is left open', async () => {
      const { runner, calls, open } = refusing(
        { o1: [{ ticket: 'o1', result: 'failed', message: 'ORDER_NOT_FOUND Order o1 not found' }] },
        { o1: { state: 'filled', position: 'p7' } },
      );
      const tripping = runner.check(arming(), T0);
      open.orders = [];
      open.positions.push('p7');
      await tripping;
      expect(calls).toEqual(['cancel o1', 'close p1', 'close p2']);
      expect(runner.mark?.cancelled).toEqual([
        { ticket: 'o1', result: 'failed', message: 'not pending any more and not cancelled (filled, position p7); ORDER_NOT_FOUND Order o1 not found' },
      ]);
      expect(runner.pendingEvents()[0]?.cancelled).toEqual(runner.mark?.cancelled);
      expect(open.positions).toEqual(['p7']);
    });

    test('when a cancel is refused because the order expired after the stop-out listed it, then it is reported cancelled', async () => {
      const { runner, open } = refusing(
        { o1: [{ ticket: 'o1', result: 'failed', message: 'ORDER_NOT_FOUND Order o1 not found' }] },
        { o1: { state: 'expired' } },
      );
      const tripping = runner.check(arming(), T0);
      open.orders = [];
      await tripping;
      expect(runner.mark?.cancelled).toEqual([{ ticket: 'o1', result: 'cancelled', message: 'not pending any more when the stop-out reached it (expired)' }]);
    });

    test('when a close is refused because the position closed on its own meanwhile, then it is reported closed, not failed', async () => {
      const { runner, calls, open } = refusing({ p1: [{ ticket: 'p1', result: 'failed', message: "10036 Position doesn't exist" }] });
      const tripping = runner.check(arming(), T0);
      open.positions = ['p2']; // its stop loss closed p1 after the stop-out listed it
      await tripping;
      expect(calls.filter((c) => c === 'close p1')).toHaveLength(1);
      expect(runner.mark?.closed[0]).toEqual({ ticket: 'p1', result: 'closed', message: "no longer open (10036 Position doesn't exist)" });
    });

    test('when a refusal is classified, then requotes, no prices, timeouts and lost connections are transient, and a refusal of substance is not', () => {
      for (const code of [10004, 10020, 10021, 10012, 10031, 'NO_QUOTES', 'TIMEOUT_ERROR', 'REQUEST_FREQUENCY_EXCEEDED'])
        expect(isTransientRefusal(code)).toBe(true);
      for (const code of [10018, 10019, 10036, 'MARKET_CLOSED', 'POSITION_NOT_FOUND', 'NOT_ENOUGH_MONEY', undefined])
        expect(isTransientRefusal(code)).toBe(false);
    });
  });
});
