import { describeOrUndefined } from '../helpers/temporal';
import { commandIdOf } from '../helpers/commands';
import { waitFor } from '../../support/infra';
import { filled, LATE_AGE_MS, type CaseContext } from './case-context';
import type { ConformanceAccount } from './driver';

/**
 * The conformance suite's restart cases (docs/bridge-conformance.md): exactly once and never stale across a bridge's
 * death. `crash` is killed between fill and report and while idle; `late` dies holding a command and comes back after
 * the command's expiresAt.
 */
export function restartCases(ctx: CaseContext, { crash, late }: Record<'crash' | 'late', ConformanceAccount>): void {
  const { driver } = ctx;
  test("when the bridge dies between the broker's fill and its report, then after its restart and new hello the command is reported with that fill's ticket and the broker holds one order", async () => {
    await driver.start(crash, ctx.url(), { crash: 'after_fill' });
    const s = await ctx.submit(crash, { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    await driver.exited(crash.id, 20_000);
    const afterCrash = await driver.broker(crash.id);
    expect(afterCrash.entries).toHaveLength(1);
    const ticket = afterCrash.entries[0]!.ticket;
    // The service does not know yet: the account workflow waits for the report (dispatched at acceptance, the bridge
    // may have had the command before the workflow started: it starts, and waits).
    const commandId = commandIdOf(s.signalId, crash.id);
    await waitFor(
      'the account workflow to wait for the report',
      async () => (await describeOrUndefined(ctx.temporal().client, commandId))?.status.name === 'RUNNING',
      20_000,
    );

    await driver.start(crash, ctx.url());
    const r = await ctx.settle(crash, s);
    expect(r.outcome).toMatchObject({ outcome: 'filled', ticket });
    const v = await driver.broker(crash.id);
    expect(v.entries).toHaveLength(1);
    expect(v.positions.map((p) => p.ticket)).toEqual([ticket]);
  }, 90_000);

  test('when the bridge was down while a signal was accepted, then after its hello it gets the command and executes it once', async () => {
    await driver.kill(crash.id);
    const s = await ctx.submit(crash, { action: 'sell', symbol: 'GBPUSD', volume: 0.05 });
    await driver.start(crash, ctx.url());
    const ticket = filled(await ctx.settle(crash, s));
    const v = await driver.broker(crash.id);
    expect(v.entries.map((e) => [e.ticket, e.symbol, e.side, e.volume])).toEqual([
      [expect.any(String), 'EURUSD', 'buy', 0.1],
      [ticket, 'GBPUSD', 'sell', 0.05],
    ]);
  }, 90_000);

  test('when the bridge holds a command past its expiresAt (died before the fill, back after the deadline), then it reports expired and never fills it', async () => {
    await driver.start(late, ctx.url(), { crash: 'before_fill' });
    const s = await ctx.submit(late, { action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    await driver.exited(late.id, 20_000);
    expect((await driver.broker(late.id)).entries).toEqual([]);
    // The command was handed out, so the service keeps it pending for the bridge; wait until it is stale.
    await waitFor('the command to be past its expiresAt', async () => Date.now() > s.at + LATE_AGE_MS + 500, LATE_AGE_MS + 5_000, 100);
    await driver.start(late, ctx.url());
    const r = await ctx.settle(late, s);
    expect(r.outcome).toMatchObject({ outcome: 'rejected', ticket: null, reason: 'signal_expired' });
    expect((await driver.broker(late.id)).entries).toEqual([]);
  }, 90_000);
}
