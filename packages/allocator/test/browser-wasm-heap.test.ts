// A wasm module and JS Web Workers in one heap, in a real browser (headless Chromium; block-exchange-run.ts
// says what runs): the page and 4 module Web Workers, each running the block-exchange module over the heap's
// shared WebAssembly.Memory, exchange 10,000 blocks each from wasm to JS and from JS to wasm, for every backend.
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { compileBlockExchange } from './block-exchange-module.js';
import { expectExchangeHeld } from './block-exchange-expect.js';
import type { ExchangeReport } from './block-exchange-run.js';
import { browserAvailable, bundle, runPage, serve } from '../../../tools/test-utils/browser.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

describe.skipIf(!browserAvailable())('in Chromium: a wasm module and JS Web Workers share one heap', () => {
  let dir = '';
  let server: Awaited<ReturnType<typeof serve>> | null = null;
  beforeAll(async () => {
    dir = await bundle({ page: here('./browser/wasm-page.mjs'), 'wasm-agent': here('./browser/wasm-agent.mjs') });
    writeFileSync(join(dir, 'block-exchange.wasm'), await compileBlockExchange());
    server = await serve(dir);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(['pool_arena', 'pool_classic', 'pool_global'])('%s: 4 agents x 10000 blocks, wasm to JS and JS to wasm', async (backend) => {
    const r = await runPage<ExchangeReport & { error?: string }>(`${server!.url}?backend=${backend}`, 60_000);
    if (r.error !== undefined) throw new Error(`the page failed: ${r.error}`);
    expectExchangeHeld(r, backend);
  }, 90_000);
});
