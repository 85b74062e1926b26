// Runs a page in real Chromium (Debian's, driven by playwright-core): the page's and its workers' scripts are
// bundled with esbuild (module workers do not see a page's import map), served from 127.0.0.1 with the
// cross-origin isolation headers a SharedArrayBuffer needs, and the page reports through `window.__done`.
// A browser suite (cases registered on a PageSuite, see suite.ts) comes back as one vitest case per case that
// ran in the page, under `in Chromium`, which is how `pnpm test` counts them.
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { runFirefoxPage } from './firefox.js';
import type { CaseResult } from './suite.js';

/** Where Debian installs Chromium (`apt-get install chromium`). */
export const CHROMIUM = process.env.PADDOCK_CHROMIUM ?? '/usr/bin/chromium';
/** Where Debian installs Firefox ESR (`apt-get install firefox-esr`), driven by puppeteer-core over WebDriver BiDi. */
export const FIREFOX = process.env.PADDOCK_FIREFOX ?? '/usr/bin/firefox-esr';

/** The browsers a page runs in; a suite's cases are counted under `in Chromium` or `in Firefox`. */
export type BrowserName = 'Chromium' | 'Firefox';

/**
 * Whether `browser` (Chromium unless named) can run here, and must: CI installs Chromium and Firefox ESR and
 * sets PADDOCK_BROWSER=required.
 */
export function browserAvailable(browser: BrowserName = 'Chromium'): boolean {
  const path = browser === 'Chromium' ? CHROMIUM : FIREFOX;
  const found = existsSync(path);
  if (!found && process.env.PADDOCK_BROWSER === 'required') {
    throw new Error(`PADDOCK_BROWSER=required but there is no ${browser} at ${path} (apt-get install ${browser === 'Chromium' ? 'chromium' : 'firefox-esr'})`);
  }
  return found;
}

/**
 * Bundles each entry (name -> source file) into `into` (default: a fresh folder); returns the folder.
 * `conditions` are export conditions to resolve imports under (a backend's, for its build of the allocator).
 */
export async function bundle(entries: Record<string, string>, { into, conditions = [] }: { into?: string; conditions?: string[] } = {}): Promise<string> {
  const out = into ?? mkdtempSync(join(tmpdir(), 'paddock-browser-'));
  await build({ entryPoints: entries, outdir: out, bundle: true, format: 'esm', platform: 'browser', target: 'chrome120', logLevel: 'error', conditions });
  return out;
}

/** How `serve` labels a file, by its extension (anything else is served as a script). */
const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };

/**
 * Serves `dir` on 127.0.0.1 with COOP/COEP on every response, and, unless `dir` has its own index.html (a
 * bundler's output), a page that loads `page.js`.
 */
