// The example page built by Vite and by esbuild, with no shims (no Node polyfills, no aliases), each for a
// backend chosen by `use=` through the allocator's export conditions, then run in headless Chromium: the page
// and its module Web Workers must all report that backend, every message must arrive intact and be freed, and
// the heap must pass its checks at the end.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserAvailable, runPage, serve } from '../../../tools/test-utils/browser.js';
import { backendConditions, buildWithEsbuild, buildWithVite, readUse } from '../scripts/bundlers.mjs';

interface PageReport {
  error?: string;
  crossOriginIsolated: boolean;
  backend: string;
  pageReturn: string;
  workerBackends: string[];
  messages: number;
  /** What the channel counted received. */
  viaChannel: number;
  bytes: number;
  held: number;
  intact: boolean;
  freed: number;
  liveBytesAtEnd: number;
  samples: Array<{ step: string; bufferBytes: number | null; committedBytes: number | null; liveBytes: number | null }>;
}

const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The text of every script a build wrote. */
function scriptsOf(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return scriptsOf(p);
    return name.endsWith('.js') ? [readFileSync(p, 'utf8')] : [];
  });
}

describe('use= picks the allocator bundle', () => {
  it('a backend alone is its export condition; with instrumentation, dist/index.js (no condition)', () => {
    expect(backendConditions(readUse([], {}))).toEqual(['paddock-pool-arena']);
    expect(backendConditions(readUse(['use=pool_classic'], {}))).toEqual(['paddock-pool-classic']);
    expect(backendConditions(readUse([], { PADDOCK_USE: 'pool_global' }))).toEqual(['paddock-pool-global']);
    expect(backendConditions(readUse(['use=pool_arena,checked'], {}))).toEqual([]);
    expect(() => readUse(['use=pool_classic,pool_global'], {})).toThrow(/more than one backend/);
  });
});

const builds = [
  { bundler: 'vite', use: 'pool_classic', build: buildWithVite },
  { bundler: 'esbuild', use: 'pool_global', build: buildWithEsbuild },
] as const;

describe.each(builds)('$bundler, use=$use', ({ bundler, use, build }) => {
  const outDir = mkdtempSync(join(tmpdir(), `paddock-web-${bundler}-`));
  temps.push(outDir);

  it('builds without shims', async () => {
    const r = await build(readUse([`use=${use}`], {}), outDir);
    console.log(`${bundler}: ${r.ms} ms, ${r.scripts} scripts, ${(r.bytes / 1024).toFixed(1)} KiB (${(r.gzipBytes / 1024).toFixed(1)} KiB gzipped), conditions ${r.conditions}`);
    expect(r.conditions).toEqual([`paddock-${use.replace('_', '-')}`]);
    const scripts = scriptsOf(outDir);
    expect(scripts.length).toBe(2); // the page's bundle and the worker's
    for (const text of scripts) {
      expect(text).not.toMatch(/\bfrom\s*["'`]node:|\bimport\s*\(\s*["'`]node:|__vite-browser-external/);
    }
  });

  it.skipIf(!browserAvailable())('runs in Chromium: page and workers on that backend, every message intact and freed', async () => {
    const server = await serve(outDir);
    try {
      const r = await runPage<PageReport>(`${server.url}?mib=8`, 45_000);
      expect(r.error).toBeUndefined();
      expect(r.crossOriginIsolated).toBe(true);
      expect(r.backend).toBe(use);
      expect(r.workerBackends).toEqual([use, use, use]);
      expect(r.pageReturn).toBe('none');
      expect(r.bytes).toBeGreaterThanOrEqual(16 << 20);
      expect(r.intact).toBe(true);
      expect([r.held, r.freed]).toEqual([r.messages, r.messages]);
      expect(r.viaChannel).toBe(r.messages); // every message went through the channel
      expect(r.liveBytesAtEnd).toBe(0);
      expect(r.samples.map((s) => s.step)).toEqual(['before', 'holding', 'idle', 'dropped']);
      const [, holding, idle] = r.samples;
      expect(holding!.committedBytes).toBeGreaterThanOrEqual(r.bytes);
      expect(idle!.liveBytes).toBe(0);
      expect(idle!.bufferBytes).toBe(holding!.bufferBytes); // a SharedArrayBuffer never shrinks
    } finally {
      await server.close();
    }
  }, 60_000);
});
