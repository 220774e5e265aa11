import { recordStopOutEvents, type StopOutDeps } from '../../src/bridge/stop-out-events';
import { RedisStopOuts } from '../../src/bridge/stop-outs';
import type { StopOutEvent } from '../../src/domain/bridge-protocol';
import { OwnerStore } from '../../src/owners/owner-store';
import { readStateFile } from '../../src/paper/state-file';
import type { LedgerEntry } from '../../src/paper/ledger';
import { ensureBuilt } from '../../support/service-process';
import { waitFor } from '../../support/infra';
import { adminCli, adminCliJson } from '../helpers/admin';
import { asBrowser, ownerKeyFile, setUpOwner, type OwnerBrowser } from '../helpers/owner';
import { get, pollUntilReported, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { CONFORMANCE_SYMBOLS } from '../conformance/driver';
import { PaperBridgeDriver } from '../conformance/paper-driver';

/**
 * The copy-trading stop-out end to end (docs/risk-sizing.md, "Stop-out"): the real ingress, worker, Temporal and
 * Redis; the paper bridge as its own process on a market file, as a trader runs it; the owner sets it on the owner
 * API, signals come over HTTP, and the prices move in the market file.
 */

const BASE = Object.fromEntries(CONFORMANCE_SYMBOLS.map((s) => [s.name, { bid: s.bid, ask: Number((s.bid + s.spread).toFixed(s.digits)) }]));

describe('the copy-trading stop-out, on the paper bridge', () => {
  let stack: Stack;
  const driver = new PaperBridgeDriver('mt5');

  beforeAll(async () => {
    ensureBuilt();
    stack = await startStack({ env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
  }, 60_000);
  afterAll(async () => {
    await driver.cleanup();
    await stack?.stop();
  }, 60_000);

  /** An owner signed in on the owner API, one account with a 5 % drawdown stop-out, and its paper bridge started. */
  async function stoppable(fault?: string) {
    const f = await seedOwner(stack.registry, [{}]);
    const owner = await setUpOwner(stack.ingress.url, stack.config.redis.url, f.owner);
    const account = f.accounts[0]!;
    const set = await asBrowser(owner, 'PATCH', `${stack.ingress.url}/v1/owner/accounts/${account.id}`, {
      risk: { lossGuards: { maxDrawdownPercent: 5, stopOut: true } },
    });
    expect(set.status).toBe(200);
    const conformanceAccount = { id: account.id, platform: 'mt5' as const, bridgeToken: account.bridgeToken };
    await driver.start(conformanceAccount, stack.ingress.url, fault ? { fault } : {});
    for (const [symbol, quote] of Object.entries(BASE)) await driver.setQuote(account.id, symbol, quote);
    return { f, owner, account, conformanceAccount };
  }

  async function outcome(f: Fixture, body: Record<string, unknown>) {
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, ...body });
    expect(res.status).toBe(202);
    return (await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 20_000)).accounts[0];
  }

  /** Two positions (5 lots EURUSD, 5 lots GBPUSD) and a buy limit far below the market. */
  async function openBook(f: Fixture) {
    const tickets = [];
    for (const body of [
      { action: 'buy', symbol: 'EURUSD', volume: 5 },
      { action: 'buy', symbol: 'GBPUSD', volume: 5 },
      { action: 'buy_limit', symbol: 'EURUSD', volume: 1, price: 1.05 },
    ]) {
      const o = await outcome(f, body);
      expect(o).toMatchObject({ outcome: 'filled' });
      tickets.push(o.ticket as string);
    }
    return { positions: tickets.slice(0, 2), order: tickets[2]! };
  }

  const everythingClosed = (id: string, what: string) =>
    waitFor(
      what,
      async () => {
        const v = await driver.broker(id);
        return v.positions.length === 0 && v.orders.length === 0;
      },
      15_000,
    );
  const ledger = async (id: string) => (await driver.broker(id)).native as { ledger: LedgerEntry[] };
  const closesOf = async (id: string, ticket: string) =>
    (await ledger(id)).ledger.filter((l) => l.ticket === ticket && (l.op === 'close' || l.op === 'cancel'));
  const auditOf = async (owner: OwnerBrowser) => {
    const res = await asBrowser(owner, 'GET', `${stack.ingress.url}/v1/owner/audit`);
    expect(res.status).toBe(200);
    return (res.body.entries as { action: string; accountId?: string; detail?: Record<string, unknown> }[]).filter((e) => e.action === 'account.stopped_out');
  };
  const shown = async (id: string) => (await adminCliJson(['account', 'show', id], stack.config.redis.url)).stopOut as Record<string, unknown> | null;

  test('when equity falls past the limit, then every position is closed and the order cancelled once, the service shows it, entries are refused, nothing closes twice; after a reset it trips again', async () => {
    const { f, owner, account } = await stoppable();
    const book = await openBook(f);
    expect((await driver.broker(account.id)).positions).toHaveLength(2);

    // EURUSD 101 pips down on 5 lots: about 5,050 USD, with the spreads past 5 % of 100,000.
    await driver.setQuote(account.id, 'EURUSD', { bid: 1.075, ask: 1.0751 });
    await everythingClosed(account.id, 'the stop-out to close everything');
    for (const ticket of [...book.positions, book.order]) expect((await closesOf(account.id, ticket)).map((l) => l.op)).toHaveLength(1);

    const recorded = await waitFor('the service to record the stop-out', async () => (await shown(account.id)) ?? undefined, 15_000);
    expect(recorded).toMatchObject({ eventId: 'stop-out/initial', closed: 2, cancelled: 1, failed: 0, maxDrawdownPercent: 5, currency: 'USD' });
    expect(recorded.drawdownPercent).toBeGreaterThanOrEqual(5);
    const view = await asBrowser(owner, 'GET', `${stack.ingress.url}/v1/owner/accounts/${account.id}`);
    expect(view.body.stopOut).toMatchObject({ eventId: 'stop-out/initial', closed: 2, cancelled: 1, failed: 0 });
    expect(await auditOf(owner)).toEqual([
      expect.objectContaining({ by: 'bridge', accountId: account.id, detail: expect.objectContaining({ eventId: 'stop-out/initial' }) }),
    ]);
    const human = await adminCli(['account', 'show', account.id], stack.config.redis.url);
    expect(human.stdout).toMatch(/stopOut: stopped out at .*2 closed, 1 cancelled, 0 failed/);

    expect(await outcome(f, { action: 'buy', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'rejected', reason: 'risk_max_drawdown' });

    // Recovered, then fallen again: the bridge looks after every command, so once this entry is reported it has looked.
    await driver.setQuote(account.id, 'EURUSD', BASE.EURUSD!);
    await driver.setQuote(account.id, 'EURUSD', { bid: 1.06, ask: 1.0601 });
    expect(await outcome(f, { action: 'sell', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'rejected', reason: 'risk_max_drawdown' });
    for (const ticket of [...book.positions, book.order]) expect(await closesOf(account.id, ticket)).toHaveLength(1);
    expect(await auditOf(owner)).toHaveLength(1);

    // The owner's reset re-arms it: a new entry passes, and a new fall stops the account out again.
    expect((await adminCli(['account', 'reset-drawdown', account.id], stack.config.redis.url)).code).toBe(0);
    const resetAt = (await stack.registry.getAccount(account.id))!.risk.lossGuards!.drawdownResetAt!;
    const again = await outcome(f, { action: 'buy', symbol: 'EURUSD', volume: 5 });
    expect(again).toMatchObject({ outcome: 'filled' });
    await driver.setQuote(account.id, 'EURUSD', { bid: 1.048, ask: 1.0481 });
    await waitFor('the second stop-out', async () => (await shown(account.id))?.eventId === `stop-out/${resetAt}`, 15_000);
    expect((await driver.broker(account.id)).positions).toEqual([]);
    expect(await closesOf(account.id, again.ticket as string)).toHaveLength(1);
    expect(await auditOf(owner)).toHaveLength(2);
  }, 120_000);

  test('when the bridge is killed between the mark and the closes, then after its restart it closes the marked tickets and the service records the event once', async () => {
    const { f, owner, account, conformanceAccount } = await stoppable('crash-after-stop-out-mark');
    const book = await openBook(f);
    await driver.setQuote(account.id, 'EURUSD', { bid: 1.075, ask: 1.0751 });
    await driver.exited(account.id, 15_000);
    // Dead with the mark on disk and everything still open.
    const state = readStateFile(driver.stateFile(account.id));
    expect(state?.stopOut).toMatchObject({ state: 'closing', positions: book.positions, orders: [book.order] });
    expect((await driver.broker(account.id)).positions).toHaveLength(2);

    await driver.start(conformanceAccount, stack.ingress.url);
    await everythingClosed(account.id, 'the restarted bridge to finish the closes');
    const recorded = await waitFor('the service to record the stop-out', async () => (await shown(account.id)) ?? undefined, 15_000);
    expect(recorded).toMatchObject({ closed: 2, cancelled: 1, failed: 0 });
    await waitFor('the bridge to hold the acknowledgement', async () => readStateFile(driver.stateFile(account.id))?.stopOut?.acknowledged, 15_000);
    for (const ticket of [...book.positions, book.order]) expect(await closesOf(account.id, ticket)).toHaveLength(1);
    expect(await auditOf(owner)).toHaveLength(1);
    expect(await new OwnerStore(stack.redis).auditLog(f.owner, 100)).toHaveLength(2); // the settings change and the stop-out
  }, 120_000);

  test('when the owner has stopOut on and the bridge did not announce stop_out (an older bridge), then entries are refused risk_sizing_unsupported; the hello answer arms only with it on', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { lossGuards: { maxDrawdownPercent: 5, stopOut: true } } as never }, {}]);
    const hello = (i: number, capabilities: string[]) =>
      post(
        `${stack.ingress.url}/bridge/v1/hello`,
        { platform: 'mt5', bridgeVersion: '3.2.0', capabilities },
        { authorization: `Bearer ${f.accounts[i]!.bridgeToken}` },
      );
    const older = await hello(0, ['risk_sizing', 'loss_guards', 'position_limits']);
    expect(older.body.stopOut).toEqual({ maxDrawdownPercent: 5, drawdownResetAt: null, figuresMaxAgeMs: stack.config.bridge.figuresMaxAgeMs });
    expect((await hello(1, ['loss_guards', 'stop_out'])).body).not.toHaveProperty('stopOut');
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 1 });
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 15_000);
    expect(status.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'risk_sizing_unsupported' });
  }, 60_000);

  /** An event as a bridge sends it after a stop-out at 6 % (limit 5 %). */
  const sentEvent = (): StopOutEvent => ({
    type: 'stop_out',
    eventId: 'stop-out/initial',
    trippedAt: new Date().toISOString(),
    equity: 94_000,
    peak: 100_000,
    drawdownPercent: 6,
    maxDrawdownPercent: 5,
    currency: 'USD',
    closed: [{ ticket: '7', result: 'closed' }],
    cancelled: [],
  });

  test('when a bridge sends the same event again, then the service answers duplicate and records it once; an event out of bounds is refused', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { lossGuards: { maxDrawdownPercent: 5, stopOut: true } } as never }]);
    const auth = { authorization: `Bearer ${f.accounts[0]!.bridgeToken}` };
    const event = { ...sentEvent(), cancelled: [{ ticket: '8', result: 'failed' as const, message: 'ORDER_NOT_FOUND' }] };
    const metric = async () => {
      const text = (await get(`${stack.ingress.adminUrl!}/metrics`)).text;
      return Number(/^external_signals_stop_outs_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
    };
    const before = await metric();
    const send = (body: unknown) => post(`${stack.ingress.url}/bridge/v1/reports`, body, auth);
    const first = await send({ reports: [], events: [event] });
    expect(first.body).toEqual({ results: [], events: [{ eventId: 'stop-out/initial', result: 'recorded' }] });
    expect((await send({ reports: [], events: [event] })).body.events).toEqual([{ eventId: 'stop-out/initial', result: 'duplicate' }]);
    expect(await metric()).toBe(before + 1);
    expect((await new OwnerStore(stack.redis).auditLog(f.owner, 10)).map((e) => e.action)).toEqual(['account.stopped_out']);
    expect(await shown(f.accounts[0]!.id)).toMatchObject({ closed: 1, cancelled: 0, failed: 1, equity: 94_000, peak: 100_000 });
    expect((await send({ reports: [], events: [{ ...event, eventId: 'anything' }] })).status).toBe(400);
    expect((await send({ reports: [], events: Array.from({ length: 11 }, () => event) })).status).toBe(400);
  }, 60_000);

  test('when the audit entry cannot be written, then the event is not acknowledged, and a resend (also one racing the first) writes it and is counted once', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { lossGuards: { maxDrawdownPercent: 5, stopOut: true } } as never }]);
    const account = (await stack.registry.getAccount(f.accounts[0]!.id))!;
    const event = sentEvent();
    const owners = new OwnerStore(stack.redis);
    let counted = 0;
    let failAudit = true;
    let copyDuringAudit: Promise<unknown> | undefined;
    const deps: StopOutDeps = {
      store: new RedisStopOuts(stack.redis),
      audit: async (owner, entry) => {
        // A copy of the event arrives while this first audit entry is being written, then the write fails.
        copyDuringAudit ??= recordStopOutEvents({ ...deps, audit: () => Promise.reject(new Error('Redis went away')) }, account, [event], Date.now()).catch(
          (err: unknown) => err,
        );
        await copyDuringAudit;
        if (failAudit) throw new Error('Redis went away');
        await owners.audit(owner, entry);
      },
      counted: () => counted++,
    };
    await expect(recordStopOutEvents(deps, account, [event], Date.now())).rejects.toThrow('Redis went away');
    // The racing copy was not acknowledged either: neither could write the entry.
    expect(await copyDuringAudit).toBeInstanceOf(Error);
    expect(await owners.auditLog(f.owner, 10)).toEqual([]);
    failAudit = false;
    expect(await recordStopOutEvents(deps, account, [event], Date.now())).toEqual([{ eventId: 'stop-out/initial', result: 'recorded' }]);
    expect(await recordStopOutEvents(deps, account, [event], Date.now())).toEqual([{ eventId: 'stop-out/initial', result: 'duplicate' }]);
    expect((await owners.auditLog(f.owner, 10)).map((e) => e.action)).toEqual(['account.stopped_out']);
    expect(counted).toBe(1);
  }, 60_000);
});
