import path from 'node:path';
import { mkdirSync, readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { loopbackWarning } from '../../src/downloads/mt5-package';
import { BRIDGE_FEATURES } from '../../src/domain/account';
import { CURRENT_BRIDGE_VERSION } from '../../src/domain/capabilities';
import { ScriptedTerminal } from '../helpers/terminal';
import { testEnv } from '../../support/env';
import { freePort, REPO_ROOT } from '../../support/infra';
import { adminCliJson } from '../helpers/admin';
import { asBrowser, ownerKeyFile, setUpOwner, type OwnerBrowser } from '../helpers/owner';
import { unpack } from '../helpers/mt5-package';
import { get, post, startStack, type Stack } from '../helpers/stack';
import { dashboardPage, seriousViolations } from '../helpers/dashboard-browser';

/**
 * Connecting a real account from the dashboard, in a real browser (Debian's chromium) against the real stack, on a
 * service whose PUBLIC_URL is loopback and which has no cTrader Open API application: the MT5 account's page warns
 * that the package's address is this machine and says to set PUBLIC_URL (and the zip's config says so beside its
 * url); after the download no token shows that no longer works; the cTrader account's page says no Open API
 * application is configured and links the served guide; a webhook secret's and an API token's accounts are linked
 * and unlinked in place, every picker naming the accounts. Screenshots: docs/screenshots/account-path-*.png and
 * dashboard-setup.png (no signed-in navigation before sign-in).
 */

const UI_TIMEOUT_MS = 20_000;

describe('connecting a real account on the dashboard', () => {
  let stack: Stack;
  let owner: OwnerBrowser;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  const shots = path.join(REPO_ROOT, 'docs', 'screenshots');
  const work = path.join(testEnv().runDir, 'account-path');
  const accounts = { mt5: '', ctrader: '' };

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    // The package's config carries PUBLIC_URL: the service knows its own (loopback) address before it starts.
    const port = await freePort();
    stack = await startStack({
      env: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' },
    });
    owner = await setUpOwner(stack.ingress.url, stack.config.redis.url, `owner-path-${process.pid}`);
    for (const [platform, name] of [
      ['mt5', 'IC Markets live'],
      ['ctrader', 'Pepperstone cTrader'],
    ] as const) {
      const made = await asBrowser(owner, 'POST', `${stack.ingress.url}/v1/owner/accounts`, { name, platform, type: 'standard' });
      expect(made.status).toBe(201);
      accounts[platform] = made.body.account.id as string;
    }
    ({ browser, page, problems } = await dashboardPage(stack.ingress.url, { cookie: owner.cookie }));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function shot(name: string) {
    await page.screenshot({ path: path.join(shots, name === 'setup' ? 'dashboard-setup.png' : `account-path-${name}.png`), fullPage: true });
    expect(await seriousViolations(page, name)).toEqual([]);
  }

  test('an MT5 account on a loopback PUBLIC_URL: the page warns before the download, the zip says so, and no dead token stays shown', async () => {
    await page.goto(`${stack.ingress.url}/dashboard/accounts/${accounts.mt5}`);
    await page.getByRole('heading', { name: 'Account IC Markets live' }).waitFor({ timeout: UI_TIMEOUT_MS });
    const warning = loopbackWarning(stack.ingress.url)!;
    expect(warning).toContain('Set PUBLIC_URL');
    await expect(page.locator('#mt5-address-warning').textContent({ timeout: UI_TIMEOUT_MS })).resolves.toBe(warning);

    // A token shown once, then the download, which makes another one (in the zip only).
    await page.getByRole('button', { name: /New bridge token/ }).click();
    const shown = (await page.locator('output.once').textContent({ timeout: UI_TIMEOUT_MS }))!.trim();
    await page.getByText(`ES_BRIDGE_TOKEN=${shown}`).waitFor({ timeout: UI_TIMEOUT_MS });
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: UI_TIMEOUT_MS }),
      page.getByRole('button', { name: 'Download the MT5 bridge' }).click(),
    ]);
    await page.getByText(`Downloaded ${download.suggestedFilename()}: it holds the account's new bridge token`).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator('output.once').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    expect(await page.locator('main').innerText()).not.toContain(shown);
    await page.getByText('ES_BRIDGE_TOKEN=brg_…').waitFor({ timeout: UI_TIMEOUT_MS });
    const old = await post(
      `${stack.ingress.url}/bridge/v1/hello`,
      { platform: 'mt5', bridgeVersion: '3.6.0', capabilities: [] },
      { authorization: `Bearer ${shown}` },
    );
    expect(old.status).toBe(401);
    await shot('mt5-loopback');

    const zipFile = path.join(work, download.suggestedFilename());
    await download.saveAs(zipFile);
    const { files } = unpack(readFileSync(zipFile), path.join(work, 'pc'));
    const ini = files['es-mt5-bridge.ini']!.toString('utf8');
    expect(ini).toContain(`; WARNING: ${warning}\r\nurl = ${stack.ingress.url}\r\n`);
    expect(problems).toEqual([]);
  }, 60_000);

  test('a cTrader account without an Open API application: the page says so and links the steps to register one', async () => {
    await page.goto(`${stack.ingress.url}/dashboard/accounts/${accounts.ctrader}`);
    await page.getByRole('heading', { name: 'Account Pepperstone cTrader' }).waitFor({ timeout: UI_TIMEOUT_MS });
    const said = page.locator('#ctrader-not-configured');
    await said.waitFor({ timeout: UI_TIMEOUT_MS }).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npage: ${await page.locator('main').innerText()}`);
    });
    expect(await said.innerText()).toContain('this service has no cTrader Open API application configured');
    expect(await page.locator('main').innerText()).not.toContain('your operator adds this account');
    const link = said.getByRole('link', { name: 'the steps, in docs/ctrader-connector.md' });
    expect(await link.getAttribute('href')).toBe('/docs/guides/ctrader-connector.md');
    await shot('ctrader-not-configured');
    const guide = await get(`${stack.ingress.url}/docs/guides/ctrader-connector.md`);
    expect(guide.status).toBe(200);
    expect(guide.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(guide.text).toContain('\n## For a self-hoster: registering an Open API application\n');
    expect(problems).toEqual([]);
  }, 60_000);

  test('a webhook secret and an API token are linked to a new account and unlinked from another in place; pickers name the accounts', async () => {
    const base = `${stack.ingress.url}/v1/owner`;
    const secret = await asBrowser(owner, 'POST', `${base}/secrets`, { accounts: [accounts.mt5] });
    const token = await asBrowser(owner, 'POST', `${base}/tokens`, { accounts: [accounts.mt5] });
    await page.goto(`${stack.ingress.url}/dashboard/credentials`);
    const picker = page.getByRole('form', { name: 'New webhook secret' });
    await expect(picker.locator('label', { hasText: accounts.mt5 }).textContent({ timeout: UI_TIMEOUT_MS })).resolves.toBe(`IC Markets live ${accounts.mt5}`);

    for (const [kind, noun, made] of [
      ['secrets', 'webhook secret', secret],
      ['tokens', 'API token', token],
    ] as const) {
      const id = made.body.id as string;
      const row = page.getByRole('form', { name: `Accounts of ${noun} ${id}` });
      await row.getByLabel('Pepperstone cTrader').check();
      await row.getByRole('button', { name: 'Save accounts' }).click();
      await page
        .getByText(`Saved: ${noun} ${id} now reaches IC Markets live, Pepperstone cTrader. Its value is unchanged.`)
        .waitFor({ timeout: UI_TIMEOUT_MS });
      const linked = await asBrowser(owner, 'GET', `${base}/${kind}`);
      expect((linked.body[kind] as { id: string; accounts: string[] }[]).find((g) => g.id === id)!.accounts.sort()).toEqual(
        [accounts.mt5, accounts.ctrader].sort(),
      );
      await row.getByLabel('IC Markets live').uncheck();
      await row.getByRole('button', { name: 'Save accounts' }).click();
      await page.getByText(`Saved: ${noun} ${id} now reaches Pepperstone cTrader. Its value is unchanged.`).waitFor({ timeout: UI_TIMEOUT_MS });
      const unlinked = await asBrowser(owner, 'GET', `${base}/${kind}`);
      expect((unlinked.body[kind] as { id: string; accounts: string[] }[]).find((g) => g.id === id)!.accounts).toEqual([accounts.ctrader]);
    }
    await page.reload();
    await page.getByRole('cell', { name: 'Pepperstone cTrader', exact: true }).first().waitFor({ timeout: UI_TIMEOUT_MS });
    await shot('credentials');
    expect(problems).toEqual([]);
  }, 60_000);

  test('an MT5 bridge behind the current version that runs every feature is not told to update; one that lacks features is', async () => {
    const base = `${stack.ingress.url}/v1/owner/accounts/${accounts.mt5}`;
    for (const [version, features, said] of [
      ['2.1.0', [...BRIDGE_FEATURES], "This account's bridge is 2.1.0."],
      [
        '2.1.0',
        BRIDGE_FEATURES.filter((f) => f !== 'trailing_stop'),
        "This account's bridge is 2.1.0: it cannot run the features trailing_stop. Download and start the new one to update it.",
      ],
    ] as const) {
      const token = await asBrowser(owner, 'POST', `${base}/bridge-token`);
      expect(token.status).toBe(201);
      await new ScriptedTerminal(stack.ingress.url, token.body.value as string, 'mt5', version, [...features]).hello();
      await page.goto(`${stack.ingress.url}/dashboard/accounts/${accounts.mt5}`);
      await page.getByText(`The current MT5 bridge is ${CURRENT_BRIDGE_VERSION.mt5}. ${said}`, { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
    }
    expect(problems).toEqual([]);
  }, 60_000);

  test('the front door links the dashboard, a deep link opens its page, and the setup page shows no signed-in navigation', async () => {
    const front = await get(`${stack.ingress.url}/`);
    expect(front.status).toBe(200);
    expect(front.text).toContain('<a href="/dashboard">Dashboard</a>');
    expect(front.text).toContain('<a href="/healthz">/healthz</a>');
    await page.goto(`${stack.ingress.url}/dashboard/accounts`);
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.getByRole('link', { name: 'IC Markets live' }).waitFor({ timeout: UI_TIMEOUT_MS });

    const { setupLink } = await adminCliJson<{ setupLink: string }>(['owner', 'create', `owner-setup-${process.pid}`], stack.config.redis.url);
    await page.goto(`${stack.ingress.url}/dashboard/setup#${setupLink.split('#')[1]!}`);
    await page.locator('#totp-seed').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await page.locator('#nav').isVisible()).toBe(false);
    expect(await page.getByRole('link', { name: 'Secrets and tokens' }).count()).toBe(0);
    await shot('setup');
    expect(problems).toEqual([]);
  }, 60_000);
});
