// One headless Chromium page on a local HTML report, for the tests that read a report's layout
// from the rendered page (compare, upgrade plan, flags prove). The page must be self-contained:
// every request it makes that is not file: is collected, for the test to assert none.
import { rmSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { tempDir } from './tmp.ts';

export async function withPage<T>(
  file: string,
  fn: (page: Page, requests: string[]) => Promise<T>,
  viewport = { width: 1400, height: 900 },
): Promise<T> {
  const profile = tempDir('hardwire-chromium-');
  let browser: BrowserContext | undefined;
  try {
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      viewport,
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
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith('file:')) requests.push(req.url());
    });
    await page.goto(`file://${file}`);
    return await fn(page, requests);
  } finally {
    await browser?.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
