import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readAccount } from '../../src/ctrader/figures';
import { MarksFile } from '../../src/ctrader/marks-file';
import { PayloadType } from '../../src/ctrader/messages';
import { applyRisk } from '../../src/ctrader/risk';
import { TradeSide } from '../../src/ctrader/messages';
import { harness } from '../helpers/ctrader-inprocess';
import { waitFor } from '../../support/run';

/**
 * The connector's risk path (src/ctrader/risk.ts, figures.ts, marks-file.ts) on a real CtraderAccount whose Open API
 * connection is the double's broker side in-process: every request is checked against the published definitions,
 * every figure (trader, unrealized P&L, assets, conversion chain, spots) is the double's answer.
 */

describe("the cTrader connector's sizing by risk", () => {
  test('when a USD account of 100,000 risks 1 % of equity on a EURUSD buy with a 20-pip stop, then it places 5 lots', async () => {
    const h = await harness();
    // 1 % of 100,000 = 1,000 USD. A tick (0.00001) of a lot (10,000,000 cents = 100,000 EUR) is 1 USD, the quote
    // currency being the deposit one; 20 pips = 0.0020 = 200 ticks = 200 USD a lot; 1,000 / 200 = 5.00 lots.
    const out = await applyRisk(
      h.account,
      h.command({ symbol: 'EURUSD', slPips: 20, riskSizing: { basis: 'equity_percent', value: 1 } }),
      h.keeper,
      Date.now() + 60_000,
    );
    expect(out).toEqual({
      command: expect.objectContaining({ volume: 5, symbol: 'EURUSD' }),
      note: expect.stringMatching(
        /^sized 5 lots by risk: 1% of equity = 1000\.00 USD \(balance 100000\.00, equity 100000\.00\); stop 0\.00200 away, 200\.00 USD a lot$/,
      ),
    });
    expect('command' in out && out.command.riskSizing).toBeUndefined();
  });

  test('when a EUR account sizes an XAUUSD sell, then the tick value is converted through the chain the broker gives (EURUSD, inverted) at its live mid', async () => {
    const h = await harness('EUR');
    // 1 % of 100,000 EUR = 1,000 EUR. Sell at the bid 2,350.00, stop 2,354.00: 4.00 = 400 ticks of 0.01. A tick of a
    // lot (10,000 cents = 100 oz) is 0.01 × 100 = 1 USD = 1 / 1.08505 (EURUSD mid of 1.0850/1.0851) = 0.921616 EUR;
    // 400 × 0.921616 = 368.65 EUR a lot; 1,000 / 368.65 = 2.7126 → floored to the 0.01 step: 2.71 lots.
    const out = await applyRisk(
      h.account,
      h.command({ action: 'sell', symbol: 'XAUUSD', sl: 2354, riskSizing: { basis: 'equity_percent', value: 1 } }),
      h.keeper,
      Date.now() + 60_000,
    );
    expect(out).toMatchObject({ command: { volume: 2.71 }, note: expect.stringContaining('368.65 EUR a lot') });
  });

  test('when the risk is less than one minimum lot, then the entry is refused risk_volume_below_minimum', async () => {
    const h = await harness();
    // 5 USD at risk; a 200-pip stop of EURUSD costs 2,000 USD a lot: 0.0025 lots, below the 0.01 minimum.
    const out = await applyRisk(
      h.account,
      h.command({ symbol: 'EURUSD', slPips: 200, riskSizing: { basis: 'fixed_amount', value: 5 } }),
      h.keeper,
      Date.now() + 60_000,
    );
    expect(out).toMatchObject({ refusal: { status: 'rejected', retcode: 'risk_volume_below_minimum' } });
  });
});

