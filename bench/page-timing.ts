/**
 * Times a dashboard page in the browser from navigation start (performance.timeOrigin) to the frame that first shows
 * a row of a table: an init script watches the DOM, so neither playwright's polling nor its round trips are counted.
 */
import type { Page } from 'playwright-core';

/** Installed before any script of the page runs; stamps performance.now() when the row appears, then after its frame. */
export function firstRowProbe(selector: string): string {
  return `(() => {
    const t = {};
    window.__firstRow = t;
    const seen = new MutationObserver(() => {
      if (t.inDom !== undefined || !document.querySelector(${JSON.stringify(selector)})) return;
      t.inDom = performance.now();
      seen.disconnect();
      requestAnimationFrame(() => setTimeout(() => (t.shown = performance.now()), 0));
    });
    seen.observe(document, { childList: true, subtree: true });
  })();`;
}

export interface PageTiming {
  /** Navigation start → the frame after the first row entered the DOM (the figure the goal is about). */
  firstRowShownMs: number;
  firstRowInDomMs: number;
  domContentLoadedMs: number;
  rows: number;
  /** The page's API requests: start and end, from navigation start. */
  api: { path: string; startMs: number; endMs: number }[];
}

/** Runs the navigation, waits (with a deadline) until the row is visible and its frame stamped, and reads the times. */
export async function timeFirstRow(page: Page, selector: string, navigate: () => Promise<unknown>, timeoutMs = 30_000): Promise<PageTiming> {
  await navigate();
  await page.locator(selector).first().waitFor({ state: 'visible', timeout: timeoutMs });
  // Strings, not functions: they run in the page, and the bench is compiled without the DOM's types.
  await page.waitForFunction('window.__firstRow.shown !== undefined', undefined, { timeout: timeoutMs });
  return (await page.evaluate(`(() => {
    const t = window.__firstRow;
    const nav = performance.getEntriesByType('navigation')[0];
    const api = performance
      .getEntriesByType('resource')
      .filter((e) => new URL(e.name).pathname.startsWith('/v1/'))
      .map((e) => ({ path: new URL(e.name).pathname, startMs: Math.round(e.startTime), endMs: Math.round(e.responseEnd) }));
    return {
      firstRowShownMs: t.shown,
      firstRowInDomMs: t.inDom,
      domContentLoadedMs: nav.domContentLoadedEventEnd,
      rows: document.querySelectorAll(${JSON.stringify(selector)}).length,
      api,
    };
  })()`)) as PageTiming;
}
