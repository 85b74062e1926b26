#!/usr/bin/env node
// Takes the screenshots of the inspector under docs/inspector/ (PNG, 1400x1040): the in-page scenario coloured
// by class (a unit hovered) and by owner after a producer was killed and reaped, the same heap gone idle, and
// the demo workload of `pnpm inspect` streamed from Node. Run after `pnpm build`:
//   node apps/inspector/scripts/screenshots.mjs
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveInspectorPage } from '../dist/node/index.js';

const out = fileURLToPath(new URL('../../../docs/inspector/', import.meta.url));
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath: process.env.PADDOCK_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });

/** Opens `url` (a `steps=` script that ends in `done`), waits for it, and saves the page as `name`. */
async function shoot(page, url, name) {
  await page.goto(url);
  await page.waitForFunction(() => window.__done !== undefined, null, { timeout: 60_000, polling: 200 });
  const done = await page.evaluate(() => window.__done);
  if (done.error) throw new Error(done.error);
  await page.screenshot({ path: `${out}${name}` });
  console.log(`docs/inspector/${name}`);
}

const page = await browser.newPage({ viewport: { width: 1400, height: 1040 } });
const server = await serveInspectorPage();
try {
  await shoot(page, `${server.url}?steps=start,wait:4000,pause,kill,until:takeover,start,wait:2500,hover:slab,done`, 'in-page-by-class.png');
  await shoot(page, `${server.url}?steps=start,wait:4000,pause,kill,until:takeover,start,wait:2500,owner,hover:large,done`, 'in-page-by-owner.png');
  await shoot(page, `${server.url}?steps=start,wait:4000,idle,wait:4000,hover:decommitted,done`, 'in-page-idle.png');
} finally {
  await server.close();
}

// The demo workload, streamed from a Node process: past its first kill and the producer that joins after it.
const demo = spawn(process.execPath, [fileURLToPath(new URL('../dist/node/inspect.js', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const url = await new Promise((resolve, reject) => {
    demo.stdout.on('data', (d) => {
      const m = /http:\/\/\S+/.exec(String(d));
      if (m) resolve(m[0]);
    });
    demo.once('exit', () => reject(new Error('the demo workload ended before it printed its URL')));
  });
  await shoot(page, `${url}&steps=wait:15500,hover:slab,done`, 'node-demo.png');
} finally {
  demo.kill();
  await browser.close();
}
