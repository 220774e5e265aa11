import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { riskSettingsSchema, symbolMapSchema } from '../../src/domain/risk-settings';
import { testEnv } from '../../support/env';
import { asBrowser, ownerKeyFile, setUpOwner, type OwnerBrowser } from '../helpers/owner';
import { seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { dashboardPage, seriousViolations } from '../helpers/dashboard-browser';

/**
 * The account page's risk form in a real browser (Debian's chromium) against the real stack: saving it unchanged sends
 * back exactly the settings loaded; a risk % sizing and a daily-loss guard set through the form (the sizing mode
 * chosen with the keyboard) are exactly what the owner API then returns; a refusal by the server is shown on the field
 * it names, described by it; the drawdown reset is kept; axe finds no serious or critical violation, with and without
 * errors shown; no CSP violation and no page error.
 */

const UI_TIMEOUT_MS = 20_000;

describe('the risk settings form in a browser', () => {
  let stack: Stack;
  let f: Fixture;
  let owner: OwnerBrowser;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  const shots = path.join(testEnv().runDir, 'dashboard');
  const seeded = {
    risk: riskSettingsSchema.parse({
      blockedSymbols: ['BTCUSD'],
      maxVolume: 2,
      requireStopLoss: true,
      maxSignalAgeMs: 30_000,
      tradingHours: [{ days: [1, 2, 3, 4, 5], from: '07:00', to: '21:00' }],
      lossGuards: { maxDrawdownPercent: 10, drawdownResetAt: '2026-11-20T10:00:00.000Z' },
    }),
    symbols: symbolMapSchema.parse({ aliases: { XAUUSD: 'GOLD' }, suffix: '.m' }),
  };

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    stack = await startStack({ worker: false, env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
    f = await seedOwner(stack.registry, [{ risk: seeded.risk, symbols: seeded.symbols }]);
    owner = await setUpOwner(stack.ingress.url, stack.config.redis.url, f.owner);
    // The refusals this test provokes are 400s (a failed resource to chromium); anything else is a problem.
    ({ browser, page, problems } = await dashboardPage(stack.ingress.url, { cookie: owner.cookie, allowed: /status of 400|^HTTP 400:/ }));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const accountUrl = () => `${stack.ingress.url}/dashboard/accounts/${encodeURIComponent(f.accounts[0]!.id)}`;
  const apiSettings = async () => {
    const res = await asBrowser(owner, 'GET', `${stack.ingress.url}/v1/owner/accounts/${encodeURIComponent(f.accounts[0]!.id)}`);
    expect(res.status).toBe(200);
    return { risk: res.body.risk, symbols: res.body.symbols };
  };
  const form = () => page.getByRole('form', { name: 'Risk rules and symbols' });

  async function accessible(name: string) {
    await page.screenshot({ path: path.join(shots, `dashboard-${name}.png`), fullPage: true });
    expect(await seriousViolations(page, name)).toEqual([]);
  }

  /** What a screen reader reads as the control's description: the text of the elements its aria-describedby names. */
  const descriptionOf = (control: Locator) =>
    control.evaluate((el) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .map((id: string) => el.ownerDocument.getElementById(id)?.textContent ?? '')
        .join(' ')
        .trim(),
    );

  async function save(): Promise<unknown> {
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PATCH', { timeout: UI_TIMEOUT_MS }),
      form().getByRole('button', { name: 'Save' }).click(),
    ]);
    return request.postDataJSON();
  }

  test('saving the form unchanged sends back exactly the settings loaded, the drawdown reset included', async () => {
    await page.goto(accountUrl());
    await form().getByLabel('Max volume per entry').waitFor({ timeout: UI_TIMEOUT_MS });
    await expect(form().getByLabel('Max volume per entry').inputValue()).resolves.toBe('2');
    await expect(form().getByLabel('Max signal age').inputValue()).resolves.toBe('30');
    await expect(form().getByLabel("Broker's symbol").inputValue()).resolves.toBe('GOLD');
    // The account's bridge has never said hello, so it has not announced stop_out: ticking the stop-out would refuse
    // every entry, and its checkbox says so.
    const stopOut = form().getByRole('checkbox', { name: /^Stop-out/ });
    await expect(stopOut.isChecked()).resolves.toBe(false);
    await expect(descriptionOf(stopOut)).resolves.toMatch(/has not announced stop_out: while this is on, every entry is refused/);
    await accessible('risk-form');
    expect(await save()).toEqual(seeded);
    await page.getByText('Saved: the next signal uses these settings.').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await apiSettings()).toEqual(seeded);
  }, 60_000);

  test('a risk % sizing and a daily-loss guard set through the form are exactly what the owner API returns', async () => {
    await page.goto(accountUrl());
    // The sizing mode by keyboard, as radio buttons go: the arrow keys move the choice.
    await form().getByRole('radio', { name: 'As the signal says' }).focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
    await expect(form().getByRole('radio', { name: 'Risk a % of equity or balance' }).isChecked()).resolves.toBe(true);
    await expect(form().getByLabel('Lots per entry').isVisible()).resolves.toBe(false);
    await form().getByLabel('Percent at risk per entry', { exact: true }).fill('1.5');
    await form().getByRole('radio', { name: 'Balance', exact: true }).check();
    await form().getByLabel('Daily loss limit as').selectOption('percent');
    await form().getByLabel('Daily loss limit', { exact: true }).fill('3');
    // The time zone is typed, with the browser's IANA list to pick from.
    await expect(page.locator('datalist#time-zones option[value="America/New_York"]').count()).resolves.toBe(1);
    await form().getByLabel('Trading day’s time zone').fill('Europe/London');
    const expected = {
      risk: {
        ...seeded.risk,
        sizing: { mode: 'risk_percent', of: 'balance', percent: 1.5 },
        lossGuards: { ...seeded.risk.lossGuards, dailyLossPercent: 3, timezone: 'Europe/London' },
      },
      symbols: seeded.symbols,
    };
    expect(await save()).toEqual(expected);
    await page.getByText('Saved: the next signal uses these settings.').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await apiSettings()).toEqual(expected);
  }, 60_000);

  test('a refusal lands on the field it names, described by it and focused; the rows add and remove by keyboard', async () => {
    await page.goto(accountUrl());
    const percent = form().getByLabel('Percent at risk per entry', { exact: true });
    await percent.fill('50');
    // A window added and removed again by keyboard: the form sends the one window it had.
    await form().getByRole('button', { name: 'Add a window' }).press('Enter');
    await form().getByRole('button', { name: 'Remove window 2' }).press('Enter');
    await expect(form().getByRole('group', { name: 'Window 2' }).count()).resolves.toBe(0);
    const sent = (await save()) as { risk: { sizing: unknown; tradingHours: unknown } };
    expect(sent.risk.sizing).toEqual({ mode: 'risk_percent', of: 'balance', percent: 50 });
    expect(sent.risk.tradingHours).toEqual(seeded.risk.tradingHours);
    await page.getByText('One setting was refused').waitFor({ timeout: UI_TIMEOUT_MS });
    await expect(percent.getAttribute('aria-invalid')).resolves.toBe('true');
    const described = (await percent.getAttribute('aria-describedby'))!.split(' ');
    const message = await page.locator(described.map((id) => `#${id}`).join(', ')).allTextContents();
    expect(message.join(' ')).toMatch(/At most 10/);
    await expect(percent.evaluate((el) => el === el.ownerDocument.activeElement)).resolves.toBe(true);
    await accessible('risk-form-refused');
    // Nothing was saved.
    expect((await apiSettings()).risk.sizing).toEqual({ mode: 'risk_percent', of: 'balance', percent: 1.5 });

    // A setting the form shows, given again in the Advanced JSON, is refused there before anything is sent.
    await percent.fill('2');
    await form().getByText('Advanced: settings this form does not show (JSON)').click();
    const advanced = form().getByLabel('Other settings (JSON)');
    const shownJson = await advanced.inputValue();
    await advanced.fill('{"risk": {"maxVolume": 1}}');
    await form().getByRole('button', { name: 'Save' }).click();
    await expect(advanced.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.locator(`[data-error-for="extras"]`).textContent()).resolves.toMatch(/set risk\.maxVolume in the form/);
    await expect(percent.getAttribute('aria-invalid')).resolves.toBeNull();

    // Mended, the errors go.
    await advanced.fill(shownJson);
    await save();
    await page.getByText('Saved: the next signal uses these settings.').waitFor({ timeout: UI_TIMEOUT_MS });
    await expect(form().locator('[aria-invalid]').count()).resolves.toBe(0);
  }, 60_000);

  test('a refusal of a group of boxes (a window with no day) describes each box, so the focused one reads it', async () => {
    await page.goto(accountUrl());
    const window1 = form().getByRole('group', { name: 'Window 1' });
    for (const day of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri']) await window1.getByRole('checkbox', { name: day, exact: true }).uncheck();
    const sent = (await save()) as { risk: { tradingHours: { days: number[] }[] } };
    expect(sent.risk.tradingHours[0]!.days).toEqual([]);
    await page.getByText('One setting was refused').waitFor({ timeout: UI_TIMEOUT_MS });
    const sunday = window1.getByRole('checkbox', { name: 'Sun', exact: true });
    await expect(sunday.evaluate((el) => el === el.ownerDocument.activeElement)).resolves.toBe(true);
    await expect(descriptionOf(sunday)).resolves.toBe('Choose at least one day');
    await expect(descriptionOf(window1.getByRole('checkbox', { name: 'Wed', exact: true }))).resolves.toBe('Choose at least one day');
    await accessible('risk-form-refused-days');
    // Nothing was saved.
    expect((await apiSettings()).risk.tradingHours).toEqual(seeded.risk.tradingHours);
  }, 60_000);

  test('trade management defaults: refused combinations shown on their box, saved and read back, cleared', async () => {
    await page.goto(accountUrl());
    const defaults = form().getByRole('group', { name: /^Trade management defaults/ });
    const box = (label: string) => defaults.getByLabel(label, { exact: true });
    await box('Trailing stop distance').waitFor({ timeout: UI_TIMEOUT_MS });
    await expect(defaults.innerText()).resolves.toMatch(/A signal's own fields win[\s\S]*the tighter of the signal's and this one wins/);
    await expect(descriptionOf(box('Max spread at entry'))).resolves.toMatch(/pips .*refused \(spread_too_wide\)/);
    const before = await apiSettings();

    // A step without a distance, and an offset not below its trigger: each refusal on its box, nothing saved.
    await box('Move the trailing stop in steps of').fill('2');
    await box('Move the stop to breakeven once in profit by').fill('5');
    await box('Breakeven offset (profit locked)').fill('5');
    const refused = (await save()) as { risk: { management: unknown } };
    expect(refused.risk.management).toEqual({ trailStepPips: 2, breakevenTriggerPips: 5, breakevenOffsetPips: 5 });
    await page.getByText('2 settings were refused').waitFor({ timeout: UI_TIMEOUT_MS });
    const distance = box('Trailing stop distance');
    await expect(distance.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(descriptionOf(distance)).resolves.toMatch(/Needed: a trailing start or step is set/);
    await expect(descriptionOf(box('Breakeven offset (profit locked)'))).resolves.toMatch(/Must be less than the breakeven trigger/);
    // The bridge of this account never said hello: the defaults set would refuse every entry, and the form says so.
    await expect(
      defaults.getByText(/has not announced trailing_stop, breakeven_trigger: with these defaults every entry is refused/).isVisible(),
    ).resolves.toBe(true);
    await accessible('risk-form-management-refused');
    expect(await apiSettings()).toEqual(before);

    // Mended: saved, and the owner API and the form read back the same.
    await distance.fill('15');
    await box('Breakeven offset (profit locked)').fill('1,5');
    await box('Max spread at entry').fill('2');
    const management = { trailDistancePips: 15, trailStepPips: 2, breakevenTriggerPips: 5, breakevenOffsetPips: 1.5, maxSpreadPips: 2 };
    expect(((await save()) as { risk: { management: unknown } }).risk.management).toEqual(management);
    await page.getByText('Saved: the next signal uses these settings.').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await apiSettings()).toEqual({ ...before, risk: { ...before.risk, management } });
    await page.goto(accountUrl());
    await expect(box('Breakeven offset (profit locked)').inputValue()).resolves.toBe('1.5');
    await expect(box('Start trailing once in profit by').inputValue()).resolves.toBe('');
    await accessible('risk-form-management');

    // Every box cleared: no defaults any more.
    for (const label of ['Trailing stop distance', 'Move the trailing stop in steps of', 'Move the stop to breakeven once in profit by'])
      await box(label).fill('');
    await box('Breakeven offset (profit locked)').fill('');
    await box('Max spread at entry').fill('');
    expect(await save()).not.toHaveProperty('risk.management');
    await page.getByText('Saved: the next signal uses these settings.').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await apiSettings()).toEqual(before);
    expect(problems).toEqual([]);
  }, 60_000);

  test('Reset drawdown restarts the guard now, changes nothing else, and keeps what the owner typed but did not save', async () => {
    await page.goto(accountUrl());
    const before = await apiSettings();
    await form().getByLabel('Max volume per entry').fill('3');
    await form().getByRole('button', { name: 'Reset drawdown' }).click();
    await page.getByText('Drawdown guard reset at').waitFor({ timeout: UI_TIMEOUT_MS });
    const after = await apiSettings();
    const resetAt = Date.parse(after.risk.lossGuards.drawdownResetAt);
    expect(resetAt).toBeGreaterThan(Date.parse(before.risk.lossGuards.drawdownResetAt));
    expect(Math.abs(resetAt - Date.now())).toBeLessThan(60_000);
    expect(after).toEqual({
      ...before,
      risk: { ...before.risk, lossGuards: { ...before.risk.lossGuards, drawdownResetAt: after.risk.lossGuards.drawdownResetAt } },
    });
    // The unsaved edit is still on screen, and saving it keeps the new reset (the advanced JSON shows it now).
    await expect(form().getByLabel('Max volume per entry').inputValue()).resolves.toBe('3');
    await save();
    await page.getByText('Saved: the next signal uses these settings.').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await apiSettings()).toEqual({ ...after, risk: { ...after.risk, maxVolume: 3 } });
    expect(problems).toEqual([]);
  }, 60_000);
});
