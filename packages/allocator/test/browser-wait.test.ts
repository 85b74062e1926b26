// The waits in a real browser (headless Chromium): a window's main thread may not block, so `heap.wait` there
// is refused with its own code before anything changes, and `heap.waitAsync` does the wait's flush and drain;
// a Web Worker may block; the idle tick runs on both.
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { browserAvailable, bundle, runPage, serve } from '../../../tools/test-utils/browser.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface WaitReport {
  error?: string;
  refused: { name: string; code: string; message: string } | null;
  chainedBefore: number;
  chainedAfterRefusal: number;
  chainedWhileWaiting: number;
  woke: string;
  drainedAfterWake: number;
  cachedAfterWake: number;
  liveAfterWake: number;
  workerIdle: { waited: string; cachedBeforeIdle: number; cachedAfterIdle: number; liveBytes: number };
  cachedBeforeIdle: number;
  cachedAfterIdle: number;
}

describe.skipIf(!browserAvailable())('in Chromium', () => {
  it('wait is refused on the main thread; waitAsync flushes and drains; a worker blocks; the idle tick runs on both', async () => {
    const dir = await bundle({ page: here('./browser/wait-page.mjs'), 'wait-agent': here('./browser/wait-agent.mjs') });
    temps.push(dir);
    const server = await serve(dir);
    try {
      const r = await runPage<WaitReport>(server.url, 30_000);
      expect(r.error).toBeUndefined();
      expect(r.refused).toMatchObject({ name: 'HeapError', code: 'CANNOT_BLOCK' });
      expect(r.refused!.message).toMatch(/waitAsync/);
      expect(r.chainedBefore).toBeGreaterThan(0);
      expect(r.chainedAfterRefusal).toBe(r.chainedBefore); // refused before the flush
      expect(r.chainedWhileWaiting).toBe(0); // waitAsync flushed first
      expect(r.woke).toBe('ok');
      expect(r.drainedAfterWake).toBe(0);
      expect(r.cachedAfterWake).toBeGreaterThan(0);
      expect(r.liveAfterWake).toBe(r.cachedAfterWake); // reclaimed: onto its cache stack, the rest to its slabs
      expect(r.workerIdle.waited).toBe('timed-out');
      expect(r.workerIdle.cachedBeforeIdle).toBeGreaterThan(0);
      expect(r.workerIdle.cachedAfterIdle).toBe(0);
      expect(r.cachedBeforeIdle).toBeGreaterThan(0);
      expect(r.cachedAfterIdle).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);
});
