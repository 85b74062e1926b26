// Runs a page in real Chromium (Debian's, driven by playwright-core): the page's and its workers' scripts are
// bundled with esbuild (module workers do not see a page's import map), served from 127.0.0.1 with the
// cross-origin isolation headers a SharedArrayBuffer needs, and the page reports through `window.__done`.
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

/** Where Debian installs Chromium (`apt-get install chromium`). */
export const CHROMIUM = process.env.PADDOCK_CHROMIUM ?? '/usr/bin/chromium';

/** Whether the browser tests can run here, and must: CI installs Chromium and sets PADDOCK_BROWSER=required. */
export function browserAvailable(): boolean {
  const found = existsSync(CHROMIUM);
  if (!found && process.env.PADDOCK_BROWSER === 'required') {
    throw new Error(`PADDOCK_BROWSER=required but there is no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  }
  return found;
}

/** Bundles each entry (name -> source file) into a fresh folder; returns the folder. */
export async function bundle(entries: Record<string, string>): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'paddock-browser-'));
  await build({ entryPoints: entries, outdir: out, bundle: true, format: 'esm', platform: 'browser', target: 'chrome120', logLevel: 'error' });
  return out;
}

/** Serves `dir` on 127.0.0.1 with COOP/COEP on every response, and a page that loads `page.js`. */
export async function serve(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0]!.replace(/^\/+/, '') || 'index.html';
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cache-Control': 'no-store',
    };
    if (name === 'index.html') {
      res.writeHead(200, { ...headers, 'Content-Type': 'text/html' });
      res.end('<!doctype html><meta charset="utf-8"><title>paddock</title><script type="module" src="/page.js"></script>');
      return;
    }
    if (name === 'favicon.ico') {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    const file = join(dir, name);
    if (name.includes('..') || !existsSync(file)) {
      res.writeHead(404, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': 'text/javascript' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Opens `url` in headless Chromium and waits for the page to set `window.__done` (its report), failing with the
 * page's own error (an uncaught exception, a console error) rather than a time-out.
 */
export async function runPage<T>(url: string, timeoutMs: number): Promise<T> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'paddock-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
    });
    await page.goto(url);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = await page.evaluate(() => (window as unknown as { __done?: unknown }).__done);
      if (done !== undefined) return done as T;
      if (errors.length > 0) throw new Error(errors.join('\n'));
      if (Date.now() > deadline) throw new Error(`the page did not finish in ${timeoutMs} ms; its last step: ${await page.evaluate(() => (window as unknown as { __step?: string }).__step)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
