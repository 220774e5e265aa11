import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { riskSettingsSchema } from '../../src/domain/risk-settings';
import { REASON_CODES } from '../../src/domain/reason-codes';
import { BRIDGE_FEATURES } from '../../src/domain/account';
import { CURRENT_BRIDGE_VERSION } from '../../src/domain/capabilities';
import { REPO_ROOT } from '../../support/infra';
import { ownerKeyFile, signedInOwner } from '../helpers/owner';
import { post, startStack, type Fixture, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { dashboardPage, seriousViolations } from '../helpers/dashboard-browser';

/**
 * A signal's page and the signal list in a real browser against the real stack: a rejected entry reads its reason in
 * words with the code beside it, says it never reached a bridge and that no trade came of it, and shows what was sent
 * (volume, SL, TP, trade management); an exit's page speaks of the trades it closed, not of trades it opened.
 * Screenshots: docs/screenshots/dashboard-signal-rejected.png, dashboard-signal-close.png.
 */

const UI_TIMEOUT_MS = 20_000;

describe("a signal's page on the dashboard", () => {
  let stack: Stack;
  let f: Fixture;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  let bridge: ScriptedTerminal;
  const shots = path.join(REPO_ROOT, 'docs', 'screenshots');

  beforeAll(async () => {
    stack = await startStack({ env: { OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' } });
    const signedIn = await signedInOwner(stack, [{ risk: riskSettingsSchema.parse({ requireStopLoss: true }) }]);
    f = signedIn.f;
    bridge = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken, 'mt5', CURRENT_BRIDGE_VERSION.mt5, [...BRIDGE_FEATURES]);
    await bridge.hello();
    // A signal's page asks for it again while it is not listed yet (a 404, and the browser's console line for it).
    const notListedYet = /HTTP 404: .*\/v1\/owner\/signals\/sig_[0-9a-f]{32}$|the server responded with a status of 404/;
    ({ browser, page, problems } = await dashboardPage(stack.ingress.url, { cookie: signedIn.browser.cookie, allowed: notListedYet }));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const send = async (body: Record<string, unknown>) => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, ...body });
    expect(res.status).toBe(202);
    return res.body.signalId as string;
  };

  test('a rejected entry: its reason in words with the code, never delivered, no trade, and what was sent', async () => {
    const signalId = await send({ action: 'buy', symbol: 'EURUSD', volume: 0.1, tp: 1.2, trailDistancePips: 20 });
    const meaning = REASON_CODES.risk_stop_loss_required.meaning;
    await page.goto(`${stack.ingress.url}/dashboard/signals`);
    await page.locator('#signals').getByText(`rejected: ${meaning} risk_stop_loss_required`).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.goto(`${stack.ingress.url}/dashboard/signals/${signalId}`);
    await page.getByText('never delivered to a bridge: it was rejected before any bridge took it').waitFor({ timeout: UI_TIMEOUT_MS });
    await page.getByText('No trade: the signal was rejected on every account.').waitFor({ timeout: UI_TIMEOUT_MS });
    await expect(page.locator('#signal-sent').textContent()).resolves.toBe('Sent: buy EURUSD · volume 0.1 lots · TP 1.2 · trailing stop 20 pips');
    const text = await page.locator('main').innerText();
    expect(text).not.toContain('not delivered to the bridge yet');
    expect(text).not.toContain('(yet)');
    await page.screenshot({ path: path.join(shots, 'dashboard-signal-rejected.png'), fullPage: true });
    expect(await seriousViolations(page, 'signal-rejected')).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);

  test('a signal not listed yet: its page says it is looking for it, and shows it once it is listed', async () => {
    // A handle of the right shape that no signal has (yet): the page does not answer "not found" at once.
    await page.goto(`${stack.ingress.url}/dashboard/signals/sig_${'0'.repeat(32)}`);
    await page.getByRole('status').getByText('Looking for this signal').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await page.locator('main').innerText()).not.toContain('Something went wrong');
    // A real one, opened the moment it is accepted, is shown whether or not it was listed already.
    const signalId = await send({ action: 'close', positionId: '5002' });
    await page.goto(`${stack.ingress.url}/dashboard/signals/${signalId}`);
    await expect(page.locator('#signal-sent').textContent({ timeout: UI_TIMEOUT_MS })).resolves.toBe('Sent: close · position 5002');
    const [command] = await bridge.nextCommands(1, 15_000);
    await bridge.report([{ commandId: command!.commandId, status: 'done', ticket: '5002' }]);
    expect(problems).toEqual([]);
  }, 60_000);

  test('a close: its page speaks of the trades it closed, not of trades it opened', async () => {
    const signalId = await send({ action: 'close', positionId: '5001' });
    const [command] = await bridge.nextCommands(1, 15_000);
    await bridge.report([{ commandId: command!.commandId, status: 'done', ticket: '5001' }]);
    await page.goto(`${stack.ingress.url}/dashboard/signals/${signalId}`);
    await page.getByText('No trade reported as closed or changed by this signal (yet).').waitFor({ timeout: UI_TIMEOUT_MS });
    await expect(page.locator('#signal-sent').textContent()).resolves.toBe('Sent: close · position 5001');
    expect(await page.locator('main').innerText()).not.toContain('opened');
    await page.screenshot({ path: path.join(shots, 'dashboard-signal-close.png'), fullPage: true });
    expect(await seriousViolations(page, 'signal-close')).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);
});
