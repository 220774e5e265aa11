import fs from 'node:fs';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { testEnv } from '../../support/env';
import { freePort, waitFor } from '../../support/infra';
import { launchChromium } from '../../support/chromium';
import { ServiceProcess } from '../../support/service-process';
import { CURRENT_BRIDGE_VERSION } from '../../src/domain/capabilities';
import { adminCliJson } from '../helpers/admin';
import { ownerKeyFile, totp } from '../helpers/owner';
import { iniSettings, python, unpack } from '../helpers/mt5-package';
import { pollUntilReported, post, startStack, type Stack } from '../helpers/stack';
import { MT5_BRIDGE_DIR, mt5DoubleMarket } from '../conformance/mt5-driver';

/**
 * The trader's way to a running MT5 bridge, in a real browser against the real stack (issue 24's done-when): a fresh
 * owner signs in, adds an MT5 account on the dashboard (locked until its bridge connects), downloads the bridge package
 * from the account's page, and the test does what start-bridge.cmd does on Windows: unpacks the
 * zip, installs its wheel into a fresh venv (offline: the wheel needs nothing but the Windows-only MetaTrader5
 * package, here the double of bridges/mt5/tests/double) and starts the installed `es-mt5-bridge --config
 * es-mt5-bridge.ini` unchanged. The page turns online with the package's version, the account is unlocked, and a
 * signal fills in the double's trade server. Screenshots in the run directory (mt5-package-*.png).
 */

const UI_TIMEOUT_MS = 20_000;
const version = CURRENT_BRIDGE_VERSION.mt5;

