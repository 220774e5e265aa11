import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { riskSettingsSchema } from '../../src/domain/risk-settings';
import { ManualFeed } from '../../src/paper/broker';
import { MemoryLedger } from '../../src/paper/ledger';
import { PaperTerminal } from '../../src/paper/terminal';
import { REPO_ROOT } from '../../support/infra';
import { setUpOwner, ownerKeyFile, type OwnerBrowser } from '../helpers/owner';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { dashboardPage, seriousViolations } from '../helpers/dashboard-browser';

/**
 * The numbers of an account's page a trader must be able to trust, in a real browser against the real stack:
 * - a stop-limit order reads its trigger (`stopLimitPrice`) then its limit (`price`), as the paper bridge places it;
 * - after `modify_pending_expiry` the order shows its new expiry, carried by the paper bridge's `order_modified`;
 * - today's closes list a take-profit level's partial close, and their total is the day's realized P&L;
 * - the daily loss guard says it counts equity from the day's opening, and what its percentage is of;
 * - money has two decimals and thousands apart, lots read "0.20 lots", and an account without figures has chart
 *   titles without an empty currency.
 * The paper bridge's events come from a real PaperTerminal in this process, sent as its bridge would send them.
 * The screenshot is docs/screenshots/dashboard-trade-numbers.png.
 */

const UI_TIMEOUT_MS = 20_000;
const DAY_MS = 86_400_000;

/** 10:00 UTC of the last Wednesday before `nowMs` (every paper market is open then; within the journal's retention). */
function lastWednesday(nowMs: number): number {
  const d = new Date(nowMs - DAY_MS);
  d.setUTCHours(10, 0, 0, 0);
  while (d.getUTCDay() !== 3) d.setUTCDate(d.getUTCDate() - 1);
  return d.getTime();
}

/** The paper bridge's events for a buy stop-limit (trigger 1.095, limit 1.0935) given an expiry after it was placed. */
function paperStopLimit(accountId: string, expiry: string) {
  const now = lastWednesday(Date.now());
  const feed = new ManualFeed(() => now);
  feed.set('EURUSD', 1.09, 1.0901);
  const terminal = new PaperTerminal({
    accountId,
    platform: 'mt5',
    bridgeToken: 'brg_unused',
    ingressUrl: 'http://127.0.0.1:9',
    clock: () => now,
    brokerOptions: { feed, balance: 100_000 },
    ledger: new MemoryLedger(),
    tickMs: 0,
    diag: () => undefined,
    log: () => undefined,
  });
  const run = (seq: number, body: Record<string, unknown>) =>
    terminal.handle({
      commandId: `paper/${seq}`,
      seq,
      signalId: `paper-${seq}`,
      accountId,
      acceptedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 60_000).toISOString(),
      ...body,
    })!.report;
  const order = run(1, { action: 'buy_stop_limit', symbol: 'EURUSD', volume: 0.1, price: 1.0935, stopLimitPrice: 1.095 });
  expect(run(2, { action: 'modify_pending_expiry', orderId: order.ticket, expiry })).toMatchObject({ status: 'done' });
  // Sent as the bridge sends them: without the commands' ids, which are the paper terminal's own here.
  return { ticket: order.ticket!, events: terminal.trades.outbox.pending().map(({ commandId: _c, ...e }) => e) };
}

