import { RedisFigures } from '../../src/bridge/figures';
import { RedisStopOuts } from '../../src/bridge/stop-outs';
import { OwnerStore } from '../../src/owners/owner-store';
import type { StopOutEvent } from '../../src/domain/bridge-protocol';
import { bridgeKeys } from '../../src/redis-keys';
import { waitFor } from '../../support/infra';
import { filled, position, refused, done, type CaseContext } from './case-context';
import { CONFORMANCE_SYMBOLS, type ConformanceAccount } from './driver';
import { baseQuote } from './market';

/**
 * The conformance suite's risk-rule cases (docs/bridge-conformance.md): the rules a bridge applies on its live account.
 * `guard` has a max-open-positions rule; `risky` sizes by risk and has a daily loss limit; `stopper` has the
 * copy-trading stop-out at 5 % (protocol 1.4).
 */
export function guardCases(ctx: CaseContext, { guard, risky, stopper }: Record<'guard' | 'risky' | 'stopper', ConformanceAccount>): void {
  const { driver } = ctx;
  test('when the owner limits open positions, then the bridge refuses an entry beyond the limit with risk_max_open_positions', async () => {
    const [first, second] = await ctx.runAll(guard, [
      { action: 'buy', symbol: 'EURUSD', volume: 0.01 },
      { action: 'sell', symbol: 'GBPUSD', volume: 0.01 },
    ]);
    const t = filled(first!);
    expect(second!.outcome).toMatchObject({ outcome: 'rejected', reason: 'risk_max_open_positions' });
    expect((await driver.broker(guard.id)).entries.map((e) => e.ticket)).toEqual([t]);
  }, 60_000);

  test("when the owner sizes by risk and has a daily loss limit, then the bridge places the lots the formula gives on its live account, refuses entries once equity is that far below the day's opening, and still runs exits", async () => {
    // 1 % of equity 100,000 USD = 1,000 USD at risk. EURUSD: a tick (0.00001) of a lot (100,000 EUR) is 1 USD; the
    // stop 20 pips = 0.0020 = 200 ticks away costs 200 USD a lot; 1,000 / 200 = 5.00 lots, not the signal's 0.3.
    // A live market keeps quoting: the figures rest on prices within FIGURES_MAX_AGE_MS (src/risk/figures-age.ts), not the ones set at start.
    for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(risky.id, s.name, baseQuote(s.name));
    const t = filled(await ctx.run(risky, { action: 'buy', symbol: 'EURUSD', volume: 0.3, slPips: 20 }));
    expect(position(await driver.broker(risky.id), t).volume).toBe(5);
    // The day opened at 100,000 (read before that buy). At the bid 1.08400 the 5 lots bought at the ask 1.08510 are
    // 0.0011 × 500,000 = 550 USD down, past the 500 USD limit (their stop, 1.08310, is not reached).
    await driver.setQuote(risky.id, 'EURUSD', { bid: 1.084, ask: 1.0841 });
    refused(await ctx.run(risky, { action: 'sell', symbol: 'USDJPY', volume: 0.3, slPips: 20 }), 'risk_daily_loss_limit');
    done(await ctx.run(risky, { action: 'close_all' }));
    const after = await driver.broker(risky.id);
    expect({ positions: after.positions, entries: after.entries.map((e) => e.ticket) }).toEqual({ positions: [], entries: [t] });
    // The account's figures come with the reports (protocol 1.2): once everything is closed, equity is the balance and
    // no margin is used; the balance lost about the 550 USD the 5 lots were down (less any commission).
    const figures = new RedisFigures(ctx.redis());
    const latest = await waitFor(
      "the account's figures after close_all",
      async () => {
        const l = await figures.latest(risky.id);
        return l && l.figures.margin === 0 && l.figures.balance < 100_000 ? l : undefined;
      },
      20_000,
    );
    const { balance } = latest.figures;
    expect(latest.figures).toEqual({ balance, equity: balance, margin: 0, freeMargin: balance, currency: 'USD' });
    expect(balance).toBeGreaterThan(99_000);
  }, 60_000);

  test('when equity falls past the stop-out limit, then the bridge closes every position and cancels every pending order once, the service records it once, and entries are refused risk_max_drawdown', async () => {
    await driver.start(stopper, ctx.url());
    for (const s of CONFORMANCE_SYMBOLS) await driver.setQuote(stopper.id, s.name, baseQuote(s.name));
    const [eur, gbp, limit] = await ctx.runAll(stopper, [
      { action: 'buy', symbol: 'EURUSD', volume: 5 },
      { action: 'buy', symbol: 'GBPUSD', volume: 5 },
      { action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.05 },
    ]);
    const positions = [filled(eur!), filled(gbp!)];
    const order = filled(limit!);
    expect((await driver.broker(stopper.id)).positions).toHaveLength(2);
    // 5 lots bought at the ask 1.08510, now bid 1.07500: 0.0101 × 500,000 = 5,050 USD, with the spreads past 5 % of 100,000.
    await driver.setQuote(stopper.id, 'EURUSD', { bid: 1.075, ask: 1.0751 });
    await waitFor(
      'the stop-out to close everything',
      async () => {
        const v = await driver.broker(stopper.id);
        return v.positions.length === 0 && v.orders.length === 0;
      },
      20_000,
    );
    const stopOuts = new RedisStopOuts(ctx.redis());
    const recorded = await waitFor('the service to record the stop-out', () => stopOuts.latest(stopper.id), 20_000);
    expect(recorded).toMatchObject({ eventId: 'stop-out/initial', closed: 2, cancelled: 1, failed: 0, maxDrawdownPercent: 5, currency: 'USD' });
    const event = JSON.parse((await ctx.redis().hget(bridgeKeys.stopOuts(stopper.id), 'stop-out/initial'))!) as StopOutEvent;
    expect(event.closed.map((t) => t.ticket).sort()).toEqual([...positions].sort());
    expect(event.cancelled.map((t) => t.ticket)).toEqual([order]);
    refused(await ctx.run(stopper, { action: 'buy', symbol: 'EURUSD', volume: 0.1 }), 'risk_max_drawdown');
    expect((await driver.broker(stopper.id)).entries.map((e) => e.ticket)).toEqual([...positions, order]);
    expect(
      (await new OwnerStore(ctx.redis()).auditLog(ctx.owner, 100)).filter((e) => e.action === 'account.stopped_out' && e.accountId === stopper.id),
    ).toHaveLength(1);
  }, 90_000);
}
