import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { REPO_ROOT, waitFor } from '../../support/infra';
import { launchChromium } from '../../support/chromium';
import type { ServiceProcess } from '../../support/processes';
import { hellos, startConnectWorld, startLinkedConnector, type ConnectWorld } from '../helpers/ctrader-connect';
import { asBrowser, setUpOwner, totp, type OwnerBrowser } from '../helpers/owner';
import { post } from '../helpers/stack';

/**
 * Connect with cTrader in a real browser (Chromium through playwright-core): the owner signs in, clicks "Connect with
 * cTrader", allows access on the stand-in for cTrader's granting-access page, comes back, picks the demo account and
 * links it; the connector (its own process, reading linked accounts from Redis) picks it up without a restart, the
 * account page turns online, and a signal fills at the Open API double. Screenshots: docs/screenshots/ctrader-*.png.
 */

const UI_TIMEOUT_MS = 20_000;

describe('Connect with cTrader in a browser', () => {
  let w: ConnectWorld;
  let owner: OwnerBrowser;
  let connector: ServiceProcess;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const shots = path.join(REPO_ROOT, 'docs', 'screenshots');

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    w = await startConnectWorld();
    owner = await setUpOwner(w.stack.ingress.url, w.stack.config.redis.url, `trader-${Date.now().toString(36)}`);
    connector = await startLinkedConnector(w, 'browser');
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await connector?.stop();
    await w?.stop();
  });

  test('sign in, Connect with cTrader, allow, pick the demo account: it goes online and a signal fills', async () => {
    const ingress = w.stack.ingress.url;
    await page.goto(`${ingress}/dashboard/sign-in`);
    await page.getByLabel('Owner').fill(owner.owner);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByLabel('Code from the app').fill(totp(owner.seed, 0));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${ingress}/dashboard`, { timeout: UI_TIMEOUT_MS });

    await page.getByRole('button', { name: 'Connect with cTrader' }).click();
    await page.waitForURL((u) => u.href.startsWith(w.standin.authorizeUrl), { timeout: UI_TIMEOUT_MS });
    await page.getByRole('button', { name: 'Allow access' }).click();

    await page.waitForURL(`${ingress}/dashboard/ctrader/callback`, { timeout: UI_TIMEOUT_MS });
    const demo = page.getByLabel(/Demo · Demo Markets · account 5550001/);
    await demo.waitFor({ timeout: UI_TIMEOUT_MS });
    await page.getByLabel(/Live · Live Markets · account 5550002/).waitFor();
    await page.screenshot({ path: path.join(shots, 'ctrader-connect-pick.png'), fullPage: true });
    await demo.check();
    await page.getByRole('button', { name: 'Link selected accounts' }).click();
    const id = `ctrader-${w.demoCtid}`;
    await page
      .getByRole('link', { name: id })
      .click({ timeout: UI_TIMEOUT_MS })
      .catch(async (err: unknown) => {
        throw new Error(`${String(err)}\npage: ${await page.locator('main').innerText()}\n${problems.join('\n')}`);
      });

    await waitFor('the connector to pick the account up', async () => (hellos(connector, id) > 0 ? true : undefined), 20_000);
    await waitFor(
      'the account page to say online',
      async () => {
        await page.reload();
        return (await page.locator('#bridge-state .online').count()) > 0 ? true : undefined;
      },
      UI_TIMEOUT_MS,
    );
    await page.getByText('Demo · Demo Markets · account 5550001').first().waitFor();
    await page.screenshot({ path: path.join(shots, 'ctrader-connect-online.png') });

    const secret = await asBrowser(owner, 'POST', `${ingress}/v1/owner/secrets`, { accounts: [id] });
    const sent = await post(`${ingress}/webhook/custom/${id}`, { secret: secret.body.value, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(sent.status).toBe(202);
    await page.getByRole('link', { name: 'Signals' }).click();
    const position = await waitFor('the double to hold the position', async () => [...w.double.account(w.demoCtid).positions.values()][0], 20_000);
    await page.getByText(`filled · ticket ${position.positionId}`).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.screenshot({ path: path.join(shots, 'ctrader-connect-filled.png'), fullPage: true });
    expect(problems).toEqual([]);
  }, 120_000);
});