describe("the numbers on an account's page", () => {
  let stack: Stack;
  let f: Fixture;
  let owner: OwnerBrowser;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  let order = '';
  const expiry = new Date(Date.now() + DAY_MS).toISOString().replace(/\.\d{3}Z$/, '.000Z');
  const shots = path.join(REPO_ROOT, 'docs', 'screenshots');
  const account = (i = 0) => f.accounts[i]!.id;
  const trades = (body: Record<string, unknown>) =>
    post(`${stack.ingress.url}/bridge/v1/trades`, body, { authorization: `Bearer ${f.accounts[0]!.bridgeToken}` });

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    stack = await startStack({ worker: false, env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
    const risk = riskSettingsSchema.parse({ lossGuards: { dailyLossAmount: 50 } });
    f = await seedOwner(stack.registry, [{ risk }, {}]);
    owner = await setUpOwner(stack.ingress.url, stack.config.redis.url, f.owner);
    await new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken, 'mt5', '2.2.0', ['loss_guards', 'trade_events']).hello();

    const paper = paperStopLimit(account(), expiry);
    order = paper.ticket;
    const now = Date.now();
    // Seconds ago, so that every close is today's (the day is UTC: the account sets no time zone).
    const at = (secondsAgo: number) => new Date(now - secondsAgo * 1000).toISOString();
    const close = (eventId: string, secondsAgo: number, ticket: string, volume: number, remainingVolume: number, profit: number, cause: string) => ({
      eventId,
      type: 'position_closed',
      at: at(secondsAgo),
      ticket,
      symbol: 'EURUSD',
      volume,
      remainingVolume,
      price: 1.086,
      profit,
      commission: -0.7,
      swap: 0,
      cause,
    });
    const open = (eventId: string, secondsAgo: number, ticket: string, volume: number) => ({
      eventId,
      type: 'position_opened',
      at: at(secondsAgo),
      ticket,
      symbol: 'EURUSD',
      side: 'buy',
      volume,
      price: 1.088,
    });
    // The day opens at 100,000.00 (the first equity point of the day), before any trade.
    const first = await trades({ events: paper.events, account: { balance: 100_000, equity: 100_000, margin: 0, freeMargin: 100_000, currency: 'USD' } });
    expect(first.body.events.map((e: { result: string }) => e.result)).toEqual(['recorded', 'recorded']);
    // A loss closed at its stop (−19.90 net), a take-profit level's share of a trade still open (+1.50 net): −18.40.
    const day = await trades({
      events: [
        open('deal:1', 30, '5001', 0.1),
        close('deal:2', 20, '5001', 0.1, 0, -19.2, 'stop_loss'),
        open('deal:3', 15, '5003', 0.3),
        close('deal:4', 5, '5003', 0.1, 0.2, 2.2, 'take_profit_level'),
      ],
      // The open position floats in profit: equity stands above the day's opening although the realized P&L is a loss.
      account: { balance: 99_981.6, equity: 100_008, margin: 100, freeMargin: 99_908, currency: 'USD' },
    });
    expect(day.body.events.map((e: { result: string }) => e.result)).toEqual(Array(4).fill('recorded'));
    ({ browser, page, problems } = await dashboardPage(stack.ingress.url, { cookie: owner.cookie }));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const failWithPage = async (err: unknown) => {
    throw new Error(`${String(err)}\npage: ${await page.locator('main').innerText()}`);
  };
  const cells = async (row: Locator) => (await row.getByRole('cell').allInnerTexts()).map((t) => t.trim());

  test('a stop-limit reads trigger then limit, and its new expiry replaces "good till cancelled"', async () => {
    await page.goto(`${stack.ingress.url}/dashboard/accounts/${encodeURIComponent(account())}`);
    const row = page.getByRole('table', { name: /^Pending orders/ }).getByRole('row', { name: new RegExp(`^${order} EURUSD`) });
    await row.waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    const shown = await cells(row);
    expect(shown.slice(0, 7)).toEqual([order, 'EURUSD', 'buy stop-limit', '0.10 lots', 'trigger 1.095 → limit 1.0935', '—', '—']);
    await expect(row.locator('td').last().locator('time').getAttribute('datetime')).resolves.toBe(expiry);
    expect(shown.at(-1)).not.toBe('good till cancelled');
  }, 60_000);

  test("today's closes list the partial close and add up to the day's realized P&L; the guard says what it counts", async () => {
    const closes = page.getByRole('table', { name: /^Today's closes/ });
    await closes
      .getByRole('row', { name: /5003 EURUSD/ })
      .waitFor({ timeout: UI_TIMEOUT_MS })
      .catch(failWithPage);
    expect((await cells(closes.getByRole('row', { name: /5003 EURUSD/ }))).slice(1)).toEqual([
      '5003',
      'EURUSD',
      'buy',
      '0.10 lots',
      '1.086',
      'partial close (a take-profit level): 0.20 lots still open',
      '+1.50 USD',
    ]);
    expect((await cells(closes.getByRole('row', { name: /5001 EURUSD/ }))).slice(6)).toEqual(['stop loss hit', '−19.90 USD']);
    // The bridge's figures as money: two decimals, thousands apart (they read "Balance 99981.6, equity 100008").
    await expect(page.getByText(/^Balance /).innerText()).resolves.toMatch(/^Balance 99,981\.60, equity 100,008\.00, free margin 99,908\.00 USD \(at /);
    await expect(page.getByText(/^2 closes \(1 partial\) today/).innerText()).resolves.toBe(
      "2 closes (1 partial) today, total −18.40 USD: the day's realized P&L.",
    );
    await expect(page.getByText(/^Realized today/).innerText()).resolves.toMatch(
      /^Realized today \(\d{4}-\d\d-\d\d, UTC\): −18\.40 USD, commission and swap included: /,
    );
    const guard = page.locator('.gauge').filter({ has: page.getByRole('meter', { name: "Today's equity loss against the daily loss limit" }) });
    await expect(guard.locator('span').innerText()).resolves.toBe(
      "Counts the fall of equity since the day opened, open positions' floating P&L included: opened at 100,000.00 USD, 100,008.00 USD now: " +
        "8.00 USD above the opening, nothing lost. Limit 50.00 USD (0.05 % of the day's opening equity): 0 % of it used.",
    );
    // The trade with its part closed is still open, its lots as a broker writes them.
    await expect(cells(page.getByRole('table', { name: 'Open positions' }).getByRole('row', { name: /^5003 / }))).resolves.toEqual(
      expect.arrayContaining(['5003', 'EURUSD', 'buy', '0.20 lots']),
    );
    await expect(page.locator('figcaption').allInnerTexts()).resolves.toEqual(['Equity curve (USD)', 'Daily P&L (USD, UTC)']);
    await expect(page.getByText(/^Equity from 100,000\.00 USD to 100,000\.00 USD/).isVisible()).resolves.toBe(true);
    expect(await seriousViolations(page, 'account-numbers')).toEqual([]);
    await page.locator('section.trades').screenshot({ path: path.join(shots, 'dashboard-trade-numbers.png') });
    expect(problems).toEqual([]);
  }, 60_000);

  test('an account without figures or trades: chart titles without an empty currency, and no bars of zeros', async () => {
    await page.goto(`${stack.ingress.url}/dashboard/accounts/${encodeURIComponent(account(1))}`);
    await page.getByText('No realized P&L in the last 30 days: no trade closed.').waitFor({ timeout: UI_TIMEOUT_MS }).catch(failWithPage);
    await expect(page.locator('figcaption').allInnerTexts()).resolves.toEqual(['Equity curve', 'Daily P&L (UTC)']);
    await expect(page.getByRole('img', { name: /^Daily P&L/ }).count()).resolves.toBe(0);
    expect(problems).toEqual([]);
  }, 60_000);
});
