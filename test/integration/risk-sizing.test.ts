import type { PaperTerminal } from '../../src/paper/terminal';
import type { RiskSettings } from '../../src/domain/risk-settings';
import { waitFor } from '../../support/infra';
import { RedisFigures } from '../../src/bridge/figures';
import { pollUntilReported, post, seedOwner, startPaperTerminal, startStack, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * Sizing by risk and loss guards end to end (docs/risk-sizing.md): the real ingress, worker, Temporal and Redis, and
 * the paper bridge in this process on a manual price feed, so every figure below is known. The bridge sizes and
 * guards on its live account at execution, one command at a time.
 */
describe('sizing by risk and loss guards, on the paper bridge', () => {
  let stack: Stack;
  const terminals: PaperTerminal[] = [];
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await Promise.all(terminals.map((t) => t.stop()));
    await stack?.stop();
  });

  /** An account with these risk settings, and its paper terminal: a USD account of 10,000, EURUSD at 1.08000/1.08010. */
  async function paperAccount(risk: Partial<RiskSettings>, options: { heartbeatMs?: number } = {}) {
    const f = await seedOwner(stack.registry, [{ risk: risk as never }]);
    const { terminal, feed } = await startPaperTerminal(stack, f.accounts[0]!, options);
    terminals.push(terminal);
    const send = (body: Record<string, unknown>) => post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, ...body });
    const outcome = async (body: Record<string, unknown>) => {
      const res = await send(body);
      expect(res.status).toBe(202);
      return (await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 15_000)).accounts[0];
    };
    return { f, feed, terminal, send, outcome };
  }

  test('when the account risks 1 % of equity and a buy carries a 20-pip stop, then the bridge places 0.5 lots (100 USD at 200 USD a lot)', async () => {
    const { terminal, outcome } = await paperAccount({ sizing: { mode: 'risk_percent', of: 'equity', percent: 1 } });
    // The signal's own volume is not what is placed: 1 % of 10,000 = 100 USD; 20 pips of EURUSD = 200 USD a lot.
    expect(await outcome({ action: 'buy', symbol: 'EURUSD', volume: 3, slPips: 20 })).toMatchObject({ outcome: 'filled' });
    expect(terminal.broker.positions().map((p) => p.volume)).toEqual([0.5]);
  });

  test('when the account risks a fixed 50 USD and a sell carries an sl price, then the lots follow the distance to it', async () => {
    const { terminal, outcome } = await paperAccount({ sizing: { mode: 'risk_amount', amount: 50 } });
    // Sell at the bid 1.08000, sl 1.08250: 0.00250 = 250 ticks of 1 USD a lot = 250 USD a lot; 50 / 250 = 0.2 lots.
    expect(await outcome({ action: 'sell', symbol: 'EURUSD', volume: 1, sl: 1.0825 })).toMatchObject({ outcome: 'filled' });
    expect(terminal.broker.positions().map((p) => p.volume)).toEqual([0.2]);
  });

  test('when an entry sized by risk has no stop loss, then it is refused risk_stop_loss_required and never reaches the bridge', async () => {
    const { terminal, outcome } = await paperAccount({ sizing: { mode: 'risk_percent', of: 'balance', percent: 1 } });
    expect(await outcome({ action: 'buy', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'rejected', reason: 'risk_stop_loss_required' });
    expect(terminal.stats.executed).toBe(0);
  });

  test('when the bridge did not announce risk sizing (an older bridge), then entries are refused risk_sizing_unsupported; exits still run', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { sizing: { mode: 'risk_percent', of: 'equity', percent: 1 } } as never }]);
    const older = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await older.hello();
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, {
      secret: f.secret,
      action: 'buy',
      symbol: 'EURUSD',
      volume: 1,
      slPips: 20,
    });
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 15_000);
    expect(status.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'risk_sizing_unsupported' });
    const exit = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'close_all' });
    expect(exit.status).toBe(202);
    expect((await older.nextCommands(1)).map((c) => c.action)).toEqual(['close_all']);
  });

  test('when two buys race under a daily loss limit that only the first fits under, then exactly one is placed and the other is refused risk_daily_loss_limit', async () => {
    // 0.5 lots each; a fill costs the spread at once (1 pip = 5 USD on 0.5 lots), which is past the 4 USD limit.
    const { f, terminal, send } = await paperAccount({ sizing: { mode: 'fixed', lots: 0.5 }, lossGuards: { dailyLossAmount: 4, timezone: 'Europe/London' } });
    const answers = await Promise.all([send({ action: 'buy', symbol: 'EURUSD', volume: 0.5 }), send({ action: 'buy', symbol: 'EURUSD', volume: 0.5 })]);
    expect(answers.map((a) => a.status)).toEqual([202, 202]);
    const outcomes = await Promise.all(answers.map(async (a) => (await pollUntilReported(stack.ingress.url, a.body.signalId, f.token, 1, 15_000)).accounts[0]));
    expect(outcomes.map((o) => `${o.outcome} ${o.reason ?? ''}`.trim()).sort()).toEqual(['filled', 'rejected risk_daily_loss_limit']);
    expect(terminal.broker.positions()).toHaveLength(1);
  });

  test('when three entries race under a limit of one position per symbol, then one EURUSD is placed, the other refused risk_max_open_positions, and a USDJPY one runs', async () => {
    const { f, feed, terminal, send } = await paperAccount({ maxOpenPositionsPerSymbol: 1 });
    feed.set('USDJPY', 150.0, 150.02);
    const answers = await Promise.all([
      send({ action: 'buy', symbol: 'EURUSD', volume: 0.1 }),
      send({ action: 'sell', symbol: 'EURUSD', volume: 0.1 }),
      send({ action: 'buy', symbol: 'USDJPY', volume: 0.1 }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    const outcomes = await Promise.all(answers.map(async (a) => (await pollUntilReported(stack.ingress.url, a.body.signalId, f.token, 1, 15_000)).accounts[0]));
    expect(
      outcomes
        .slice(0, 2)
        .map((o) => `${o.outcome} ${o.reason ?? ''}`.trim())
        .sort(),
    ).toEqual(['filled', 'rejected risk_max_open_positions']);
    expect(outcomes[2]).toMatchObject({ outcome: 'filled' });
    expect(
      terminal.broker
        .positions()
        .map((p) => p.symbol)
        .sort(),
    ).toEqual(['EURUSD', 'USDJPY']);
  });

  test("when a bridge reports, then the account's figures come with it and are kept; with nothing to report, a heartbeat keeps them fresh", async () => {
    const figures = new RedisFigures(stack.redis);
    const { f, feed, outcome } = await paperAccount({}, { heartbeatMs: 300 });
    const id = f.accounts[0]!.id;
    // The hello's figures first.
    expect((await figures.latest(id))?.figures).toEqual({ balance: 10_000, equity: 10_000, margin: 0, freeMargin: 10_000, currency: 'USD' });
    expect(await outcome({ action: 'buy', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'filled' });
    // The report's: 1 lot bought at the ask, valued at the bid: equity is the spread (10 USD) below the balance.
    const afterFill = await waitFor(
      'the figures of the report',
      async () => {
        const latest = await figures.latest(id);
        return latest && latest.figures.equity < 10_000 ? latest : undefined;
      },
      10_000,
    );
    expect(afterFill.figures).toMatchObject({ balance: 10_000, currency: 'USD' });
    expect(afterFill.figures.equity).toBeCloseTo(9_990, 6);
    // No more reports: the heartbeat sends the figures as the market moves them.
    feed.set('EURUSD', 1.082, 1.0821);
    const beat = await waitFor(
      'a heartbeat with the new equity',
      async () => {
        const latest = await figures.latest(id);
        return latest && latest.figures.equity > 10_100 ? latest : undefined;
      },
      10_000,
    );
    expect(Date.parse(beat.at)).toBeGreaterThan(Date.parse(afterFill.at));
  });

  test('when the equity has fallen past the max drawdown, then entries are refused risk_max_drawdown and a close still runs; after the owner resets the guard they pass', async () => {
    const { f, feed, terminal, send, outcome } = await paperAccount({ lossGuards: { maxDrawdownPercent: 2, timezone: 'UTC' } });
    expect(await outcome({ action: 'buy', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'filled' });
    // 1 lot, price down 250 pips: −2,500 USD on 10,000 (more than 2 % below the peak the bridge saw).
    feed.set('EURUSD', 1.055, 1.0551);
    expect(await outcome({ action: 'buy', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'rejected', reason: 'risk_max_drawdown' });
    const close = await send({ action: 'close_all' });
    expect(close.status).toBe(202);
    await waitFor('the close to run', async () => terminal.broker.positions().length === 0, 15_000);
    // The owner resets the guard (what `admin account reset-drawdown` does): the peak starts again from equity now.
    const current = (await stack.registry.getAccount(f.accounts[0]!.id))!;
    await stack.registry.updateAccount(current.id, {
      risk: { ...current.risk, lossGuards: { ...current.risk.lossGuards!, drawdownResetAt: new Date().toISOString() } },
    });
    expect(await outcome({ action: 'buy', symbol: 'EURUSD', volume: 1 })).toMatchObject({ outcome: 'filled' });
  });
});

/**
 * Stale figures (docs/risk-sizing.md): a stack whose bound is short enough to outwait, so the quote behind a sized
 * entry can grow older than it without the other tests' entries racing a short bound.
 */
describe('stale figures, on the paper bridge', () => {
  const BOUND_MS = 2_000;
  let stack: Stack;
  let terminal: PaperTerminal | undefined;
  beforeAll(async () => {
    stack = await startStack({ tuning: { bridge: { figuresMaxAgeMs: BOUND_MS } } });
  });
  afterAll(async () => {
    await terminal?.stop();
    await stack?.stop();
  });

  test('when the EURUSD quote was set longer ago than the bound, then a risk-sized buy is refused risk_figures_stale; once the market quotes again the same buy is placed', async () => {
    const f = await seedOwner(stack.registry, [{ risk: { sizing: { mode: 'risk_percent', of: 'equity', percent: 1 } } as never }]);
    const started = await startPaperTerminal(stack, f.accounts[0]!);
    terminal = started.terminal;
    const quotedAt = Date.now(); // after startPaperTerminal set EURUSD: the quote is at least this old
    const buy = async () => {
      const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, {
        secret: f.secret,
        action: 'buy',
        symbol: 'EURUSD',
        volume: 3,
        slPips: 20,
      });
      expect(res.status).toBe(202);
      const outcome = (await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 15_000)).accounts[0];
      return { ...outcome, report: started.terminal.journal.get(`signal/${res.body.signalId}/account/${f.accounts[0]!.id}`) };
    };
    await waitFor('the EURUSD quote to be older than the bound', async () => Date.now() - quotedAt > BOUND_MS, 10_000);
    expect(await buy()).toMatchObject({
      outcome: 'rejected',
      reason: 'risk_figures_stale',
      report: { message: expect.stringMatching(/^the last EURUSD quote is \d+\.\d s old, past the 2\.0 s/) },
    });
    expect(terminal.broker.positions()).toEqual([]);
    // A live market quotes again and again: the next buy is sized on a quote well within the bound.
    const quote = () => started.feed.set('EURUSD', 1.08, 1.0801);
    quote();
    const ticking = setInterval(quote, 100);
    try {
      expect(await buy()).toMatchObject({ outcome: 'filled' });
    } finally {
      clearInterval(ticking);
    }
    // 1 % of 10,000 = 100 USD; 20 pips of EURUSD = 200 USD a lot: 0.5 lots, as on a fresh quote.
    expect(terminal.broker.positions().map((p) => p.volume)).toEqual([0.5]);
  });
});
