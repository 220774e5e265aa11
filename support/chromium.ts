import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium, headless, as the browser tests and the dashboard bench drive it (playwright-core, no download). */
export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
}
