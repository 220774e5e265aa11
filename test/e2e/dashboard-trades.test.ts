import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { riskSettingsSchema } from '../../src/domain/risk-settings';
import { REPO_ROOT } from '../../support/infra';
import { asBrowser, setUpOwner, ownerKeyFile, type OwnerBrowser } from '../helpers/owner';
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
  const sent: { buy: string; limit: string; managed: string } = { buy: '', limit: '', managed: '' };
  /** When the bridge's breakeven moved the managed buy's stop (the page shows it on the reader's clock). */
  let breakevenAt = '';

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
    const managed = await signalFilled({ action: 'buy', sl: 1.075, tp: 1.095 }, '5003');
    sent.buy = buy.signalId;
    sent.limit = limit.signalId;
    sent.managed = managed.signalId;
    breakevenAt = at(9);
    // The bridge's trade management (protocol 1.6) on the managed buy: breakeven, a trail, two take-profit levels.
    const move = (eventId: string, minutesAgo: number, sl: number, cause: string, extra = {}) => ({
      eventId,
      type: 'position_modified',
      at: at(minutesAgo),
      ticket: '5003',
      symbol: 'EURUSD',
      sl,
      tp: 1.095,
      cause,
      ...extra,
    });
    const part = (eventId: string, minutesAgo: number, remainingVolume: number, profit: number) => ({
      eventId,
      type: 'position_closed',
      at: at(minutesAgo),
      ticket: '5003',
      symbol: 'EURUSD',
      volume: 0.1,
      remainingVolume,
      price: 1.086,
      profit,
      commission: 0,
      swap: 0,
      cause: 'take_profit_level',
    });
    const managementEvents = [
      {
        eventId: 'deal:4',
        type: 'position_opened',
        at: at(12),
        ticket: '5003',
        symbol: 'EURUSD',
        commandId: managed.commandId,
        side: 'buy',
        volume: 0.3,
        price: 1.08,
        sl: 1.075,
        tp: 1.095,
      },
      move('sltp:5003:1', 9, 1.0801, 'breakeven_trigger'),
      move('sltp:5003:2', 8, 1.0812, 'trailing_stop', { trailActiveAt: 1.0862 }),
      part('deal:5', 7, 0.2, 6),
      move('sltp:5003:3', 6, 1.0822, 'trailing_stop', { trailActiveAt: 1.0862 }),
      part('deal:6', 5, 0.1, 8),
      // A position opened by hand, closed by a reverse (an entry with closeOpposite) on the other side.
      { eventId: 'deal:7', type: 'position_opened', at: at(4), ticket: '5004', symbol: 'EURUSD', side: 'sell', volume: 0.1, price: 1.0855 },
      {
        eventId: 'deal:8',
        type: 'position_closed',
        at: at(3),
        ticket: '5004',
        symbol: 'EURUSD',
        volume: 0.1,
        remainingVolume: 0,
        price: 1.0858,
        profit: -3,
        commission: 0,
        swap: 0,
        cause: 'close_opposite',
      },
    ];
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
          ...managementEvents,
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
            {
              ticket: '5003',
              symbol: 'EURUSD',
              side: 'buy',
              volume: 0.1,
              openPrice: 1.08,
              sl: 1.0822,
              tp: 1.095,
              openedAt: at(12),
              profit: 6.1,
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
    expect(trades.body.events.map((e: { result: string }) => e.result)).toEqual(Array(4 + managementEvents.length).fill('recorded'));

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

  /** The managed buy's management line, with the breakeven's time on the browser's clock as the page shows it. */
  async function managedLine(): Promise<string> {
    const clock = await page.evaluate((iso) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }), breakevenAt);
    return `trail active at 1.0862 · stop moved 3 times · breakeven at ${clock} · take-profit levels hit: 2`;
  }

  test("the owner API gives a trade's management state from its events, only where management acted", async () => {
    const api = (p: string) => asBrowser(owner, 'GET', `${stack.ingress.url}/v1/owner${p}`);
    const expected = { trailActiveAt: 1.0862, stopMoves: 3, breakevenAt, levelsHit: 2, closedOpposite: false };
    const trade = await api(`/accounts/${encodeURIComponent(account())}/trades/5003`);
    expect(trade.status).toBe(200);
    // Two levels closed their share: the trade is still open with the rest, not ended by the first level.
    expect(trade.body).toMatchObject({ status: 'open', volume: 0.1, closedVolume: 0.2, sl: 1.0822, management: expected });
    expect(trade.body.foldedManagement).toBeUndefined();
    const list = await api(`/accounts/${encodeURIComponent(account())}/trades?status=all`);
    const byId = new Map((list.body.trades as { tradeId: string; management?: unknown }[]).map((t) => [t.tradeId, t]));
    expect(byId.get('5003')!.management).toEqual(expected);
    expect(byId.get('5004')).toMatchObject({ status: 'closed', closeCause: 'close_opposite', management: { closedOpposite: true, stopMoves: 0 } });
    expect('management' in byId.get('5001')!).toBe(false);
    const book = await api(`/accounts/${encodeURIComponent(account())}/book`);
    const positions = book.body.positions as { ticket: string; management?: unknown }[];
    expect(positions.find((p) => p.ticket === '5003')!.management).toEqual(expected);
    expect('management' in positions.find((p) => p.ticket === '5002')!).toBe(false);
    const signal = await api(`/signals/${encodeURIComponent(sent.managed)}/trades`);
    expect(signal.body.trades).toEqual([expect.objectContaining({ tradeId: '5003', management: expected })]);
  }, 30_000);

  test("the account page shows the open position, the pending order, the closed trade's P&L, the guards and the charts", async () => {
    await page.goto(`${stack.ingress.url}/dashboard/accounts/${encodeURIComponent(account())}`);
    const positions = page.getByRole('table', { name: 'Open positions' });
    await positions
      .getByRole('row', { name: /5002 EURUSD sell 0\.10 lots 1\.08 1\.09/ })
      .waitFor({ timeout: UI_TIMEOUT_MS })
      .catch(failWithPage);
    await page
      .getByRole('table', { name: /^Pending orders/ })
      .getByRole('row', { name: /7001 EURUSD buy limit 0\.10 lots 1\.075/ })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await page.getByText(/As reported by the bridge (just now|\d+ s ago)/).waitFor({ timeout: UI_TIMEOUT_MS });
    const closed = page.getByRole('table', { name: /^Closed trades/ }).getByRole('row', { name: /5001 EURUSD buy/ });
    await closed.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(closed.innerText()).resolves.toMatch(/take profit hit[\s\S]*\+99\.00 USD/);
    // The bridge's trade management: the managed buy's line in the book, the reverse on the closed trade.
    const managed = positions.getByRole('row', { name: /^5003 EURUSD buy 0\.10 lots 1\.08 1\.0822 1\.095/ });
    await managed.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(managed.getByRole('cell').last().innerText()).resolves.toBe(await managedLine());
    const reversed = page.getByRole('table', { name: /^Closed trades/ }).getByRole('row', { name: /5004 EURUSD sell/ });
    await expect(reversed.innerText()).resolves.toMatch(
      /closed by a reverse \(close opposite\)[\s\S]*−3\.00 USD\s+closed by a reverse\s+opened outside the service\s*$/,
    );
    // The guards in words: nothing lost today (the day's realized P&L is a gain), the drawdown against its max.
    const dailyLoss = page.getByRole('meter', { name: "Today's equity loss against the daily loss limit" });
    await dailyLoss.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(page.getByText(/Limit 3 % of the day's opening equity, [\d,.]+ USD: \d+ % of it used/).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('meter', { name: 'Drawdown against the max' }).isVisible()).resolves.toBe(true);
    await expect(page.getByText(/; max drawdown 10 %: /).isVisible()).resolves.toBe(true);
    // The charts are pictures with a text summary and their figures as a table.
    await expect(page.getByRole('img', { name: /^Equity curve\. Equity from/ }).isVisible()).resolves.toBe(true);
    const daily = page.getByRole('img', { name: /^Daily P&L\. 30 days, 1 with a gain and 0 with a loss; total \+110\.00 USD/ });
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

    // The managed buy's page: its position with what the bridge's trade management did.
    await page.goto(`${stack.ingress.url}/dashboard/signals/${encodeURIComponent(sent.managed)}`);
    const managedRow = page.getByRole('table', { name: /^Trades this signal opened/ }).getByRole('row', { name: new RegExp(`${account()} 5003 EURUSD buy`) });
    await managedRow.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(managedRow.innerText()).resolves.toMatch(/open \(0\.20 lots closed so far\)/);
    await expect(managedRow.getByRole('cell').last().innerText()).resolves.toBe(await managedLine());
    await accessible('signal-managed-trade');
    await page.locator('main').screenshot({ path: path.join(shots, 'dashboard-trade-management.png') });
    expect(problems).toEqual([]);
  }, 60_000);

  test('the dashboard shell still serves every script from this server only', async () => {
    const shell = await get(`${stack.ingress.url}/dashboard`);
    expect(shell.text).toContain('/dashboard/assets/trade-pages.js?v=');
    expect(shell.text).not.toMatch(/<script(?![^>]*\ssrc=)|<style|\sstyle=|https?:\/\//);
  });
});