describe("the cTrader connector's loss guards and its marks on disk", () => {
  const guards = { dailyLossAmount: 500, timezone: 'Europe/London' };

  test("when equity falls 500 USD below the day's opening, then entries are refused risk_daily_loss_limit, also after a restart that reads the marks from disk", async () => {
    const h = await harness();
    h.open(1, TradeSide.BUY, 10_000_000); // 1 lot of EURUSD bought at the ask 1.0851
    const entry = () => h.command({ symbol: 'EURUSD', volume: 0.1, lossGuards: guards });
    // Opening equity: 100,000 − the spread of 1 lot (0.0001 × 100,000 = 10 USD) = 99,990.
    expect(await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000)).toMatchObject({ command: { volume: 0.1 } });
    h.double.setQuote('EURUSD', 1.0801, 1.0802); // the lot is now 0.0050 × 100,000 = 500 USD down, 490 below the opening
    expect(await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000)).toMatchObject({ command: { volume: 0.1 } });
    h.double.setQuote('EURUSD', 1.08, 1.0801); // 510 USD down, 500 below the opening: the limit
    const refused = await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000);
    expect(refused).toMatchObject({
      refusal: {
        status: 'rejected',
        retcode: 'risk_daily_loss_limit',
        message: "equity 99490.00 is 500.00 below the day's opening 99990.00 USD; limit 500.00",
      },
    });
    // A restarted connector reads the day's opening from the file; without it, it would start the day again at 99,490.
    expect(await applyRisk(h.account, entry(), h.keeperFrom(new MarksFile(h.file.file)), Date.now() + 60_000)).toMatchObject({
      refusal: { retcode: 'risk_daily_loss_limit' },
    });
    expect(await applyRisk(h.account, entry(), h.keeperFrom(new MarksFile(undefined)), Date.now() + 60_000)).toMatchObject({ command: { volume: 0.1 } });
    expect(JSON.parse(fs.readFileSync(h.file.file!, 'utf8'))).toMatchObject({ dayOpen: 99_990, peak: 99_990 });
    expect(fs.readdirSync(h.dir)).toEqual(['acc-r.marks.json']);
  });

  test('when equity is 10 % below its peak, then entries are refused risk_max_drawdown until the owner resets it', async () => {
    const h = await harness();
    h.open(1, TradeSide.BUY, 100_000_000); // 10 lots of EURUSD at 1.0851
    const at = (drawdownResetAt?: string) =>
      h.command({ symbol: 'EURUSD', volume: 0.1, lossGuards: { maxDrawdownPercent: 10, timezone: 'UTC', ...(drawdownResetAt ? { drawdownResetAt } : {}) } });
    expect(await applyRisk(h.account, at(), h.keeper, Date.now() + 60_000)).toHaveProperty('command');
    h.double.setQuote('EURUSD', 1.075, 1.0751); // 10 lots × 0.0101 = 10,100 USD down: equity 89,900, 10.01 % below the peak of 99,900
    expect(await applyRisk(h.account, at(), h.keeper, Date.now() + 60_000)).toMatchObject({ refusal: { retcode: 'risk_max_drawdown' } });
    expect(await applyRisk(h.account, at(new Date().toISOString()), h.keeper, Date.now() + 60_000)).toHaveProperty('command');
  });

  test('when the marks file is damaged, then the connector refuses to start rather than forget a bad day', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-marks-'));
    const file = path.join(dir, 'a.marks.json');
    fs.writeFileSync(file, '{"dayOpen": "lots"');
    expect(() => new MarksFile(file).load()).toThrow();
  });
});

