import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { riskSettingsSchema } from '../../src/domain/risk-settings';
import { REPO_ROOT } from '../../support/infra';
import { setUpOwner, ownerKeyFile, type OwnerBrowser } from '../helpers/owner';
import { get, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { dashboardPage, seriousViolations } from '../helpers/dashboard-browser';

/**
 * The trade after the order in a real browser (Debian's chromium) against the real stack, fed as a bridge of protocol
 * 1.5 would: hello announcing trade_events, a buy with SL and TP and a buy_limit sent by webhook and reported filled,
 * then their trade events and a book through POST /bridge/v1/trades with the account's bridge token. The account page
 * shows the open position and the pending order with the book's age, the buy closed by its take profit with its net
 * P&L, the day's loss and drawdown against their limits in words, the equity and daily P&L charts with their figures;
 * the signal log shows the buy_limit "placed", never "filled"; the buy's page shows the trade it opened and how it
 * ended. axe finds no serious or critical violation; no CSP violation, no request elsewhere, no failed request.
 * The screenshot is docs/screenshots/dashboard-trades.png.
 */

const UI_TIMEOUT_MS = 20_000;

describe('the trade on the dashboard', () => {
  let stack: Stack;
  let f: Fixture;
  let owner: OwnerBrowser;
  let browser: Browser;
  let page: Page;
  let bridge: ScriptedTerminal;
  let problems: string[] = [];
  const shots = path.join(REPO_ROOT, 'docs', 'screenshots');
  const sent: { buy: string; limit: string } = { buy: '', limit: '' };

  const bridgeAuth = () => ({ authorization: `Bearer ${f.accounts[0]!.bridgeToken}` });
  const account = () => f.accounts[0]!.id;

  /** One signal by webhook, taken by the scripted bridge and reported filled with `ticket`; its signalId. */
  async function signalFilled(body: Record<string, unknown>, ticket: string): Promise<{ signalId: string; commandId: string }> {
    const res = await post(`${stack.ingress.url}/webhook/custom/${account()}`, { secret: f.secret, symbol: 'EURUSD', volume: 0.1, ...body });
    expect(res.status).toBe(202);
    const [command] = await bridge.nextCommands(1, 15_000);
    expect(command).toBeDefined();
    await bridge.report([{ commandId: command!.commandId, status: 'filled', ticket }]);
    return { signalId: res.body.signalId as string, commandId: command!.commandId };
  }

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    stack = await startStack({ env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
    const risk = riskSettingsSchema.parse({ lossGuards: { dailyLossPercent: 3, maxDrawdownPercent: 10 } });
    f = await seedOwner(stack.registry, [{ risk }]);
    owner = await setUpOwner(stack.ingress.url, stack.config.redis.url, f.owner);

    bridge = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken, 'mt5', '2.2.0', ['loss_guards', 'trade_events']);
    await bridge.hello();
    const now = Date.now();
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
    const buy = await signalFilled({ action: 'buy', sl: 1.07, tp: 1.09 }, '5001');
    const limit = await signalFilled({ action: 'buy_limit', price: 1.075 }, '7001');
    const held = await signalFilled({ action: 'sell', sl: 1.09 }, '5002');
    sent.buy = buy.signalId;
    sent.limit = limit.signalId;
    const trades = await post(
      `${stack.ingress.url}/bridge/v1/trades`,
      {
        events: [
          {
            eventId: 'deal:1',
            type: 'position_opened',
            at: at(30),
            ticket: '5001',
            symbol: 'EURUSD',
            commandId: buy.commandId,
            side: 'buy',
            volume: 0.1,
            price: 1.0801,
            sl: 1.07,
            tp: 1.09,
          },
          {
            eventId: 'order:7001:placed',
            type: 'order_placed',
            at: at(20),
            ticket: '7001',
            symbol: 'EURUSD',
            commandId: limit.commandId,
            side: 'buy',
            orderType: 'limit',
            volume: 0.1,
            price: 1.075,
          },
          {
            eventId: 'deal:2',
            type: 'position_opened',
            at: at(15),
            ticket: '5002',
            symbol: 'EURUSD',
            commandId: held.commandId,
            side: 'sell',
            volume: 0.1,
            price: 1.08,
            sl: 1.09,
          },
          // The price reached the buy's take profit: +99.00 net.
          {
            eventId: 'deal:3',
            type: 'position_closed',
            at: at(10),
            ticket: '5001',
            symbol: 'EURUSD',
            volume: 0.1,
            remainingVolume: 0,
            price: 1.09,
            profit: 99.9,
            commission: -0.7,
            swap: -0.2,
            cause: 'take_profit',
          },
        ],
        book: {
          takenAt: new Date(now).toISOString(),
          truncated: false,
          positions: [
            {
              ticket: '5002',
              symbol: 'EURUSD',
              side: 'sell',
              volume: 0.1,
              openPrice: 1.08,
              sl: 1.09,
              tp: null,
              openedAt: at(15),
              profit: -1.5,
              swap: 0,
              commission: 0,
            },
          ],
          orders: [
            {
              ticket: '7001',
              symbol: 'EURUSD',
              side: 'buy',
              orderType: 'limit',
              volume: 0.1,
              price: 1.075,
              stopLimitPrice: null,
              sl: null,
              tp: null,
              placedAt: at(20),
              expiresAt: null,
            },
          ],
        },
        account: { balance: 10099, equity: 10097.5, margin: 100, freeMargin: 9997.5, currency: 'USD' },
      },
      bridgeAuth(),
    );
    expect(trades.status).toBe(200);
    expect(trades.body.events.map((e: { result: string }) => e.result)).toEqual(['recorded', 'recorded', 'recorded', 'recorded']);

    ({ browser, page, problems } = await dashboardPage(stack.ingress.url, { cookie: owner.cookie }));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function accessible(name: string) {
    expect(await seriousViolations(page, name)).toEqual([]);
  }

  const failWithPage = async (err: unknown) => {
    throw new Error(`${String(err)}\npage: ${await page.locator('main').innerText()}`);
  };

  test("the account page shows the open position, the pending order, the closed trade's P&L, the guards and the charts", async () => {
    await page.goto(`${stack.ingress.url}/dashboard/accounts/${encodeURIComponent(account())}`);
    const positions = page.getByRole('table', { name: 'Open positions' });
    await positions
      .getByRole('row', { name: /5002 EURUSD sell 0\.1 lots 1\.08 1\.09/ })
      .waitFor({ timeout: UI_TIMEOUT_MS })
      .catch(failWithPage);
    await page
      .getByRole('table', { name: /^Pending orders/ })
      .getByRole('row', { name: /7001 EURUSD buy limit 0\.1 lots 1\.075/ })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await page.getByText(/As reported by the bridge (just now|\d+ s ago)/).waitFor({ timeout: UI_TIMEOUT_MS });
    const closed = page.getByRole('table', { name: /^Closed trades/ }).getByRole('row', { name: /5001 EURUSD buy/ });
    await closed.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(closed.innerText()).resolves.toMatch(/take profit hit[\s\S]*\+99\.00 USD/);
    // The guards in words: nothing lost today (the day's realized P&L is a gain), the drawdown against its max.
    const dailyLoss = page.getByRole('meter', { name: "Today's loss against the daily limit" });
    await dailyLoss.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(page.getByText(/% of the daily loss limit [\d.]+ USD \(3 %\) used/).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('meter', { name: 'Drawdown against the max' }).isVisible()).resolves.toBe(true);
    await expect(page.getByText(/of a max 10 %/).isVisible()).resolves.toBe(true);
    // The charts are pictures with a text summary and their figures as a table.
    await expect(page.getByRole('img', { name: /^Equity curve\. Equity from/ }).isVisible()).resolves.toBe(true);
    const daily = page.getByRole('img', { name: /^Daily P&L\. 30 days, 1 with a gain and 0 with a loss; total \+99\.00 USD/ });
    await expect(daily.isVisible()).resolves.toBe(true);
    await accessible('account-trades');
    await page.locator('section.trades').screenshot({ path: path.join(shots, 'dashboard-trades.png') });
    expect(problems).toEqual([]);
  }, 60_000);

  test('the signal log reads the buy_limit "placed", never "filled"; the buy\'s page shows its trade closed by take profit', async () => {
    await page.goto(`${stack.ingress.url}/dashboard/signals`);
    await page.getByText('placed · order 7001').waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(page.getByText('filled · ticket 7001').count()).resolves.toBe(0);
    await page.getByText('filled · ticket 5001').waitFor({ timeout: UI_TIMEOUT_MS });
    await accessible('signals');

    await page.goto(`${stack.ingress.url}/dashboard/signals/${encodeURIComponent(sent.limit)}`);
    await page.getByText('placed · order 7001').waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await page
      .getByRole('table', { name: /^Trades this signal opened/ })
      .getByText('placed (waiting for its price)')
      .waitFor({ timeout: UI_TIMEOUT_MS })
      .catch(failWithPage);

    await page.goto(`${stack.ingress.url}/dashboard/signals/${encodeURIComponent(sent.buy)}`);
    const row = page.getByRole('table', { name: /^Trades this signal opened/ }).getByRole('row', { name: new RegExp(`${account()} 5001 EURUSD buy`) });
    await row.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(row.innerText()).resolves.toMatch(/take profit hit[\s\S]*\+99\.00/);
    await accessible('signal-trades');
    await page.locator('main').screenshot({ path: path.join(shots, 'dashboard-signal-trades.png') });
    expect(problems).toEqual([]);
  }, 60_000);

  test('the dashboard shell still serves every script from this server only', async () => {
    const shell = await get(`${stack.ingress.url}/dashboard`);
    expect(shell.text).toContain('/dashboard/assets/trade-pages.js?v=');
    expect(shell.text).not.toMatch(/<script(?![^>]*\ssrc=)|<style|\sstyle=|https?:\/\//);
  });
});
