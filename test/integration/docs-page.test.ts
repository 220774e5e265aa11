import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DOCS_CSP } from '../../src/http/routes/docs';
import { testEnv } from '../../support/env';
import { get, startStack, type Stack } from '../helpers/stack';

/**
 * GET /docs: the API reference page, rendered from /openapi.json in a real headless Chromium (Debian's `chromium`,
 * which scripts/test.sh installs), against the real ingress. The page must load nothing from any other host, must
 * break none of its own Content-Security-Policy, and must show the three operations. A screenshot is left in the
 * run directory (`.run/test/<run>/docs-page.png`) for a human to look at.
 */

const CHROMIUM = '/usr/bin/chromium';
const OPERATIONS = [
  { method: 'POST', path: '/webhook/custom', summary: 'Send a signal to every account linked to the webhook secret' },
  { method: 'POST', path: '/webhook/custom/{accountId}', summary: 'Send a signal to one trading account' },
  { method: 'GET', path: '/v1/signals/{signalId}', summary: 'Read the per-account outcome of an opening signal' },
];
const RENDER_TIMEOUT_MS = 30_000;

/** Visible text as a reader sees it: the renderer breaks long paths with zero-width spaces. */
const normalize = (text: string) =>
  text
    .replace(/[\u200b\u00ad]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

describe('GET /docs', () => {
  let stack: Stack;
  let browser: Browser | undefined;

  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('when /docs and its assets are fetched, then the page is a small static HTML with a tight CSP and the assets are long-cached', async () => {
    const page = await get(`${stack.ingress.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8$/i);
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.text).toContain('<title>External Signals API</title>');
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)|<style|\sstyle=|https?:\/\//); // no inline script or style, no absolute URL

    const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.map((a) => a.replace(/\?.*$/, '')).sort()).toEqual(
      ['/docs/assets/docs.css', '/docs/assets/docs.js', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css'].sort(),
    );
    for (const asset of assets) {
      const res = await get(`${stack.ingress.url}${asset}`);
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type')).toBe(asset.includes('.js?') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const bundle = await get(`${stack.ingress.url}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.text).toBe(readFileSync(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'), 'utf8'));
  });

  test('when /docs is opened in Chromium, then it renders the three operations from /openapi.json, loading nothing from any other host', async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // launch() gives the browser a fresh user-data dir of its own (a new temp dir, removed on close).
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    const problems: string[] = [];
    context.on('request', (request) => requests.push(request.url()));
    // A request the CSP blocks never reaches the network: the page reports it as a violation instead.
    // (Browser code as text: the tests compile without the DOM library.)
    await context.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) => {
        console.error('CSP violation: ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || '(inline)'));
      });`,
    });
    const page: Page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });
    page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
    page.on('response', (res) => {
      if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
    });

    const screenshot = path.join(testEnv().runDir, 'docs-page.png');
    const response = await page.goto(`${stack.ingress.url}/docs`, { waitUntil: 'domcontentloaded' });
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe('External Signals API');
    try {
      for (const op of OPERATIONS) {
        // Wait on the condition itself: the operation's summary is visible, in a row that also shows its method and path.
        const row = page.locator('.opblock-summary').filter({ has: page.getByText(op.summary, { exact: true }) });
        await row.waitFor({ state: 'visible', timeout: RENDER_TIMEOUT_MS });
        expect(normalize(await row.innerText())).toContain(`${op.method} ${op.path} ${op.summary}`);
      }
      expect(
        await page
          .getByRole('heading', { name: /External Signals API/ })
          .first()
          .isVisible(),
      ).toBe(true);
    } finally {
      await page.screenshot({ path: screenshot, fullPage: true });
    }
    // The detail view renders under the same CSP too (highlighted examples, schemas): open one operation.
    const first = page.locator('.opblock').filter({ has: page.getByText(OPERATIONS[0]!.summary, { exact: true }) });
    await first.getByText(OPERATIONS[0]!.summary, { exact: true }).click();
    await first.getByRole('heading', { name: 'Responses' }).waitFor({ state: 'visible', timeout: RENDER_TIMEOUT_MS });
    await first.getByText('Accepted for asynchronous execution.').first().waitFor({ state: 'visible', timeout: RENDER_TIMEOUT_MS });

    const origin = new URL(stack.ingress.url).origin;
    const offHost = requests.filter((url) => !/^(data|blob):/.test(url) && new URL(url).origin !== origin);
    expect(offHost).toEqual([]);
    expect(requests).toEqual(expect.arrayContaining([`${origin}/docs`, `${origin}/openapi.json`]));
    expect(problems).toEqual([]);
  });
});