describe('the cTrader connector fails closed on figures it cannot read', () => {
  const sized = { symbol: 'EURUSD', slPips: 20, riskSizing: { basis: 'equity_percent' as const, value: 1 } };

  test.each([
    ['the unrealized P&L (equity)', PayloadType.PROTO_OA_GET_POSITION_UNREALIZED_PNL_REQ, {}],
    ['the trader (balance)', PayloadType.PROTO_OA_TRADER_REQ, {}],
    ['the conversion chain', PayloadType.PROTO_OA_SYMBOLS_FOR_CONVERSION_REQ, { symbol: 'USDJPY', slPips: 20 }],
  ])('when %s cannot be read, then the entry is refused risk_figures_unavailable and nothing is sized', async (_what, payloadType, fields) => {
    const h = await harness();
    h.failing.add(payloadType);
    const out = await applyRisk(h.account, h.command({ ...sized, ...fields }), h.keeper, Date.now() + 60_000);
    expect(out).toMatchObject({ refusal: { status: 'rejected', retcode: 'risk_figures_unavailable', message: expect.stringContaining('UNKNOWN_ERROR') } });
  });

  test('when no spot price arrives in time, then the entry is refused risk_figures_unavailable once its time is up', async () => {
    const h = await harness();
    h.failing.add(PayloadType.PROTO_OA_SPOT_EVENT);
    // No spot ever arrives: a refusal naming the price, rather than a wait that never ends, is the deadline at work.
    const out = await applyRisk(h.account, h.command(sized), h.keeper, Date.now() + 300);
    expect(out).toMatchObject({ refusal: { retcode: 'risk_figures_unavailable', message: expect.stringContaining('the price of EURUSD') } });
  });

  test('when the figures cannot be read, then exits still pass untouched and entries without sizing or guards are not held up', async () => {
    const h = await harness();
    h.failing.add(PayloadType.PROTO_OA_TRADER_REQ);
    const close = h.command({ action: 'close_all', lossGuards: { dailyLossAmount: 1, timezone: 'UTC' } });
    expect(await applyRisk(h.account, close, h.keeper, Date.now() + 60_000)).toEqual({ command: close });
    const plain = h.command({ symbol: 'EURUSD', volume: 0.1 });
    expect(await applyRisk(h.account, plain, h.keeper, Date.now() + 60_000)).toEqual({ command: plain });
  });

  test("when the account's figures are read for the service, then equity is balance + net unrealized P&L and margin the positions' usedMargin", async () => {
    const h = await harness();
    h.open(4, TradeSide.SELL, 10_000_000); // 1 lot of USDJPY sold at 150.000: margin 100,000 / 100 = 1,000 USD
    h.double.setQuote('USDJPY', 150.3, 150.312); // 0.312 × 100,000 = 31,200 JPY down = 31,200 / 150.306 = 207.58 USD
    expect(await readAccount(h.account, { timeoutMs: 1_000, withMargin: true })).toEqual({
      balance: 100_000,
      equity: 99_792.42,
      margin: 1_000,
      freeMargin: 98_792.42,
      currency: 'USD',
      depositAssetId: h.double.assets.idOf('USD'),
    });
  });
});

describe('the cTrader connector refuses entries on stale spots', () => {
  const EURUSD = 1;
  const XAUUSD = 41;
  const sized = { slPips: 20, riskSizing: { basis: 'equity_percent' as const, value: 1 }, figuresMaxAgeMs: 50 };
  /** Open API's spots carry no time: the age is since the connector received the last one. */
  const olderThanBound = (h: Awaited<ReturnType<typeof harness>>, id: number) =>
    waitFor(`the spot of ${id} to be older than the bound`, async () => Date.now() - (h.account.quoteReceivedAt(id) ?? Date.now()) > 50, 5_000, 10);

  test("when the entry's last spot came longer ago than the bound, then it is refused risk_figures_stale naming it; the next spot sizes it", async () => {
    const h = await harness();
    const entry = () => h.command({ symbol: 'EURUSD', ...sized });
    expect(await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000)).toMatchObject({ command: { volume: 5 } });
    await olderThanBound(h, EURUSD);
    expect(await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000)).toMatchObject({
      refusal: {
        status: 'rejected',
        retcode: 'risk_figures_stale',
        message: expect.stringMatching(/^the last EURUSD quote is \d+\.\d s old, past the 0\.1 s/),
      },
    });
    h.spot(EURUSD);
    expect(await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000)).toMatchObject({ command: { volume: 5 } });
  });

  test('when the conversion chain rests on a stale spot, then the entry is refused although its own spot is fresh', async () => {
    const h = await harness('EUR');
    const entry = () => h.command({ action: 'sell', symbol: 'XAUUSD', ...sized });
    expect(await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000)).toHaveProperty('command');
    await olderThanBound(h, EURUSD);
    h.spot(XAUUSD);
    expect(await applyRisk(h.account, entry(), h.keeper, Date.now() + 60_000)).toMatchObject({
      refusal: { retcode: 'risk_figures_stale', message: expect.stringContaining('the last EURUSD quote') },
    });
    // Without a bound (a command from an older service), the same spots size it.
    expect(await applyRisk(h.account, { ...entry(), figuresMaxAgeMs: undefined }, h.keeper, Date.now() + 60_000)).toHaveProperty('command');
  });
});