describe('an MT5 account connected with the downloaded package', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let bridge: ServiceProcess | undefined;
  const work = path.join(testEnv().runDir, `mt5-package-${randomInt(1e9)}`);

  beforeAll(async () => {
    fs.mkdirSync(work, { recursive: true });
    // The config the download writes carries PUBLIC_URL, so the service must know its own address before it starts.
    const port = await freePort();
    stack = await startStack({
      env: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, OWNER_SECRETS_KEY_FILE: ownerKeyFile(), DASHBOARD_SECURE_COOKIES: 'false' },
    });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })).newPage();
  }, 90_000);

  afterAll(async () => {
    await bridge?.stop();
    await browser?.close();
    await stack?.stop();
  });

  test('when a new owner adds an MT5 account, downloads the package and starts the bridge from it, then the page shows it online and a signal fills', async () => {
    const owner = `owner-${randomInt(1e9)}`;
    const { setupLink } = await adminCliJson<{ setupLink: string }>(['owner', 'create', owner], stack.config.redis.url);
    await page.goto(`${stack.ingress.url}/dashboard/setup#${setupLink.split('#')[1]!}`);
    const seed = (await page.locator('#totp-seed').textContent({ timeout: UI_TIMEOUT_MS }))!.trim();
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
    await page.getByLabel('Password again').fill('correct horse battery staple');
    await page.getByLabel('Code from the app').fill(totp(seed, 0));
    await page.getByRole('button', { name: 'Finish setup' }).click();

    const add = page.getByRole('form', { name: 'Add an account' });
    await add.getByLabel('Name').fill('My MT5 live');
    await add.getByLabel('Platform').selectOption('mt5');
    await add.getByRole('button', { name: 'Add account' }).click();
    await page.getByRole('heading', { name: 'Account My MT5 live' }).waitFor({ timeout: UI_TIMEOUT_MS });
    const accountId = /^\/dashboard\/accounts\/(.+)$/.exec(new URL(page.url()).pathname)![1]!;
    await page.getByText('Locked for trading until its bridge says hello').waitFor({ timeout: UI_TIMEOUT_MS });
    await page.getByText(`The current MT5 bridge is ${version}. No bridge has connected to this account yet.`).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.screenshot({ path: path.join(work, 'mt5-package-before.png'), fullPage: true });
    const account = { id: accountId };

    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: UI_TIMEOUT_MS }),
      page.getByRole('button', { name: 'Download the MT5 bridge' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`mt5-bridge-${version}-${account.id}.zip`);
    const zipFile = path.join(work, download.suggestedFilename());
    await download.saveAs(zipFile);
    await page.getByText(`Downloaded ${download.suggestedFilename()}`).waitFor({ timeout: UI_TIMEOUT_MS });

    // What start-bridge.cmd does, on Linux: a venv in the unpacked folder, the zip's wheel installed into it.
    const { dir } = unpack(fs.readFileSync(zipFile), path.join(work, 'pc'));
    const config = path.join(dir, 'es-mt5-bridge.ini');
    expect(iniSettings(config).url).toBe(stack.ingress.url);
    python(['-m', 'venv', path.join(dir, '.venv')]);
    const venvPython = path.join(dir, '.venv', 'bin', 'python');
    const installed = python([
      '-c',
      'import subprocess, sys; subprocess.run(sys.argv[1:], check=True)',
      venvPython,
      '-m',
      'pip',
      'install',
      '--quiet',
      '--no-index',
      '--disable-pip-version-check',
      path.join(dir, `es_mt5_bridge-${version}-py3-none-any.whl`),
    ]);
    expect(installed).toBe('');

    // The double's trade server for this terminal; the double stands in for MetaTrader5 (the only thing on PYTHONPATH).
    const terminalDir = path.join(work, 'terminal');
    fs.mkdirSync(terminalDir, { recursive: true });
    fs.writeFileSync(path.join(terminalDir, 'market.json'), JSON.stringify(mt5DoubleMarket()));
    bridge = new ServiceProcess({
      kind: 'external',
      program: [path.join(dir, '.venv', 'bin', 'es-mt5-bridge')],
      name: `mt5-package-bridge-${randomInt(1e9)}`,
      args: ['--config', config],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        LOCALAPPDATA: path.join(work, 'appdata'),
        PYTHONPATH: path.join(MT5_BRIDGE_DIR, 'tests', 'double'),
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONUNBUFFERED: '1',
        MT5_DOUBLE_DIR: terminalDir,
      },
      ready: async (p) => p.jsonLines('stderr').some((l) => l.event === 'hello'),
      readyTimeoutMs: 30_000,
    });
    await bridge.start();
    const started = bridge.jsonLines('stderr').find((l) => l.event === 'started')!;
    expect(started).toMatchObject({ version, url: stack.ingress.url });

    // The account's page, reloaded as the owner would, shows the bridge online with the package's version.
    await waitFor(
      'the account page to show the bridge online',
      async () => {
        await page.reload();
        const text = await page.locator('main').innerText({ timeout: UI_TIMEOUT_MS });
        return text.includes('Bridge online') && text.includes(`version ${version}`) && text.includes(`This account's bridge is ${version}.`)
          ? true
          : undefined;
      },
      UI_TIMEOUT_MS,
    );
    await page.screenshot({ path: path.join(work, 'mt5-package-online.png') });

    // The first hello unlocked the account; the owner's webhook secret and API token (made as the operator would).
    await page.getByText('Locked for trading until its bridge says hello').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    const { secret } = await adminCliJson<{ secret: string }>(['secret', 'create', '--owner', owner, '--accounts', account.id], stack.config.redis.url);
    const { token } = await adminCliJson<{ token: string }>(['token', 'create', '--owner', owner, '--accounts', account.id], stack.config.redis.url);
    const sent = await post(`${stack.ingress.url}/webhook/custom/${account.id}`, { secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    expect(sent.status).toBe(202);
    const reported = await pollUntilReported(stack.ingress.url, sent.body.signalId, token, 1, 30_000);
    expect(reported.accounts[0]).toMatchObject({ accountId: account.id, outcome: 'filled' });
    const server = JSON.parse(fs.readFileSync(path.join(terminalDir, 'server.json'), 'utf8')) as {
      positions: { ticket: number; symbol: string; volume: number }[];
    };
    expect(server.positions).toEqual([expect.objectContaining({ symbol: 'EURUSD', volume: 0.1 })]);
    expect(String(reported.accounts[0].ticket)).toBe(String(server.positions[0]!.ticket));
  }, 150_000);
});