export async function serve(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0]!.replace(/^\/+/, '') || 'index.html';
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cache-Control': 'no-store',
    };
    if (name === 'index.html' && !existsSync(join(dir, name))) {
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
    res.writeHead(200, { ...headers, 'Content-Type': CONTENT_TYPES[extname(name)] ?? 'text/javascript' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a caller may add to a page run: more Chromium flags, and a step before the page opens. */
export interface PageOptions {
  args?: string[];
  /** Called with the page before it opens `url` (to expose a function to it, or open a CDP session). */
  before?: (page: Page) => Promise<void>;
}

/**
 * Opens `url` in headless Chromium and waits for the page to set `window.__done` (its report), failing with the
 * page's own error (an uncaught exception, a console error) rather than a time-out.
 */
export async function runPage<T>(url: string, timeoutMs: number, options: PageOptions = {}): Promise<T> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'paddock-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...(options.args ?? [])],
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
    });
    await options.before?.(page);
    await page.goto(url);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = await page.evaluate(() => (window as unknown as { __done?: unknown }).__done);
      if (done !== undefined) return done as T;
      if (errors.length > 0) throw new Error(`${errors.join('\n')}\nthe page's last step: ${await page.evaluate(() => (window as unknown as { __step?: string }).__step)}`);
      if (Date.now() > deadline) throw new Error(`the page did not finish in ${timeoutMs} ms; its last step: ${await page.evaluate(() => (window as unknown as { __step?: string }).__step)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** What a browser suite's page reports in `window.__done` (see PageSuite in suite.ts). */
export interface SuiteReport {
  /** Set when the page failed outside any case (its cases did not all run). */
  error?: string;
  registered: number;
  results: CaseResult[];
  crossOriginIsolated: boolean;
}

/**
 * One bundle of a browser suite: `page` (the page, `page.js`) or other entries, bundled under `conditions`.
 */
export interface SuiteBuild {
  entries: Record<string, string>;
  conditions?: string[];
}

/**
 * Runs a browser suite in one Chromium (or Firefox): bundles every build into one folder, serves it, runs the page and
 * returns its report with the folder (the stack of a failure points into it). Never throws: a failure to
 * bundle or a page that did not finish comes back as the report's `error`.
 */
export async function runSuitePage(builds: SuiteBuild[], timeoutMs: number, browser: BrowserName = 'Chromium'): Promise<{ report: SuiteReport; dir: string; ms: number }> {
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'paddock-browser-'));
  let report: SuiteReport;
  try {
    await Promise.all(builds.map((b) => bundle(b.entries, { into: dir, conditions: b.conditions })));
    const server = await serve(dir);
    try {
      report = browser === 'Chromium' ? await runPage<SuiteReport>(server.url, timeoutMs) : await runFirefoxPage<SuiteReport>(server.url, timeoutMs);
    } finally {
      await server.close();
    }
  } catch (err) {
    report = { error: (err as Error).stack ?? String(err), registered: 0, results: [], crossOriginIsolated: false };
  }
  return { report, dir, ms: Date.now() - t0 };
}

/** A failure's message, with the bundled source line each frame of its stack in `dir` points at. */
function explain(error: string, dir: string): string {
  const lines = new Map<string, string[]>();
  const frames = [...error.matchAll(/\/([\w.-]+\.js):(\d+):\d+/g)].slice(0, 4).map(([, file, line]) => {
    if (!lines.has(file!)) lines.set(file!, existsSync(join(dir, file!)) ? readFileSync(join(dir, file!), 'utf8').split('\n') : []);
    const text = lines.get(file!)![Number(line) - 1]?.trim();
    return text ? `  ${file}:${line}: ${text}` : null;
  });
  const shown = frames.filter((f) => f !== null);
  return shown.length > 0 ? `${error}\nin the bundle:\n${shown.join('\n')}` : error;
}

/**
 * Registers, under `in <where>` (`in Chromium` by default; `in Firefox`, `in Node 22`, `in Bun`...),
 * one vitest case per case the page or runtime ran (passing or failing as it did there, with its error;
 * `pnpm test` counts these apart, by that first title), and beside them one that fails if the page was not
 * isolated or did not run every case it registered. `run` is null where there is no such browser or runtime
 * (the suite skips). Removes the bundle after the file.
 */
export function registerSuiteResults(title: string, run: { report: SuiteReport; dir: string; ms: number } | null, where = 'Chromium'): void {
  if (run === null) {
    describe(`in ${where}`, () => it.skip(title, () => {}));
    return;
  }
  afterAll(() => rmSync(run.dir, { recursive: true, force: true }));
  const { report, dir } = run;
  describe(`the ${where} suite: ${title}`, () => {
    const isolated = where === 'Chromium' || where === 'Firefox' ? 'the page is cross-origin isolated' : `${where} has SharedArrayBuffer`;
    it(`${isolated} and ran every case it registered (${report.results.length} of ${report.registered}, ${(run.ms / 1000).toFixed(1)} s)`, () => {
      if (report.error) throw new Error(`the page failed outside its cases: ${explain(report.error, dir)}`);
      expect(report.crossOriginIsolated).toBe(true);
      expect(report.results.length).toBe(report.registered);
    });
  });
  describe(`in ${where}`, () => {
    describe(title, () => {
      for (const r of report.results) {
        it(r.name, () => {
          if (!r.ok) throw new Error(`in ${where}: ${explain(r.error ?? 'failed', dir)}`);
          // Figures a case returned, and the time of every case that took a second or more, for the log.
          if (r.note !== undefined || r.ms >= 1000) console.log(`in ${where}, ${r.name}${r.note ? `: ${r.note}` : ''} (${(r.ms / 1000).toFixed(1)} s)`);
        });
      }
    });
  });
}
