import type { Browser, Page } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import { launchChromium } from '../../support/chromium';

/**
 * A Chromium page on the dashboard as the browser tests watch it: every CSP violation, page error, console error,
 * failed response (unless `allowed` says so) and request to another host lands in `problems`, which a test expects
 * empty. `cookie` ("name=value"): an owner's session, already signed in.
 */
export async function dashboardPage(
  ingressUrl: string,
  options: { cookie?: string; allowed?: RegExp } = {},
): Promise<{ browser: Browser; page: Page; problems: string[] }> {
  const problems: string[] = [];
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  if (options.cookie) {
    const eq = options.cookie.indexOf('=');
    await context.addCookies([{ name: options.cookie.slice(0, eq), value: options.cookie.slice(eq + 1), url: ingressUrl }]);
  }
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || '(inline)')));`,
  });
  context.on('request', (r) => {
    if (!r.url().startsWith(ingressUrl) && !r.url().startsWith('data:')) problems.push(`request to another host: ${r.url()}`);
  });
  const page = await context.newPage();
  const allowed = (text: string) => options.allowed?.test(text) ?? false;
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('response', (res) => {
    const line = `HTTP ${res.status()}: ${res.url()}`;
    if (res.status() >= 400 && !allowed(line)) problems.push(line);
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !allowed(msg.text())) problems.push(`console error: ${msg.text()}`);
  });
  return { browser, page, problems };
}

/** axe on the page as it is now: the serious and critical violations, named (a test expects none). */
export async function seriousViolations(page: Page, name: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${name}: ${v.id} (${v.impact}) ${v.help}`);
}
