// Runs a page in real Firefox (Debian's Firefox ESR, driven by puppeteer-core over WebDriver BiDi), as
// runPage in browser.ts does in Chromium: the page is served cross-origin isolated and reports through
// `window.__done`; a page error or a console error fails the run with that error rather than a time-out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Opens `url` in headless Firefox ESR and waits for the page to set `window.__done` (its report). */
export async function runFirefoxPage<T>(url: string, timeoutMs: number): Promise<T> {
  const { default: puppeteer } = await import('puppeteer-core');
  const profile = mkdtempSync(join(tmpdir(), 'paddock-firefox-'));
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: process.env.PADDOCK_FIREFOX ?? '/usr/bin/firefox-esr',
    headless: true,
    userDataDir: profile,
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`page error: ${(e as Error).message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
    });
    await page.goto(url);
    const step = () => page.evaluate(() => (window as unknown as { __step?: string }).__step);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = await page.evaluate(() => (window as unknown as { __done?: unknown }).__done);
      if (done !== undefined) return done as T;
      if (errors.length > 0) throw new Error(`${errors.join('\n')}\nthe page's last step: ${await step()}`);
      if (Date.now() > deadline) throw new Error(`the page did not finish in ${timeoutMs} ms; its last step: ${await step()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
